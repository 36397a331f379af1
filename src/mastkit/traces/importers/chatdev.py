"""ChatDev 1.0 run logs (``WareHouse/<project>_<org>_<ts>/<same>.log``), one trace per file.

ChatDev (``OpenBMB/ChatDev``, branch ``chatdev1.0``) logs with
``[%(asctime)s %(levelname)s] %(message)s`` and ``datefmt='%Y-%d-%m %H:%M:%S'``: timestamps are
**year-DAY-month**. A *block* starts at a line ``[YYYY-DD-MM HH:MM:SS LEVEL] ...`` and runs until the
next such line (messages are multi-line).

Mapping (``**[Tag]**`` is the bold tag at the start of a block's message, after an optional
``Speaker:`` prefix):

* ``Speaker: **A<->B on : Phase, turn N**`` -> ``message`` (subtype ``chat_turn``), actor ``A``,
  recipients ``[B]``, ``phase``, ``extra.turn``; the leading ``[...]`` paragraph (the counterpart's
  system message ChatDev prints before each utterance) goes to ``extra.system_message``.
* ``Role: **[Start Chat]**`` -> ``message`` (subtype ``start_chat``): the instruction the user-role agent
  opens a phase with; recipient = the phase's assistant role.
* ``**[OpenAI_Usage_Info Receive]**`` -> ``llm_call`` with ``usage`` (prompt/completion/total tokens,
  cost). ChatDev logs it *before* the utterance it paid for, so it is emitted just before the next
  chat turn and shares that turn's ``llm_call_id`` (actor = the speaker); usage is counted once,
  on the ``llm_call`` event only.
* ``System: **[chatting]**`` -> ``system`` ``phase_start`` (the parameter table parsed into
  ``extra.params``; role prompts become the agents' system prompts, ``model_type`` the model);
  ``**[RolePlaying]**`` -> ``system`` ``role_playing``; ``**[Seminar Conclusion]**`` -> ``system``
  ``seminar_conclusion``; ``**[Update Codes]**`` / ``**[Rewrite Codes]**`` -> ``artifact``;
  ``**[Software Info]**`` -> ``system`` ``software_info`` (metrics in ``extra.metrics``); any other
  tag -> ``system`` with the tag slugged as subtype (``execute_detail``, ``git_information``,
  ``test_reports``, ...).
* ``**[Preprocessing]**`` (run header: ``ChatDev Starts``, config paths, ``task_prompt``,
  ``project_name``, ``Log File``) -> ``system`` ``preprocessing``; its fields -> ``Trace.raw``,
  ``task``, ``trace_id`` (the log's own name).
* ``**[Post Info]**`` (with ``ChatDev Ends``) -> ``termination`` (harness, ``completed``); its
  metrics (cost, tokens, num_utterances, duration, ...) -> ``Outcome.metrics`` and ``Trace.usage``.
  ChatDev records no test verdict, so ``Outcome.success`` stays None.
* WARNING / ERROR / CRITICAL blocks -> ``error`` (subtype = level, lower case): request timeouts
  and rate limits are useful signal.
* Noise blocks (``flask app.py did not start for online log``, ``HTTP Request: ...``) make no event;
  they are counted in ``Trace.extra["noise_blocks"]``. ``Trace.extra["block_levels"]`` counts all
  blocks per level.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from mastkit._util.linestart import LineStart
from mastkit.errors import FormatError, TraceLoadError
from mastkit.traces._build import TraceBuilder, source_ref, usage_from
from mastkit.traces.model import Outcome, Termination, Trace, Usage
from mastkit.traces.registry import Importer, register
from mastkit.traces.source import Source

_BLOCK = LineStart(
    r"\[(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:,\d+)? "
    r"(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\] ?([^\n]*)"
)
_TURN = re.compile(r"^\*\*(.+?)<->(.+?) on : (.+?), turn (\d+)\*\*\s*$")
_TAG = re.compile(r"^\*\*\[([^\]]+)\]\*\*:?\s*(.*)$")
_SPEAKER = re.compile(r"^([A-Za-z][\w .'()/&-]{0,80}?): (\*\*.*)$")
_MARKERS = (
    "**[Start Chat]**",
    "ChatDev Starts",
    "**[Preprocessing]**",
    "**[chatting]**",
    "**[RolePlaying]**",
    "OpenAI_Usage_Info",
    "**[Seminar Conclusion]**",
    "ChatDevConfig",
)
_TURN_SEARCH = re.compile(r"\*\*[^*\n]+<->[^*\n]+ on : [^*\n]+, turn \d+\*\*")
_NOISE = ("flask app.py did not start for online log", "HTTP Request: ")
_KV = re.compile(r"^\*\*([A-Za-z_][\w ]*)\*\*:\s*(.*)$")
_METRIC = re.compile(r"\*\*(\w+)\*\*=(\S+)")
_ROW = re.compile(r"^\| \*\*(\w+)\*\* \| (.*) \|\s*$")
_STAMP = re.compile(r"ChatDev (Starts|Ends) \((\d{14})\)")
_ARTIFACT_TAGS = {"update codes", "rewrite codes"}


def _block_time(m: re.Match[str]) -> datetime | None:
    y, a, b, hh, mm, ss = (int(m.group(i)) for i in range(1, 7))
    for day, month in ((a, b), (b, a)):  # ChatDev writes %Y-%d-%m; tolerate %Y-%m-%d
        try:
            return datetime(y, month, day, hh, mm, ss)
        except ValueError:
            continue
    return None


def _stamp_time(value: str) -> datetime | None:
    try:
        return datetime.strptime(value, "%Y%m%d%H%M%S")
    except ValueError:
        return None


def _slug(tag: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", tag.lower()).strip("_")


def _number(text: str) -> int | float | str:
    t = text.strip().lstrip("$").rstrip("s")
    try:
        return int(t)
    except ValueError:
        pass
    try:
        return float(t)
    except ValueError:
        return text.strip()


def _split_system(body: str) -> tuple[str | None, str]:
    """ChatDev prints ``[<system message>]\\n\\n<utterance>``: split the two."""
    if body.startswith("["):
        end = body.find("]\n\n")
        if end > 0:
            return body[1:end], body[end + 3 :]
        if body.endswith("]"):
            return body[1:-1], ""
    return None, body


def _metrics(text: str) -> dict[str, Any]:
    return {k: _number(v) for k, v in _METRIC.findall(text)}


def _table(text: str) -> dict[str, str]:
    """The ``| **key** | value |`` rows of a parameter table (values may span lines)."""
    rows: dict[str, str] = {}
    key: str | None = None
    for line in text.split("\n"):
        m = _ROW.match(line)
        if m:
            key = m.group(1)
            rows[key] = m.group(2)
            continue
        start = re.match(r"^\| \*\*(\w+)\*\* \| (.*)$", line)
        if start:
            key = start.group(1)
            rows[key] = start.group(2)
        elif key is not None and line.strip() and not line.startswith("| ---"):
            cont = line[:-2] if line.rstrip().endswith(" |") else line
            rows[key] = rows[key] + "\n" + cont.rstrip()
            if line.rstrip().endswith(" |"):
                key = None
        else:
            key = None
    return rows


@register
class ChatDevImporter(Importer):
    name = "chatdev"
    description = "ChatDev 1.0 run log (.log): [YYYY-DD-MM ...] blocks, role-play chat turns, phases"

    def sniff(self, src: Source) -> float:
        try:
            if src.json_shape != "none":  # JSON (a "[date ...]" block line is not a JSON array)
                return 0.0
            head = src.head_text
            if head.lstrip()[:1] != "[":
                return 0.0  # every ChatDev log starts with a "[date time LEVEL]" block
            first = next((ln for ln in head[:8192].split("\n", 20)[:20] if ln.strip()), "")
            if not _BLOCK.at.match(first.rstrip("\r")):
                return 0.0
            hits = sum(1 for mk in _MARKERS if mk in head)
            if _TURN_SEARCH.search(head):
                hits += 2
            if hits >= 2:
                return 0.95
            if hits == 1:
                return 0.7
            return 0.0
        except Exception:
            return 0.0

    # -- reading blocks ------------------------------------------------------------------

    def _blocks(self, src: Source) -> Iterator[tuple[int, int, re.Match[str], str]]:
        """``(first_line, last_line, header_match, message)`` per block; message = header text + rest.

        The log is one trace, so it is read whole (memory follows the trace) and the block headers
        are found by one regex scan: a Python loop over every line was most of the load time."""
        text = src.log_text
        heads = _BLOCK.matches(text)
        n_lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
        if not heads:
            if n_lines > 50:
                raise FormatError("no [YYYY-DD-MM HH:MM:SS LEVEL] block in the first 50 lines")
            raise FormatError("no [YYYY-DD-MM HH:MM:SS LEVEL] log block found; not a ChatDev log")
        starts = [start for start, _m in heads]
        line = text.count("\n", 0, starts[0]) + 1
        if line > 51:
            raise FormatError("no [YYYY-DD-MM HH:MM:SS LEVEL] block in the first 50 lines")
        if text[: starts[0]].strip():
            raise FormatError(
                "text before the first [YYYY-DD-MM HH:MM:SS LEVEL] block; not a ChatDev log", line=1
            )
        for i, (start, m) in enumerate(heads):
            eol = m.end()  # the header pattern ends at its line's end
            if i + 1 < len(heads):
                nxt = starts[i + 1]
                end_line = line + text.count("\n", start, nxt) - 1
                yield line, end_line, m, m.group(8) + text[eol : nxt - 1]
                line = end_line + 1
            else:
                lines = [
                    m.group(8),
                    *(text[eol + 1 :].removesuffix("\n").split("\n") if eol < len(text) else []),
                ]
                while lines and not lines[-1].strip():
                    lines.pop()
                yield line, n_lines, m, "\n".join(lines)

    # -- load --------------------------------------------------------------------------

    def load(self, src: Source) -> Iterator[Trace | TraceLoadError]:
        if src.is_dir or src.is_binary:
            raise FormatError("not a text log file")
        yield self._trace(src)

    def _trace(self, src: Source) -> Trace:
        b = TraceBuilder(self.name, src.path)
        levels: Counter[str] = Counter()
        noise = 0
        header: dict[str, Any] = {}
        pending_usage: tuple[int, int, datetime | None, str, Usage | None, dict[str, str]] | None = None
        phase: str | None = None
        phase_roles: tuple[str | None, str | None] = (None, None)
        model: str | None = None
        first_model: str | None = None
        call_no = 0
        termination: Termination | None = None
        outcome: Outcome | None = None
        run_usage: Usage | None = None
        started: datetime | None = None
        ended: datetime | None = None
        first_ts: datetime | None = None
        last_ts: datetime | None = None
        chat_turns = 0
        saw_marker = False

        def flush_usage(actor: str | None, call_id: str | None) -> None:
            nonlocal pending_usage
            if pending_usage is None:
                return
            line, end, ts, text, usage, fields = pending_usage
            pending_usage = None
            b.add(
                "llm_call",
                actor=actor,
                content=None,
                llm_call_id=call_id,
                model=model,
                usage=usage,
                phase=phase,
                started_at=ts,
                subtype="openai_usage_info",
                source=source_ref(line=line, end_line=end),
                raw=text,
                extra={"fields": fields},
            )

        for line, end, m, message in self._blocks(src):
            level = m.group(7)
            levels[level] += 1
            ts = _block_time(m)
            if ts is not None:
                first_ts = first_ts or ts
                last_ts = ts
            raw_block = (m.string[m.start(1) - 1 : m.start(8)] + message).rstrip("\n")
            ref = source_ref(line=line, end_line=end if end != line else None)
            first_line = message.split("\n", 1)[0]
            if any(first_line.startswith(n) for n in _NOISE) and "\n" not in message.strip():
                noise += 1
                continue
            speaker: str | None = None
            rest = first_line
            sm = _SPEAKER.match(first_line)
            if sm:
                speaker, rest = sm.group(1), sm.group(2)
            body = message.split("\n", 1)[1].strip("\n") if "\n" in message else ""

            if level not in ("INFO", "DEBUG"):
                flush_usage(None, None)
                b.add(
                    "error",
                    actor=speaker,
                    content=message.strip(),
                    subtype=level.lower(),
                    phase=phase,
                    started_at=ts,
                    source=ref,
                    raw=raw_block,
                    extra={"level": level},
                )
                continue

            turn = _TURN.match(rest)
            if turn:
                saw_marker = True
                chat_turns += 1
                who, other, ph, n = turn.group(1), turn.group(2), turn.group(3), int(turn.group(4))
                actor = speaker or who
                phase = ph
                call_no += 1
                call_id = f"call-{call_no}" if pending_usage is not None else None
                flush_usage(actor, call_id)
                sys_msg, content = _split_system(body)
                extra: dict[str, Any] = {"turn": n}
                if sys_msg is not None:
                    extra["system_message"] = sys_msg
                b.add(
                    "message",
                    actor=actor,
                    role="assistant",
                    content=content,
                    recipients=[other],
                    phase=ph,
                    subtype="chat_turn",
                    llm_call_id=call_id,
                    model=model,
                    started_at=ts,
                    source=ref,
                    raw=raw_block,
                    extra=extra,
                )
                continue

            tm = _TAG.match(rest)
            tag = tm.group(1).strip() if tm else None
            if tag == "OpenAI_Usage_Info Receive":
                saw_marker = True
                flush_usage(None, None)
                fields = {}
                for ln in body.split("\n"):
                    if ":" in ln:
                        k, v = ln.split(":", 1)
                        fields[k.strip()] = v.strip()
                usage = usage_from({k: _number(v) for k, v in fields.items()})
                pending_usage = (line, end, ts, raw_block, usage, fields)
                continue

            flush_usage(None, None)
            common: dict[str, Any] = {"started_at": ts, "source": ref, "raw": raw_block}
            if tag is None:
                b.add(
                    "system",
                    actor=speaker,
                    content=message.strip(),
                    subtype="log",
                    phase=phase,
                    **common,
                )
                continue
            slug = _slug(tag)
            inline = tm.group(2).strip() if tm else ""
            text = "\n".join(p for p in (inline, body) if p).strip()
            if slug == "preprocessing":
                saw_marker = True
                for ln in text.split("\n"):
                    kv = _KV.match(ln)
                    if kv:
                        header[kv.group(1)] = kv.group(2).strip()
                stamp = _STAMP.search(text)
                if stamp:
                    header["start_stamp"] = stamp.group(2)
                    started = _stamp_time(stamp.group(2))
                header["text"] = text
                b.add("system", actor=speaker, content=text, subtype="preprocessing", **common)
            elif slug == "chatting":
                saw_marker = True
                params = _table(text)
                phase = params.get("phase_name") or phase
                asst, user = params.get("assistant_role_name"), params.get("user_role_name")
                phase_roles = (asst, user)
                mt = params.get("model_type")
                if mt:
                    model = mt.removeprefix("ModelType.")
                    first_model = first_model or model
                for name, prompt in ((asst, "assistant_role_prompt"), (user, "user_role_prompt")):
                    if name and params.get(prompt):
                        b.agent(name, system_prompt=params[prompt], model=model)
                b.add(
                    "system",
                    actor=speaker,
                    content=text,
                    subtype="phase_start",
                    phase=phase,
                    **common,
                    extra={"params": params},
                )
            elif slug == "start_chat":
                saw_marker = True
                sys_msg, content = _split_system(body)
                asst = phase_roles[0]
                b.add(
                    "message",
                    actor=speaker,
                    role="user",
                    content=content,
                    recipients=[asst] if asst else None,
                    phase=phase,
                    subtype="start_chat",
                    **common,
                    extra={"system_message": sys_msg} if sys_msg is not None else {},
                )
            elif slug == "post_info":
                metrics = _metrics(text)
                stamps = dict((k, v) for k, v in _STAMP.findall(text))
                if "Ends" in stamps:
                    ended = _stamp_time(stamps["Ends"])
                ev = b.add(
                    "termination" if "Ends" in stamps else "system",
                    actor=speaker,
                    content=text,
                    subtype="post_info",
                    phase=phase,
                    **common,
                    extra={"metrics": metrics},
                )
                if "Ends" in stamps:
                    termination = Termination(
                        reason="completed",
                        by="harness",
                        native=f"ChatDev Ends ({stamps['Ends']})",
                        at_seq=ev.seq,
                    )
                outcome = Outcome(metrics=metrics)
                run_usage = usage_from(
                    {
                        "prompt_tokens": metrics.get("num_prompt_tokens"),
                        "completion_tokens": metrics.get("num_completion_tokens"),
                        "total_tokens": metrics.get("num_total_tokens"),
                        "cost": metrics.get("cost"),
                    }
                )
            else:
                kind = "artifact" if tag.lower() in _ARTIFACT_TAGS else "system"
                extra = {"metrics": _metrics(text)} if slug == "software_info" else {}
                if slug == "execute_detail":
                    em = re.search(r"SimplePhase:\[(\w+)\]", text)
                    if em:
                        extra = {"simple_phase": em.group(1)}
                        cm = re.search(r"ComposedPhase:\[(\w+)\], cycle (\d+)", text)
                        if cm:
                            extra.update(composed_phase=cm.group(1), cycle=int(cm.group(2)))
                b.add(kind, actor=speaker, content=text, subtype=slug, phase=phase, **common, extra=extra)
        flush_usage(None, None)
        if not saw_marker:
            raise FormatError(
                "log blocks found but no ChatDev markers (chat turns, Start Chat, Preprocessing)"
            )

        last = b.last
        if termination is None and last is not None and last.kind == "error" and last.subtype != "warning":
            native = (last.content or "").split("\n", 1)[0]
            termination = Termination(reason="error", by="error", native=native or None, at_seq=last.seq)
        log_file = header.get("Log File")
        tid = None
        if isinstance(log_file, str) and log_file.strip():
            tid = re.split(r"[\\/]", log_file.strip())[-1].removesuffix(".log") or None
        extra_t: dict[str, Any] = {
            "block_levels": dict(levels),
            "blocks": sum(levels.values()),
            "noise_blocks": noise,
            "chat_turns": chat_turns,
        }
        if header.get("project_name"):
            extra_t["project_name"] = header["project_name"]
        trace = b.build(
            trace_id=tid or b.trace_id,
            framework="ChatDev",
            model=first_model,
            task=header.get("task_prompt"),
            started_at=started or first_ts,
            ended_at=ended or last_ts,
            usage=run_usage,
            termination=termination,
            outcome=outcome,
            raw=header or None,
            extra=extra_t,
        )
        return trace
