"""MAST-Data (MAD), the Multi-Agent System Failure Taxonomy data set (Cemri et al., UC Berkeley).

Two files, both one JSON array of records:

* ``MAD_full_dataset.json`` (1,242 or 1,642 records, up to ~200 MB; LLM-judge labels):
  ``{mas_name, llm_name, benchmark_name, trace_id, trace: {key, index, trajectory: <text>},
  mast_annotation: {"1.1": 0|1|null, ...}}`` — streamed element by element, never read whole.
* ``MAD_human_labelled_dataset.json`` (19 records; three human annotators):
  ``{round, mas_name, benchmark_name, trace_id, trace: <text>, annotations: [{"failure mode":
  "<code> <name>\\n\\n<definition>", annotator_1: bool, annotator_2: bool, annotator_3: bool}]}``.

One trace per record. Labels: one :class:`Label` per mode per annotator (``annotator_1``..3,
``source="human"``; or ``mast_annotation`` as ``annotator="o1"``, ``source="llm"``), with the
native code kept and the code mapped to the published 14-mode MAST by
:func:`mastkit._util.mast_legacy.map_label` (round-aware: the human file mixes three taxonomy
versions). Modes that no longer exist map to ``code=None`` (kept, with the native code).

The trace itself is raw text in the MAS's own log style. A segmenter per style turns it into
events — ChatDev log blocks, AG2 ``trajectory`` messages, HyperAgent log lines, MetaGPT / OpenManus
loguru lines, MetaGPT "Agent Communication Log" sections, Magentic-One ``---------- Agent ----------``
sections, AppWorld ``Response from ...`` sections — and otherwise one message holding the whole
text (``segmentation="raw_unsegmented"``). Per-call usage lines (ChatDev ``OpenAI_Usage_Info``,
MetaGPT ``Current cost: ...``, OpenManus ``Token usage: ...``) become ``llm_call`` events with
their usage. From the text also: ``task`` (ChatDev ``task_prompt``, ``problem_statement`` /
``prompt`` of JSON traces), termination (ChatDev ``ChatDev Ends``), outcome (``other_data.correct``
of AG2 traces; Magentic-One ``FINAL ANSWER:`` as ``final_output`` without a verdict).
The full original text is always kept in ``Trace.raw``; for text segmenters the events' contents
concatenate back to it exactly. The two human-file records with ``mas_name="GAIA"`` have their
MAS and benchmark swapped in the release; the importer swaps them back (original values in raw).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from mastkit._util.linestart import LineStart
from mastkit._util.mast_legacy import map_label
from mastkit.errors import FormatError, TraceLoadError
from mastkit.traces._build import TraceBuilder, source_ref
from mastkit.traces.model import Label, Outcome, Segmentation, Termination, Trace, Usage
from mastkit.traces.registry import Importer, register
from mastkit.traces.source import Source

_FRAMEWORKS = {
    "ag2": "AG2", "chatdev": "ChatDev", "metagpt": "MetaGPT", "magentic": "Magentic-One",
    "magenticone": "Magentic-One", "openmanus": "OpenManus", "appworld": "AppWorld", "hyperagent": "HyperAgent",
}  # fmt: skip

Segment = tuple[str | None, str, str | None]
"""(actor, text, subtype) of one event."""

# -- text segmenters: each returns exact slices of the text, or None when the style does not match --


_CHATDEV_BLOCK = re.compile(r"\n\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} [A-Z]+\]")
_CHATDEV_TURN = re.compile(
    r"^\[[^\]]+\] ([^:\n*]{1,60}): \*\*([^*\n<]{1,60})<->([^*\n]{1,60}?) on : ([^,*\n]+), turn (\d+)\*\*"
)
_MAGENTIC = LineStart(r"-{6,} ([^\n-][^\n]{0,80}?) -{6,}[ \t\r]*$")
_APPWORLD = LineStart(
    r"(?:Response from (.{1,80})|Code Execution Output|\*{6,}[^\n]*\*{6,}|Reply from (.{1,80}))[ \t\r]*$"
)
# "<run>_<instance> - LEVEL - [<Agent>'s Response:]": the agent if named, else the run's name
_HYPER_LINE = LineStart(r"(\w+?)_[\w.-]+ - [A-Z]+ - (?:([\w -]{1,40}?)'s Response:)?")
_LOGURU = LineStart(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} \| ")
_LOGURU_ROLE = re.compile(r"- (\w+)\(([^)]+)\): ")
# OpenManus agent lines: "✨ Manus's thoughts: ...", "🛠️ Manus selected 2 tools to use"
_LOGURU_AGENT = re.compile(r" - \W{0,4}\s?(\w+)(?:'s thoughts:| selected \d+ tools)")
# per-call usage lines: MetaGPT cost_manager, OpenManus app.llm:update_token_count
_METAGPT_COST = re.compile(r"Current cost: \$([\d.]+), prompt_tokens: (\d+), completion_tokens: (\d+)")
_OPENMANUS_TOKENS = re.compile(r"Token usage: Input=(\d+), Completion=(\d+)")
# MetaGPT "Agent Communication Log" (a custom logger used in some MAST MetaGPT runs)
_COMM_HEAD = LineStart(r"\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\] (?:FROM: (\S+)|NEW MESSAGES:)")
_COMM_SPEAKER = re.compile(r"NEW MESSAGES:\s*\n\s*([\w .-]{1,60}?):")
_CHATDEV_USAGE = re.compile(
    r"prompt_tokens: (\d+)\ncompletion_tokens: (\d+)(?:\ntotal_tokens: (\d+))?(?:\ncost: \$([\d.]+))?"
)
_CHATDEV_TASK = re.compile(r"\*\*task_prompt\*\*: ?([^\n]*)")
_CHATDEV_ENDS = re.compile(r"ChatDev Ends \((\d{14})\)")
_FINAL_ANSWER = LineStart(r"FINAL ANSWER: ?([^\n]*)")


def _split(text: str, starts: list[int]) -> list[str]:
    bounds = [0, *[s for s in starts if s > 0], len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if b > a]


def _chatdev(text: str) -> list[Segment] | None:
    if text[:256].lstrip()[:1] != "[":
        return None
    # "\n[" is a literal prefix the regex engine scans for quickly (a ^-anchored pattern is not)
    starts = [0] + [m.start() + 1 for m in _CHATDEV_BLOCK.finditer(text)]
    if len(starts) < 3:
        return None
    out: list[Segment] = []
    for part in _split(text, starts):
        m = _CHATDEV_TURN.match(part)
        if m:
            out.append((m.group(1).strip(), part, "chat_turn"))
        else:
            out.append(
                (None, part, "llm_usage" if "**[OpenAI_Usage_Info Receive]**" in part[:80] else "log_block")
            )
    return out


def _headed(pattern: LineStart, text: str, min_heads: int = 3) -> list[Segment] | None:
    heads = pattern.heads(text)
    if len(heads) < min_heads:
        return None
    out: list[Segment] = []
    actor_at = {start: next((g for g in groups if g), None) for start, groups in heads}
    for part_start, part in zip(
        [0, *[start for start, _ in heads if start > 0]],
        _split(text, [start for start, _ in heads]),
        strict=False,
    ):
        actor = actor_at.get(part_start)
        out.append(
            (actor.strip() if actor else None, part, "section" if part_start in actor_at else "preamble")
        )
    return out


def _loguru(text: str) -> list[Segment] | None:
    starts = [start for start, _ in _LOGURU.heads(text)]
    if len(starts) < 2:
        return None
    out: list[Segment] = []
    for part in _split(text, starts):
        head = part.split("\n", 1)[0]
        m = _LOGURU_ROLE.search(head) or _LOGURU_AGENT.search(head)
        sub = "llm_usage" if _METAGPT_COST.search(head) or _OPENMANUS_TOKENS.search(head) else "log_line"
        out.append((m.group(1) if m else None, part, sub))
    return out


def _comm_log(text: str) -> list[Segment] | None:
    """``[ts] FROM: X TO: {...}`` / ``[ts] NEW MESSAGES: Speaker: ...`` sections (MetaGPT on MMLU)."""
    heads = _COMM_HEAD.heads(text)
    if len(heads) < 2:
        return None
    out: list[Segment] = []
    for part in _split(text, [start for start, _ in heads]):
        m = _COMM_HEAD.at.match(part)
        if m is None:
            out.append((None, part, "preamble"))
            continue
        sp = None if m.group(1) else _COMM_SPEAKER.search(part, 0, 400)
        who = m.group(1) or (sp.group(1).strip() if sp else None)
        out.append((who, part, "message"))
    return out


# tried in order, the first that finds segments wins
_TEXT_SEGMENTERS: list[Callable[[str], list[Segment] | None]] = [
    _chatdev,
    lambda t: _headed(_MAGENTIC, t),
    lambda t: _headed(_APPWORLD, t),
    _loguru,
    _comm_log,
]


def _close(out: list[Segment], lines: list[str]) -> None:
    """Append the collected continuation lines to the last record."""
    if lines and out:
        actor, text, sub = out[-1]
        out[-1] = (actor, "\n".join([text, *lines]), sub)
    lines.clear()


def _hyper_lines(lines: list[Any]) -> list[Segment] | None:
    """HyperAgent log lines: a ``<run> - LEVEL - <Agent>'s Response: ...`` line starts a record and
    the unprefixed lines after it (thoughts, code, observations) belong to it; lines before the
    first such line form one record. None when some item is not a one-line string (then the
    caller goes item by item).

    The lines are joined and the record heads found by one regex scan over the text, which is
    several times faster than matching 10,000 lines one by one in Python."""
    try:
        text = "\n".join(lines)
    except TypeError:
        return None
    if text.count("\n") != len(lines) - 1:  # a line holds a newline: line starts != item starts
        return None
    starts: list[int] = []
    actors: list[str | None] = []
    for start, (run, who) in _HYPER_LINE.heads(text):
        if text.find(" - ", start, start + 160) == -1:
            continue  # the prefix must begin within the first 160 characters, as in the item loop
        starts.append(start)
        actors.append(who or run)
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
        actors.insert(0, None)
    bounds = [*starts, len(text) + 1]
    return [
        (actor, text[a : b - 1], "log_record")
        for actor, a, b in zip(actors, bounds, bounds[1:], strict=False)
    ]


def _from_json_doc(doc: dict[str, Any]) -> list[Segment] | None:
    """AG2 / HyperAgent records are JSON documents with a ``trajectory`` list; MetaGPT has ``content``."""
    traj = doc.get("trajectory")
    if isinstance(traj, list) and traj:
        if all_lines := _hyper_lines(traj):
            return all_lines
        out: list[Segment] = []
        lines: list[str] = []  # continuation lines of the open HyperAgent record
        for item in traj:
            if isinstance(item, dict):
                _close(out, lines)
                content = item.get("content")
                text = "\n".join(str(c) for c in content) if isinstance(content, list) else str(content or "")
                actor = item.get("name") or item.get("role")
                out.append((str(actor) if actor else None, text, "message"))
                continue
            line = str(item)
            m = _HYPER_LINE.at.match(line) if " - " in line[:160] else None
            if m or not out or out[-1][2] != "log_record":
                # see _hyper_lines
                _close(out, lines)
                out.append(((m.group(2) or m.group(1)) if m else None, line, "log_record"))
            else:
                lines.append(line)
        _close(out, lines)
        return out
    content = doc.get("content")
    if isinstance(content, str):
        return _loguru(content) or [(None, content, "log")]
    return None


def segment(text: str) -> tuple[list[Segment], Segmentation, dict[str, Any] | None]:
    """Events of a MAST trace text, how they were found, and the parsed JSON document if any."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            doc = orjson.loads(stripped)
        except orjson.JSONDecodeError:
            doc = None
        if isinstance(doc, dict):
            segs = _from_json_doc(doc)
            if segs:
                return segs, "heuristic", doc
    for seg in _TEXT_SEGMENTERS:
        if found := seg(text):
            return found, "heuristic", None
    return [(None, text, None)], "raw_unsegmented", None


