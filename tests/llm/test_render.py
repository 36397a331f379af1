"""How a trace is rendered for the judge: event blocks, elision, dedupe, replay markers, parts of an
unsegmented log, windows and the window cap, and the coverage counted in :class:`RenderStats`."""

from __future__ import annotations

from typing import Any

from mastkit.llm.render import RenderOptions, RenderStats, Window, _parts, render_events, render_windows
from mastkit.traces.model import Event, ToolCall, ToolResult, Trace


def _trace(*events: Event, **kw: Any) -> Trace:
    return Trace(trace_id="t", source_format="test", events=list(events), **kw)


def _msg(seq: int, text: str, actor: str | None = "a", **kw: Any) -> Event:
    return Event(seq=seq, kind="message", actor=actor, content=text, **kw)


def _blocks(trace: Trace, **opts: Any) -> list[tuple[int, str]]:
    return render_events(trace, RenderOptions(**opts))


def test_event_labels() -> None:
    trace = _trace(
        _msg(0, "hi"),
        Event(seq=1, kind="message", role="user", content="hi"),
        Event(seq=2, kind="message", content="hi"),
        _msg(3, "hi", subtype="dm", recipients=["b", "c"]),
        Event(
            seq=4, kind="tool_call", actor="a", tool_call=ToolCall(name="sh", arguments_raw='{"cmd": "ls"}')
        ),
        Event(seq=5, kind="tool_call", actor="a", tool_call=ToolCall(name="sh", arguments={"cmd": "ls"})),
        Event(seq=6, kind="tool_call", actor="a", tool_call=ToolCall(name="sh")),
        Event(
            seq=7,
            kind="tool_result",
            actor="a",
            tool_result=ToolResult(name="sh", output="boom", is_error=True, exit_code=2),
        ),
        Event(seq=8, kind="tool_result", actor="a", tool_result=ToolResult(output="ok", exit_code=0)),
    )
    assert [b for _s, b in _blocks(trace)] == [
        "[0] a message: hi",
        "[1] user message: hi",
        "[2] ? message: hi",
        "[3] a message/dm -> b, c: hi",
        '[4] a tool_call sh: {"cmd": "ls"}',
        "[5] a tool_call sh: {'cmd': 'ls'}",
        "[6] a tool_call sh: ",
        "[7] a tool_result sh ERROR exit=2: boom",
        "[8] a tool_result result: ok",
    ]


def test_long_texts_keep_head_and_tail_and_are_counted() -> None:
    stats = RenderStats()
    trace = _trace(_msg(0, "h" * 40 + "m" * 250 + "t" * 10), _msg(1, "x" * 300), _msg(2, "short"))
    blocks = render_events(trace, RenderOptions(max_event_chars=300, tail_chars=10), stats)
    assert blocks[0] == (0, "[0] a message: " + "h" * 40 + "m" * 250 + "t" * 10)  # exactly the limit: whole
    stats = RenderStats()
    blocks = render_events(trace, RenderOptions(max_event_chars=50, tail_chars=10), stats)
    assert blocks[0] == (0, "[0] a message: " + "h" * 40 + "…[250 chars elided]…" + "t" * 10)
    assert blocks[1] == (1, "[1] a message: " + "x" * 40 + "…[250 chars elided]…" + "x" * 10)
    assert stats.as_dict() == {
        "events": 3,
        "replayed_omitted": 0,
        "deduplicated": 0,
        "chars": 605,
        "chars_elided": 500,
        "events_elided": 2,
        "windows": 0,
        "events_omitted_by_window_cap": 0,
    }


def test_a_long_text_repeated_verbatim_is_shown_once() -> None:
    stats = RenderStats()
    same, short = "s" * 200, "r" * 199
    trace = _trace(_msg(0, same), _msg(1, same), _msg(2, short), _msg(3, short), _msg(4, same))
    blocks = render_events(trace, RenderOptions(), stats)
    assert [b for _s, b in blocks] == [
        f"[0] a message: {same}",
        "[1] a message: [same text as event 0]",
        f"[2] a message: {short}",
        f"[3] a message: {short}",
        "[4] a message: [same text as event 0]",
    ]
    assert stats.deduplicated == 2 and stats.chars == 3 * 200 + 2 * 199


