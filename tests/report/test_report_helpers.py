"""The report builder's small helpers with exact, hand-worked expected values (see
docs/mutation.md): anchors, truncation, which events are shown, labels, run rows."""

from __future__ import annotations

import hashlib

import pytest

from mastkit.report.data import (
    _clip,
    _event_text,
    _labels,
    _outcome,
    _run_info,
    _select_events,
    safe_anchor,
    truncate,
)
from mastkit.traces.model import Event


def sha8(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:8]


def test_safe_anchor_exact() -> None:
    assert safe_anchor("a_b-C9") == "trace-a_b-C9"
    assert safe_anchor("t1", prefix="p-") == "p-t1"
    assert safe_anchor("a/b") == f"trace-a-b-{sha8('a/b')}"
    assert safe_anchor("--x--") == f"trace-x-{sha8('--x--')}"
    assert safe_anchor("///") == f"trace-{sha8('///')}"
    assert safe_anchor("") == f"trace-{sha8('')}"
    assert safe_anchor("x" * 100) == f"trace-{'x' * 60}-{sha8('x' * 100)}"
    assert safe_anchor("y" * 60) == "trace-" + "y" * 60


def test_truncate_and_clip_at_the_limit() -> None:
    assert truncate("abc", 3) == ("abc", 0)
    assert truncate("abcd", 3) == ("abc… [+1 chars]", 1)
    assert truncate("", 3) == ("", 0)
    assert _clip(None, 3) is None
    assert _clip("abcd", 3) == "abc… [+1 chars]"
    assert _clip("ab", 3) == "ab"


@pytest.mark.parametrize(
    ("n", "must", "max_events", "chosen"),
    [
        (8, set(), 8, [0, 1, 2, 3, 4, 5, 6, 7]),
        (9, set(), 8, [0, 1, 2, 3, 5, 6, 7, 8]),
        (12, {6}, 6, [0, 1, 5, 6, 7, 11]),
        (10, {-1, 0, 20}, 4, [0, 1, 8, 9]),
        (10, set(), 3, [0, 1, 9]),
        (20, {5, 10, 15}, 5, [0, 5, 10, 15, 19]),
        (10, {4}, 4, [0, 3, 4, 9]),
        (10, {9}, 4, [0, 1, 8, 9]),
        (10, {10}, 4, [0, 1, 8, 9]),
        (20, {5, 10, 15}, 8, [0, 1, 4, 5, 10, 15, 18, 19]),
    ],
)
def test_select_events_by_hand(n: int, must: set[int], max_events: int, chosen: list[int]) -> None:
    assert _select_events(n, must, max_events) == chosen


def test_labels_tell_shared_ids_apart() -> None:
    assert _labels([("a", "h1"), ("b", "h2")]) == ["a", "b"]
    assert _labels([("a", "sha256:aaaaaaaa1111"), ("b", "x"), ("a", "sha256:bbbbbbbb2222")]) == [
        "a (aaaaaaaa)",
        "b",
        "a (bbbbbbbb)",
    ]
    assert _labels([("a", "sha256:aaaaaaaa1111xxxx"), ("a", "sha256:aaaaaaaa2222yyyy")]) == [
        "a (aaaaaaaa1111)",
        "a (aaaaaaaa2222)",
    ]
    assert _labels([("a", "aaaaaaaaaaaa"), ("a", "aaaaaaaaaaaa")]) == ["a (aaaaaaaaaaaa)"] * 2
    assert _labels([("a", "p:q:rrrrrrrrr"), ("a", "p:zzzzzzzzz")]) == ["a (q:rrrrrr)", "a (zzzzzzzz)"]


def msg(text: str) -> Event:
    return Event(seq=0, kind="message", actor="a", content=text)


