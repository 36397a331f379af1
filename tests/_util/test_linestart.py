from __future__ import annotations

from mastkit._util.linestart import LineStart


def test_first_and_later_lines_only_at_line_starts() -> None:
    p = LineStart(r"\[(\w+)\]")
    text = "[a] one\n[b] two\n  [c] indented\nx [d]\n[e]"
    assert p.heads(text) == [(0, ("a",)), (8, ("b",)), (37, ("e",))]
    assert [m.group(1) for _s, m in p.matches(text)] == ["a", "b", "e"]
    assert p.heads("") == [] and p.at.match("[z]") is not None


def test_a_top_level_alternation_stays_anchored_to_the_line_start() -> None:
    # "\n" + "FROM|TO" would read as ("\nFROM") | ("TO") and match "TO" mid-line
    p = LineStart(r"FROM|TO")
    assert [s for s, _m in p.matches("x TO y\nTO z\nFROM w")] == [7, 12]