def test_replayed_context_is_left_out_with_a_marker() -> None:
    stats = RenderStats()
    trace = _trace(
        _msg(0, "task"),
        _msg(1, "old", is_copied_context=True),
        _msg(2, "old", is_copied_context=True),
        _msg(3, "new"),
        _msg(4, "old", is_copied_context=True),
    )
    assert render_events(trace, None, stats) == [
        (0, "[0] a message: task"),
        (1, "[1-2] (replayed earlier context: 2 events omitted)"),
        (3, "[3] a message: new"),
        (4, "[4-4] (replayed earlier context: 1 events omitted)"),
    ]
    assert (stats.events, stats.replayed_omitted, stats.chars) == (5, 3, 7)


def test_parts_are_cut_at_line_ends_in_their_second_half() -> None:
    text = "a" * 14 + "\n" + "b" * 25 + "\n" + "ccc"
    assert _parts(text, 20) == ["a" * 14 + "\n", "b" * 20, "b" * 5 + "\nccc"]
    assert _parts("a" * 5 + "\n" + "b" * 20, 20) == ["a" * 5 + "\n" + "b" * 14, "b" * 6]
    assert _parts("", 20) == []


def test_an_unsegmented_log_is_cut_into_parts_not_elided() -> None:
    stats = RenderStats()
    text = "a" * 14 + "\n" + "b" * 25 + "\n" + "ccc"
    trace = _trace(Event(seq=0, kind="message", content=text), segmentation="raw_unsegmented")
    blocks = render_events(trace, RenderOptions(max_event_chars=10, part_chars=20), stats)
    assert blocks == [
        (0, "[0] ? message (part 1/3): " + "a" * 14 + "\n"),
        (0, "[0] ? message (part 2/3): " + "b" * 20),
        (0, "[0] ? message (part 3/3): " + "b" * 5 + "\nccc"),
    ]
    assert (stats.chars, stats.events_elided, stats.chars_elided) == (44, 0, 0)
    # a part is never shorter than max_event_chars, and a short log is one ordinary block
    assert len(render_events(trace, RenderOptions(max_event_chars=30, part_chars=5))) == 2
    short = _trace(Event(seq=0, kind="message", content="tiny"), segmentation="raw_unsegmented")
    assert render_events(short, RenderOptions(max_event_chars=10)) == [(0, "[0] ? message: tiny")]


def _sized(n: int, block_chars: int) -> Trace:
    """``n`` events whose blocks are ``block_chars`` long (``[i] a message: `` is 15 characters)."""
    return _trace(*(_msg(i, chr(ord("a") + i) * (block_chars - 15)) for i in range(n)))


def test_an_empty_trace_is_one_window() -> None:
    stats = RenderStats()
    assert render_windows(_trace(), 1000, stats=stats) == [Window(0, 1, 0, 0, "(the trace has no events)")]
    assert stats.windows == 1


def test_windows_fill_the_budget_and_overlap() -> None:
    # 2,000 characters at least per window: three 600-character blocks (+ newlines) fit, four do not
    trace = _sized(4, 600)
    windows = render_windows(trace, 1, overlap_events=1)
    assert [(w.index, w.count, w.first_seq, w.last_seq, w.omitted_before) for w in windows] == [
        (0, 2, 0, 2, 0),
        (1, 2, 2, 3, 0),
    ]
    assert windows[1].text == "\n".join(b for _s, b in render_events(trace)[2:])
    # 501 tokens are 2,004 characters: the budget is in tokens once it passes the minimum
    assert len(render_windows(_sized(4, 500), 501, overlap_events=0)) == 1
    assert len(render_windows(_sized(4, 501), 501, overlap_events=0)) == 2
    # an overlap as large as the window still moves forward
    assert [w.first_seq for w in render_windows(_sized(3, 1000), 1, overlap_events=5)] == [0, 1, 2]


