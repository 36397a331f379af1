"""The HTML report in a real headless Chromium (Debian ``chromium``; CI installs it).

Driven over the DevTools pipe (stdlib only, see ``_chromium.py``): no console errors or
uncaught exceptions (a CSP violation would show here too), every in-page link resolves,
the filters and in-page trace pages work, hostile trace text did not execute, and the
screenshot is not blank. ``chromium --dump-dom`` double-checks the title and script count.
Skipped with a message when no Chromium is found (set MASTKIT_CHROMIUM to point at one).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mastkit.report import build_report_data, render_html

from ._build import build_store
from ._chromium import Browser, dump_dom, find_chromium, png_colours

EXE = find_chromium()
pytestmark = pytest.mark.skipif(
    EXE is None,
    reason="headless browser test needs Chromium: apt-get install -y chromium (or set MASTKIT_CHROMIUM)",
)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Browser, Path, str]]:
    tmp = tmp_path_factory.mktemp("browser")
    store = build_store(tmp / "m.db")
    html = render_html(build_report_data(store))
    store.close()
    path = tmp / "report.html"
    path.write_text(html, encoding="utf-8")
    title = html.split("<title>", 1)[1].split("</title>", 1)[0]
    assert EXE is not None
    with Browser(EXE) as browser:
        browser.open(path.as_uri())
        browser.pump(0.5)
        yield browser, path, title


def test_no_console_errors_or_exceptions(page: tuple[Browser, Path, str]) -> None:
    browser, _, _ = page
    assert browser.problems() == []


def test_injected_script_did_not_run(page: tuple[Browser, Path, str]) -> None:
    browser, _, title = page
    assert browser.evaluate("document.title") == title.replace("&#34;", '"')
    assert "pwned" not in browser.evaluate("document.title")
    assert browser.evaluate("document.scripts.length") == 1
    assert browser.evaluate("document.images.length") == 0
    assert browser.evaluate("document.querySelectorAll('style').length") == 1
    # the hostile text is there, as text
    assert browser.evaluate("document.body.textContent.includes(\"<script>document.title='pwned'</script>\")")


def test_every_fragment_link_resolves(page: tuple[Browser, Path, str]) -> None:
    browser, _, _ = page
    n_links = browser.evaluate("document.querySelectorAll('a[href]').length")
    dangling = browser.evaluate(
        "Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'))"
        ".filter(h => !h.startsWith('#') || !document.getElementById(decodeURIComponent(h.slice(1))))"
    )
    assert n_links > 20 and dangling == []


def test_trace_pages_open_on_fragment(page: tuple[Browser, Path, str]) -> None:
    browser, _, _ = page
    visible = "Array.from(document.querySelectorAll('section.trace')).filter(s => getComputedStyle(s).display !== 'none').map(s => s.id)"
    assert browser.evaluate(visible) == []
    browser.evaluate("location.hash = '#trace-t1'; new Promise(r => setTimeout(r, 100))")
    assert browser.evaluate(visible) == ["trace-t1"]
    # an evidence link to an event opens the trace holding it
    browser.evaluate("location.hash = '#trace-t2-e50'; new Promise(r => setTimeout(r, 100))")
    assert browser.evaluate(visible) == ["trace-t2"]
    assert browser.evaluate("document.getElementById('trace-t2-e50').classList.contains('blamed')")
    assert browser.problems() == []


def test_filters(page: tuple[Browser, Path, str]) -> None:
    browser, _, _ = page
    count = "Array.from(document.querySelectorAll('#trace-table tbody tr')).filter(r => !r.hidden).length"

    def select(field: str, value: str) -> None:
        browser.evaluate(
            f"(() => {{ const s = document.getElementById('f-{field}'); s.value = {value!r}; "
            "s.dispatchEvent(new Event('change')); })()"
        )

    assert browser.evaluate(count) == 6
    select("mode", "FM-1.3")
    assert browser.evaluate(count) == 2
    select("model", "llama")
    assert browser.evaluate(count) == 0
    select("mode", "")
    assert browser.evaluate(count) == 3
    select("outcome", "success")
    assert browser.evaluate(count) == 2
    select("model", "")
    select("outcome", "")
    select("mode", "__none__")
    assert browser.evaluate(count) == 2  # t4, t5
    select("mode", "")
    # free text search also looks into the trace's timeline ("claims done" is only in t1's events)
    browser.evaluate(
        "(() => { const i = document.getElementById('f-text'); i.value = 'claims done'; "
        "i.dispatchEvent(new Event('input')); return new Promise(r => setTimeout(r, 400)); })()"
    )
    assert browser.evaluate(count) == 1
    assert browser.evaluate("document.getElementById('f-count').textContent") == "1 of 6 traces"
    assert browser.problems() == []


def test_screenshot_not_blank(page: tuple[Browser, Path, str], tmp_path: Path) -> None:
    browser, _, _ = page
    browser.evaluate("location.hash = '#top'; new Promise(r => setTimeout(r, 100))")
    png = browser.screenshot()
    (tmp_path / "report.png").write_bytes(png)
    assert len(png) > 5000
    assert len(png_colours(png)) > 8, "screenshot is (nearly) one colour"


def test_dump_dom(page: tuple[Browser, Path, str]) -> None:
    _, path, title = page
    assert EXE is not None
    dom = dump_dom(EXE, path.as_uri())
    head = dom.split("</head>", 1)[0]
    assert head.count("<title>") == 1 and f"<title>{title}</title>" in head.replace('"', "&#34;")
    assert "pwned" not in head
    assert dom.count("<script") == 1  # only ours; hostile ones stayed text
    assert "<img" not in dom and "<textarea" not in dom