def _usage(text: str) -> Usage | None:
    head = text.split("\n", 1)[0]
    if m := _METAGPT_COST.search(head):
        return Usage(input_tokens=int(m.group(2)), output_tokens=int(m.group(3)), cost_usd=float(m.group(1)))
    if m := _OPENMANUS_TOKENS.search(head):
        return Usage(input_tokens=int(m.group(1)), output_tokens=int(m.group(2)))
    if m := _CHATDEV_USAGE.search(text, 0, 400):
        return Usage(
            input_tokens=int(m.group(1)),
            output_tokens=int(m.group(2)),
            total_tokens=int(m.group(3)) if m.group(3) else None,
            cost_usd=float(m.group(4)) if m.group(4) else None,
        )
    return None


@register
class MastDataImporter(Importer):
    name = "mast_data"
    description = "MAST-Data / MAD records (full LLM-labelled file and the human-labelled file)"

    def sniff(self, src: Source) -> float:
        if src.json_shape != "array":
            return 0.0
        head = src.head_text
        if '"mas_name"' in head and ('"mast_annotation"' in head or '"annotations"' in head):
            return 0.95
        # the label keys come after a trace text that can be 100s of KB: look at the first record
        # (streamed up to its end only, so this stays cheap on the ~200 MB file)
        if '"mas_name"' in head or src.size <= 8 * 1024 * 1024:
            rec = src.first_record
            if isinstance(rec, dict) and "mas_name" in rec and "trace" in rec:
                return 0.9
        return 0.0

    def load(self, src: Source) -> Iterator[Trace | TraceLoadError]:
        seen_any = False
        for index, offset, rec in src.iter_array():
            if isinstance(rec, FormatError):
                if not seen_any:
                    raise rec
                yield TraceLoadError(
                    src.path, f"record {index}: {rec}", offset=offset if offset >= 0 else None
                )
                return
            if not isinstance(rec, dict) or "mas_name" not in rec or "trace" not in rec:
                if not seen_any:
                    raise FormatError("not a MAST-Data record: expected 'mas_name' and 'trace'")
                yield TraceLoadError(
                    src.path, f"record {index}: not a MAST-Data record (no 'mas_name'/'trace')"
                )
                continue
            seen_any = True
            try:
                yield self.convert(rec, index, src)
            except (FormatError, ValueError, TypeError) as exc:
                yield TraceLoadError(src.path, f"record {index}: {exc}")

    def convert(self, rec: dict[str, Any], index: int, src: Source) -> Trace:
        trace_field = rec["trace"]
        if isinstance(trace_field, dict):
            text = trace_field.get("trajectory")
            key = trace_field.get("key")
        else:
            text, key = trace_field, None
        if not isinstance(text, str):
            raise FormatError("the trace text is not a string")
        mas, bench = str(rec.get("mas_name") or ""), str(rec.get("benchmark_name") or "")
        if mas == "GAIA" and bench:  # swapped in the human file
            mas, bench = bench, mas
        framework = _FRAMEWORKS.get(re.sub(r"[^a-z]", "", mas.lower()), mas or None)
        native_id = rec.get("trace_id")
        tid_parts = ["mast", str(key or f"{mas}_{bench}"), str(native_id if native_id is not None else index)]
        if "round" in rec:
            tid_parts.insert(1, "human")
        b = TraceBuilder(self.name, src.path, trace_id="/".join(tid_parts))
        segments, segmentation, doc = segment(text)
        for i, (actor, content, subtype) in enumerate(segments):
            usage = _usage(content) if subtype == "llm_usage" else None
            if usage is not None and actor is None and b.last is not None and framework != "ChatDev":
                actor = b.last.actor  # the cost line follows the call of the agent that just acted
            b.add(
                "llm_call" if usage is not None else "message",
                actor=actor,
                content=content,
                subtype=subtype,
                usage=usage,
                source=source_ref(pointer=f"/{index}/trace" + (f"#segment-{i}" if len(segments) > 1 else "")),
            )
        labels = self._labels(rec)
        outcome = None
        if doc is not None and isinstance(doc.get("other_data"), dict) and "correct" in doc["other_data"]:
            correct = doc["other_data"]["correct"]
            outcome = Outcome(success=correct if isinstance(correct, bool) else None)
        if outcome is None and (finals := _FINAL_ANSWER.heads(text[-20_000:])):
            outcome = Outcome(
                final_output=(finals[-1][1][0] or "").strip()
            )  # Magentic-One; no verdict in the record
        termination = None
        ends = _CHATDEV_ENDS.search(text, max(0, len(text) - 20_000)) if framework == "ChatDev" else None
        if ends and doc is None:
            at = next((e.seq for e in reversed(b.events) if e.content and ends.group(0) in e.content), None)
            termination = Termination(reason="completed", by="harness", native=ends.group(0), at_seq=at)
        task = None
        if doc is None and (tp := _CHATDEV_TASK.search(text, 0, 20_000)):
            task = tp.group(1).strip() or None
        if doc is not None:
            ps = doc.get("problem_statement") or doc.get("prompt")
            task = (
                "\n".join(str(x) for x in ps)
                if isinstance(ps, list)
                else (ps if isinstance(ps, str) else None)
            )
        envelope = {k: v for k, v in rec.items() if k not in ("annotations",)}
        return b.build(
            framework=framework,
            benchmark=bench or None,
            model=str(rec["llm_name"]) if rec.get("llm_name") else None,
            task=task,
            task_id=str(native_id) if native_id is not None else None,
            outcome=outcome,
            termination=termination,
            labels=labels,
            segmentation=segmentation,
            raw=envelope,
        )

    @staticmethod
    def _labels(rec: dict[str, Any]) -> list[Label]:
        labels: list[Label] = []
        round_name = rec.get("round") if isinstance(rec.get("round"), str) else None
        anns = rec.get("annotations")
        if isinstance(anns, list):
            for a in anns:
                if not isinstance(a, dict) or not isinstance(a.get("failure mode"), str):
                    continue
                code, native, name = map_label(a["failure mode"], round_name)
                for annotator in sorted(k for k in a if k.startswith("annotator")):
                    v = a[annotator]
                    labels.append(
                        Label(
                            taxonomy="mast",
                            code=code,
                            native_code=native,
                            present=v if isinstance(v, bool) else None,
                            annotator=annotator,
                            source="human",
                            extra={"native_name": name, "round": round_name},
                        )
                    )
        mast = rec.get("mast_annotation")
        if isinstance(mast, dict):
            for native, v in mast.items():
                code, _n, _name = map_label(str(native), None)
                labels.append(
                    Label(
                        taxonomy="mast",
                        code=code,
                        native_code=str(native),
                        present=bool(v) if isinstance(v, (int, bool)) else None,
                        annotator="o1",
                        source="llm",
                    )
                )
        return labels