def test_beyond_the_window_cap_the_middle_is_left_out() -> None:
    stats = RenderStats()
    trace = _sized(6, 1000)  # one block per window
    windows = render_windows(trace, 1, overlap_events=0, max_windows=3, stats=stats)
    assert [(w.index, w.count, w.first_seq, w.omitted_before) for w in windows] == [
        (0, 3, 0, 0),
        (1, 3, 1, 0),
        (2, 3, 5, 3),
    ]
    assert windows[2].text.startswith("(… 3 events between windows omitted to stay within budget …)\n[5] a")
    assert not windows[1].text.startswith("(")
    assert (stats.windows, stats.events_omitted_by_window_cap) == (3, 3)
    even = render_windows(trace, 1, overlap_events=0, max_windows=4)
    assert [(w.first_seq, w.omitted_before) for w in even] == [(0, 0), (1, 0), (4, 2), (5, 0)]


# -- edges found by mutation testing -------------------------------------------------------------------


def test_replayed_context_markers_name_the_whole_range() -> None:
    copied = [_msg(i, f"old {i}", is_copied_context=True) for i in range(1, 4)]
    middle = _trace(_msg(0, "a"), *copied, _msg(4, "b"))
    assert (1, "[1-3] (replayed earlier context: 3 events omitted)") in _blocks(middle)
    trailing = _trace(_msg(0, "a"), *copied)
    assert _blocks(trailing)[-1] == (1, "[1-3] (replayed earlier context: 3 events omitted)")


def test_an_unsegmented_log_of_exactly_the_limit_is_one_block_and_later_events_follow() -> None:
    exact = _trace(_msg(0, "x" * 100), segmentation="raw_unsegmented")
    (block,) = _blocks(exact, max_event_chars=100, tail_chars=20)
    assert "(part" not in block[1] and block[1].endswith("x" * 100)
    long = _trace(_msg(0, "line\n" * 60), _msg(1, "the end"), segmentation="raw_unsegmented")
    blocks = _blocks(long, max_event_chars=100, tail_chars=20, part_chars=100)
    assert blocks[-1] == (1, "[1] a message: the end")  # the parts of event 0 do not end the rendering
    assert sum("(part " in b for _s, b in blocks) >= 3


def test_a_text_of_exactly_the_limit_is_not_elided() -> None:
    stats = RenderStats()
    render_events(_trace(_msg(0, "y" * 300)), RenderOptions(max_event_chars=300, tail_chars=50), stats)
    assert (stats.events_elided, stats.chars_elided) == (0, 0)
    render_events(_trace(_msg(0, "y" * 301)), RenderOptions(max_event_chars=300, tail_chars=50), stats)
    assert (stats.events_elided, stats.chars_elided, stats.events) == (1, 1, 2)  # counts add up


def test_a_lone_surrogate_in_a_long_text_renders() -> None:
    text = "a" * 250 + "\ud800" + "b" * 10
    blocks = _blocks(_trace(_msg(0, text), _msg(1, text)))
    assert blocks[1] == (1, "[1] a message: [same text as event 0]")


def test_default_overlap_and_window_cap() -> None:
    events = [_msg(i, f"event {i} " + "z" * 400) for i in range(60)]
    trace = _trace(*events)
    windows = render_windows(trace, 500)  # ~2000 characters a window: far more than 8 windows
    assert len(windows) == 8 and windows[4].omitted_before > 0
    first, second = render_windows(trace, 500, max_windows=100)[:2]
    assert first.last_seq - second.first_seq + 1 == 3  # consecutive windows share 3 events


def test_a_cache_secret_must_be_16_bytes_or_more() -> None:
    import pytest

    from mastkit.llm.fence import fence_secret

    class Cache:
        def __init__(self, secret: object) -> None:
            self.secret = secret

        def fence_secret(self) -> object:
            return self.secret

    assert fence_secret(Cache(b"k" * 16)) == b"k" * 16
    for bad in (b"k" * 15, "k" * 32):
        with pytest.raises(ValueError, match=r"^fence_secret\(\) must return at least 16 random bytes$"):
            fence_secret(Cache(bad))