def test_event_text_keeps_a_far_quote_in_view() -> None:
    text = "A" * 100 + "QUOTE" + "B" * 100
    assert _event_text(msg(text), 40, "QUOTE") == (
        "[… 90 chars] " + "A" * 10 + "QUOTE" + "B" * 25 + " …" + "… [+165 chars]",
        165,
    )
    at_end = "A" * 100 + "QUOTE"
    assert _event_text(msg(at_end), 40, "QUOTE") == (
        "[… 90 chars] " + "A" * 10 + "QUOTE" + "… [+90 chars]",
        90,
    )


def test_event_text_cuts_plainly_when_the_quote_is_near_or_absent() -> None:
    text = "A" * 10 + "QUOTE" + "B" * 100
    assert _event_text(msg(text), 50, "QUOTE") == ("A" * 10 + "QUOTE" + "B" * 35 + "… [+65 chars]", 65)
    assert _event_text(msg(text), 15, "QUOTE") == ("A" * 10 + "QUOTE" + "… [+100 chars]", 100)
    assert _event_text(msg(text), 50, "nowhere") == truncate(text, 50)
    assert _event_text(msg(text), 50, None) == truncate(text, 50)
    assert _event_text(msg("short"), 50, "short") == ("short", 0)
    # a quote longer than 60 characters is found by its first 60
    long_quote = "Q" * 70
    far = "A" * 200 + "Q" * 60 + "B" * 100
    shown, cut = _event_text(msg(far), 80, long_quote)
    assert shown.startswith("[… 180 chars] " + "A" * 20 + "Q" * 60) and cut == 280


def test_outcome_and_run_info() -> None:
    assert (_outcome(None), _outcome(True), _outcome(False)) == ("unknown", "success", "failed")
    row = {
        "config_hash": "abc",
        "kind": "llm",
        "model": "openai:m",
        "taxonomy_id": "mast",
        "taxonomy_version": "1",
        "created_at": 5.0,
        "annotations": 3,
        "config_json": '{"kind": "llm"}',
    }
    info = _run_info(row)
    assert info.model_dump() == {
        "config_hash": "abc",
        "kind": "llm",
        "model": "openai:m",
        "taxonomy_id": "mast",
        "taxonomy_version": "1",
        "created_at": 5.0,
        "annotations": 3,
        "config": {"kind": "llm"},
    }
    assert _run_info({"config_hash": 7, "config_json": "not json", "annotations": None}).model_dump() == {
        "config_hash": "7",
        "kind": None,
        "model": None,
        "taxonomy_id": None,
        "taxonomy_version": None,
        "created_at": None,
        "annotations": 0,
        "config": {},
    }
    assert _run_info({"config_hash": "x", "config_json": "[1, 2]"}).config == {}


def test_event_text_window_edges() -> None:
    at_start = "Q" * 70 + "B" * 100
    assert _event_text(msg(at_start), 30, "Q" * 70) == (
        "[… 0 chars] " + "Q" * 30 + " …" + "… [+140 chars]",
        140,
    )
    just_past = "A" * 30 + "QUOTE" + "B" * 100
    assert _event_text(msg(just_past), 32, "QUOTE") == (
        "[… 22 chars] " + "A" * 8 + "QUOTE" + "B" * 19 + " …" + "… [+103 chars]",
        103,
    )
    fits = "A" * 20 + "Q" * 70 + "B" * 50  # the first 60 characters of the quote end at the limit
    assert _event_text(msg(fits), 80, "Q" * 70) == ("A" * 20 + "Q" * 60 + "… [+60 chars]", 60)
    twice = "A" * 100 + "QUOTE" + "B" * 100 + "QUOTE"
    assert _event_text(msg(twice), 40, "QUOTE")[0].startswith("[… 90 chars] " + "A" * 10 + "QUOTE")


def test_anchor_of_a_lone_surrogate_and_labels_of_hashes_with_colons() -> None:
    odd = "\ud800"
    digest = hashlib.sha1(odd.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    assert safe_anchor(odd) == f"trace-{digest}"
    clash = [("a", "p:q:aaaaaaaaaaaa"), ("a", "p:q:aaaaaaaabbbb")]
    assert _labels(clash) == ["a (q:aaaaaaaaaa)", "a (q:aaaaaaaabb)"]
