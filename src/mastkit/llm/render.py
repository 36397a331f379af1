"""Compact, injection-safe rendering of a trace for the LLM judge, split into windows.

* One line block per event: ``[seq] actor kind: text`` — seq ids let the judge cite evidence.
* Replayed context (``is_copied_context``) is left out, with a visible marker.
* A long text already shown verbatim earlier is replaced by ``[same text as event N]``.
* Long texts keep their head *and* tail with a visible ``…[N chars elided]…`` marker
  (verification and errors tend to sit at the end of tool outputs) — except in an
  unsegmented trace (one raw log event), whose text is cut into parts, not elided.
* Trace text never closes the fence the prompt puts around it: every block — the label
  (actor, role, kind, tool and result names, subtype, recipients) and the text — is defused
  as a whole (:func:`mastkit.llm.fence.defuse`), and the fence's nonce is secret.
* When the whole rendering does not fit the model's budget it is split into overlapping
  windows; if there would be more windows than allowed, the head and tail windows are
  kept and the middle is elided with a marker.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from mastkit.llm.fence import defuse
from mastkit.providers import CHARS_PER_TOKEN
from mastkit.traces.model import Event, Trace


@dataclass(frozen=True)
class RenderOptions:
    max_event_chars: int = 1200
    """Longest text kept per event before head+tail elision."""
    tail_chars: int = 400
    """Characters kept from the end of an elided text."""
    dedupe_min_chars: int = 200
    """Texts at least this long that repeat an earlier event verbatim are replaced by a reference."""
    part_chars: int = 4000
    """An unsegmented trace (one raw text event) is cut into parts of about this size, never elided:
    that text *is* the whole trace, and windows take care of its length."""


@dataclass
class RenderStats:
    """How much of a trace a rendering shows: filled in by :func:`render_events` and
    :func:`render_windows` when given one, and recorded with every judgement."""

    events: int = 0
    """Events in the trace."""
    replayed_omitted: int = 0
    """Events left out as replayed earlier context."""
    deduplicated: int = 0
    """Events shown as a reference to an earlier event with the same long text."""
    chars: int = 0
    """Characters of event text before elision."""
    chars_elided: int = 0
    """Characters left out of long event texts (head and tail kept)."""
    events_elided: int = 0
    """Events whose text was shortened."""
    windows: int = 0
    """Windows the rendering was cut into."""
    events_omitted_by_window_cap: int = 0
    """Events shown in no window because the trace needed more windows than allowed."""

    def as_dict(self) -> dict[str, int]:
        return {k: int(v) for k, v in vars(self).items()}


@dataclass(frozen=True)
class Window:
    index: int
    count: int
    first_seq: int
    last_seq: int
    text: str
    omitted_before: int = 0
    """Events elided between the previous kept window and this one (window cap)."""


def _clip(text: str, opts: RenderOptions) -> str:
    if len(text) <= opts.max_event_chars:
        return text
    head = opts.max_event_chars - opts.tail_chars
    return f"{text[:head]}…[{len(text) - head - opts.tail_chars} chars elided]…{text[-opts.tail_chars :]}"


def _label(e: Event) -> str:
    who = e.actor or e.role or "?"
    if e.kind == "tool_call" and e.tool_call is not None:
        return f"{who} tool_call {e.tool_call.name}"
    if e.kind == "tool_result" and e.tool_result is not None:
        bits = [e.tool_result.name or "result"]
        if e.tool_result.is_error:
            bits.append("ERROR")
        if e.tool_result.exit_code not in (None, 0):
            bits.append(f"exit={e.tool_result.exit_code}")
        return f"{who} tool_result {' '.join(bits)}"
    label = f"{who} {e.kind}"
    if e.subtype:
        label += f"/{e.subtype}"
    if e.recipients:
        label += f" -> {', '.join(e.recipients)}"
    return label


def _body(e: Event) -> str:
    if e.kind == "tool_call" and e.tool_call is not None:
        return e.tool_call.arguments_raw or (
            str(e.tool_call.arguments) if e.tool_call.arguments is not None else ""
        )
    return e.text()


def _parts(text: str, size: int) -> list[str]:
    """``text`` cut into pieces of at most ``size`` characters, at line ends where possible."""
    parts = []
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            nl = text.rfind("\n", start + size // 2, end)
            if nl != -1:
                end = nl + 1
        parts.append(text[start:end])
        start = end
    return parts


def render_events(
    trace: Trace, opts: RenderOptions | None = None, stats: RenderStats | None = None
) -> list[tuple[int, str]]:
    """``(seq, block)`` per rendered event, with dedupe, elision and replay markers applied.

    With ``stats``, what was left out is counted into it."""
    opts = opts or RenderOptions()
    st = stats if stats is not None else RenderStats()
    st.events += len(trace.events)
    seen: dict[str, int] = {}
    blocks: list[tuple[int, str]] = []
    skipped: list[int] = []
    for e in trace.events:
        if e.is_copied_context:
            skipped.append(e.seq)
            st.replayed_omitted += 1
            continue
        if skipped:
            blocks.append(
                (
                    skipped[0],
                    f"[{skipped[0]}-{skipped[-1]}] (replayed earlier context: {len(skipped)} events omitted)",
                )
            )
            skipped = []
        body = _body(e)
        st.chars += len(body)
        if trace.segmentation == "raw_unsegmented" and len(body) > opts.max_event_chars:
            pieces = _parts(body, max(opts.max_event_chars, opts.part_chars))
            for i, piece in enumerate(pieces, start=1):
                blocks.append((e.seq, defuse(f"[{e.seq}] {_label(e)} (part {i}/{len(pieces)}): {piece}")))
            continue
        if len(body) >= opts.dedupe_min_chars:
            key = hashlib.sha1(body.encode("utf-8", "surrogatepass")).hexdigest()
            if key in seen:
                body = f"[same text as event {seen[key]}]"
                st.deduplicated += 1
            else:
                seen[key] = e.seq
                if len(body) > opts.max_event_chars:
                    st.events_elided += 1
                    st.chars_elided += len(body) - opts.max_event_chars
                body = _clip(body, opts)
        # the whole block is defused: trace text is in the label (names) as well as the body
        blocks.append((e.seq, defuse(f"[{e.seq}] {_label(e)}: {body}")))
    if skipped:
        blocks.append(
            (
                skipped[0],
                f"[{skipped[0]}-{skipped[-1]}] (replayed earlier context: {len(skipped)} events omitted)",
            )
        )
    return blocks


def render_windows(
    trace: Trace,
    budget_tokens: int,
    *,
    overlap_events: int = 3,
    max_windows: int = 8,
    opts: RenderOptions | None = None,
    stats: RenderStats | None = None,
) -> list[Window]:
    """Split the rendered trace into windows of at most ``budget_tokens`` (estimated).

    Consecutive windows share ``overlap_events`` events. Beyond ``max_windows`` the first
    half and last half of the allowed windows are kept (head and tail) and the middle is
    marked as omitted.
    """
    st = stats if stats is not None else RenderStats()
    blocks = render_events(trace, opts, st)
    if not blocks:
        st.windows = 1
        return [Window(0, 1, 0, max(0, len(trace.events) - 1), "(the trace has no events)")]
    budget_chars = max(2000, budget_tokens * CHARS_PER_TOKEN)
    spans: list[tuple[int, int]] = []  # block index ranges [start, end)
    start = 0
    while start < len(blocks):
        size = 0
        end = start
        while end < len(blocks) and (end == start or size + len(blocks[end][1]) + 1 <= budget_chars):
            size += len(blocks[end][1]) + 1
            end += 1
        spans.append((start, end))
        if end >= len(blocks):
            break
        start = max(end - overlap_events, start + 1)
    if len(spans) > max_windows:
        head = spans[: (max_windows + 1) // 2]
        tail = spans[len(spans) - max_windows // 2 :]
        spans = head + tail
    windows = []
    prev_end = 0
    for i, (s, e) in enumerate(spans):
        omitted = max(0, s - prev_end) if i else 0
        text = "\n".join(b for _seq, b in blocks[s:e])
        if omitted and s > prev_end:
            text = f"(… {omitted} events between windows omitted to stay within budget …)\n" + text
        windows.append(Window(i, len(spans), blocks[s][0], blocks[e - 1][0], text, omitted))
        if omitted:
            st.events_omitted_by_window_cap += len({seq for seq, _b in blocks[prev_end:s]})
        prev_end = e
    st.windows = len(windows)
    return windows
