"""OpenHands V0 (``openhands-ai`` <= 0.x) trajectories: a list of serialised events.

Handled shapes:

* an exported trajectory: a JSON list of events (``/api/conversations/<id>/trajectory``,
  ``save_trajectory_path``, the ``tests/runtime/trajs`` files);
* an evaluation record ``{instance_id, instruction?, history: [events], metrics?, test_result?,
  error?, ...}``, one JSON object, or one per line in ``output.jsonl`` (a bad line is reported,
  the other lines still load); ``history`` may also be a list of ``[action, observation]`` pairs
  (OpenHands <= 0.9);
* a conversation folder of the V0 server's file store (``<file_store_path>/sessions/<sid>/`` or
  ``users/<user>/conversations/<sid>/``): ``events/<id>.json``, one event per file (``id`` counts
  from 0), beside ``metadata.json``; the ``<sid>`` folder or its ``events`` folder is one trace
  (``handles_dirs``), a folder of such conversations gives one trace per conversation. Events are
  taken in numeric id order and go through the same mapping as a trajectory list. The store also
  keeps pages of 25 events in ``event_cache/<start>-<end>.json``, written after the single files
  they copy: a page is read only for ids that have no readable single file. An event file that is
  not JSON or not an event object is reported (a :class:`~mastkit.errors.TraceLoadError` naming it)
  and the rest loads. ``agent_state.pkl`` and ``conversation_stats.pkl`` are pickles and are never
  opened (unpickling can run code); ``init.json`` (session settings), ``llm_registry.json``,
  ``exp_config.json`` and ``event_count`` are not read either: their names are listed in
  ``Trace.raw["files_not_read"]``.

Each event is ``{id, timestamp, source: agent|user|environment, message, action | observation,
args | (content, extras), cause?, tool_call_metadata?, llm_metrics?}``.

Mapping: ``action: message`` -> ``message``; ``think`` -> ``reasoning``; ``finish`` ->
``termination``; tool actions (``run``, ``read``, ``edit``, ``write``, ``browse*``, ``run_ipython``,
``mcp``, ``delegate``, ...) -> ``reasoning`` (``args.thought``, when set) + ``tool_call`` (name =
``tool_call_metadata.function_name`` or the action, arguments from the model's tool call, else
``args``); other actions (``change_agent_state``, ``system``, ``recall``, ``condensation``) ->
``system`` with the action as subtype (``condensation`` -> ``context_compaction``).
Observations answering an action (``cause`` or ``tool_call_metadata``) -> ``tool_result``
(``exit_code`` from ``extras.metadata.exit_code``); ``error`` -> ``error`` (or an error result);
``agent_state_changed``/``null``/others -> ``system``. Usage: the model response's ``usage`` on
the first event of that response (``tool_call_metadata.model_response.id`` = ``llm_call_id``), else
the delta of the cumulative ``llm_metrics.accumulated_*`` counters. Termination: a ``finish``
action, else the last ``agent_state``.

``metadata.json`` (``ConversationMetadata``): ``conversation_id`` -> ``trace_id`` (else the folder
name), ``llm_model`` -> ``Trace.model`` when no model response names one, ``created_at`` /
``last_updated_at`` -> ``started_at`` / ``ended_at``, ``accumulated_cost`` and ``prompt_tokens`` /
``completion_tokens`` / ``total_tokens`` -> ``Trace.usage``, ``title``, repository and trigger ->
``Trace.extra``; the whole document -> ``Trace.raw["metadata"]``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from mastkit.errors import FormatError, TraceLoadError
from mastkit.traces._build import (
    TraceBuilder,
    dumps_text,
    parse_arguments,
    parse_ts,
    read_json_file,
    source_ref,
    usage_from,
    with_cost,
)
from mastkit.traces.importers.openhands_v1 import _EVENT_FILE as _V1_EVENT_FILE  # the V1 SDK's names
from mastkit.traces.model import (
    Outcome,
    SourceRef,
    TerminatedBy,
    Termination,
    ToolCall,
    ToolResult,
    Trace,
    Usage,
)
from mastkit.traces.registry import Importer, register
from mastkit.traces.source import Source

AGENT = "agent"
_SOURCES = frozenset(("agent", "user", "environment"))
_SYSTEM_ACTIONS = frozenset(
    ("change_agent_state", "system", "recall", "condensation", "condensation_request", "null", "reject")
)
_STATES: dict[str, tuple[str, TerminatedBy]] = {
    "finished": ("final_answer", "agent"),
    "awaiting_user_input": ("awaiting_user_input", "agent"),
    "error": ("error", "error"),
    "stopped": ("user", "user"),
    "paused": ("user", "user"),
    "rejected": ("user", "user"),
    "user_rejected": ("user", "user"),
}


def is_v0_event(e: Any) -> bool:
    return (
        isinstance(e, dict)
        and isinstance(e.get("source"), str)
        and e["source"] in _SOURCES
        and ("action" in e or "observation" in e)
        and ("id" in e or "timestamp" in e)
    )


def is_flat_event(e: Any) -> bool:
    """An event in the older flat serialisation (``dataclasses.asdict`` of the event, as the
    openhands-resolver wrote ``history`` in 2024): ``action`` or ``observation`` with the arguments /
    observation fields at the top level; no ``source``, ``id``, ``timestamp``, ``args`` or ``extras``."""
    return (
        isinstance(e, dict)
        and (isinstance(e.get("action"), str) or isinstance(e.get("observation"), str))
        and not ({"source", "args", "extras", "role"} & set(e))
    )


def _unflatten(e: dict[str, Any], prev_action: bool) -> dict[str, Any]:
    """A flat event in the usual layout: ``args`` / ``content`` + ``extras``, with the ``source`` it
    dropped. A ``message`` is the agent's when it waits for a reply (the agent asking), else the
    user's; an observation answers the action before it (``_answers``)."""
    if isinstance(e.get("action"), str):
        action = e["action"]
        args = {k: v for k, v in e.items() if k != "action"}
        source = "agent"
        if action == "message":
            source = "agent" if e.get("wait_for_response") is True else "user"
        return {"source": source, "action": action, "args": args}
    extras = {k: v for k, v in e.items() if k not in ("observation", "content")}
    out: dict[str, Any] = {"source": "environment", "observation": e["observation"], "extras": extras}
    out["content"] = e.get("content")
    if prev_action and e["observation"] not in ("agent_state_changed", "null"):
        out["_answers"] = True
    return out


def _is_pair(e: Any) -> bool:
    """An ``[action, observation]`` pair: the ``history`` layout of OpenHands evaluation outputs
    before the flat event list (<= 0.9, 2024)."""
    return isinstance(e, list) and 1 <= len(e) <= 2 and (is_v0_event(e[0]) or is_flat_event(e[0]))


def _flatten(events: list[Any]) -> Iterator[tuple[str, Any]]:
    """(JSON pointer suffix, event) of a flat event list or a list of [action, observation] pairs."""
    for i, e in enumerate(events):
        if isinstance(e, list) and e and all(isinstance(x, dict) for x in e):
            for j, x in enumerate(e):
                yield f"/{i}/{j}", x
        else:
            yield f"/{i}", e


def _issue_id(issue: Any) -> str | None:
    """``owner/repo#number`` of an openhands-resolver record's ``issue``."""
    if not isinstance(issue, dict):
        return None
    owner, repo, number = issue.get("owner"), issue.get("repo"), issue.get("number")
    if isinstance(owner, str) and isinstance(repo, str) and isinstance(number, int):
        return f"{owner}/{repo}#{number}"
    return None


def _why_not_events(events: list[Any]) -> str:
    """What the first events of a history lack to be read as OpenHands events, in words."""
    first = events[0]
    if isinstance(first, list):
        first = first[0] if first else None
    if not isinstance(first, dict):
        return f"history[0] is a JSON {type(first).__name__}, not an event object"
    keys = ", ".join(list(first)[:8]) or "none"
    return f"history[0] has neither an 'action' nor an 'observation' name (keys: {keys})"


def _str(v: Any) -> str | None:
    if v is None:
        return None
    return v if isinstance(v, str) else dumps_text(v)


# -- conversation folders of the V0 file store -------------------------------------------------

_EVENT_FILE = re.compile(r"^(0|[1-9][0-9]{0,17})\.json$")  # events/<id>.json, id as written: no padding
_CACHE_PAGE = re.compile(r"^([0-9]{1,18})-([0-9]{1,18})\.json$")  # event_cache/<start>-<end>.json
_CONTAINERS = frozenset(("sessions", "conversations"))  # sessions/<sid>, users/<u>/conversations/<sid>
# what else the V0 server keeps in a conversation folder (openhands/storage/locations.py); never
# opened: the pickles could run code when loaded, init.json holds the session's settings
_NOT_READ = (
    "agent_state.pkl", "conversation_stats.pkl", "init.json", "llm_registry.json", "exp_config.json",
    "event_count",
)  # fmt: skip
_SNIFF_FILES = 5
_ANY = re.compile("")
_PAGE_SPAN = 1000  # a cache page holds 25 events; a longer span in a name is not a page


def _is_event_object(doc: Any) -> bool:
    """What the V0 server can read back as an event: an object with an ``action`` or ``observation``."""
    return isinstance(doc, dict) and (
        isinstance(doc.get("action"), str) or isinstance(doc.get("observation"), str)
    )


def _scan(folder: Path, pattern: re.Pattern[str], *, first: bool = False) -> list[tuple[re.Match[str], str]]:
    """Files of ``folder`` (paths as str) whose name matches ``pattern``; with ``first``, at most one.
    Names are checked before anything is stat'ed: folders sniffed in a walk are often large and
    rarely conversations."""
    found: list[tuple[re.Match[str], str]] = []
    try:
        with os.scandir(folder) as it:
            for e in it:
                if (m := pattern.match(e.name)) and e.is_file():
                    found.append((m, e.path))
                    if first:
                        break
    except OSError:
        return []
    return found


def _event_files(folder: Path) -> list[tuple[int, str]]:
    """``<id>.json`` files of an events folder, by numeric id (``10.json`` after ``9.json``)."""
    return sorted(((int(m.group(1)), p) for m, p in _scan(folder, _EVENT_FILE)), key=lambda ip: ip[0])


def _cache_pages(conv: Path) -> list[tuple[int, int, str]]:
    """``event_cache/<start>-<end>.json`` pages of a conversation folder, by start id."""
    pages = [(int(m.group(1)), int(m.group(2)), p) for m, p in _scan(conv / "event_cache", _CACHE_PAGE)]
    return sorted((pg for pg in pages if 0 < pg[1] - pg[0] <= _PAGE_SPAN), key=lambda pg: pg[0])


def _layout(folder: Path) -> tuple[Path | None, Path] | None:
    """``(conversation folder or None, events folder)`` for a conversation folder or its ``events``
    folder; None for anything else."""
    events = folder / "events"
    if events.is_dir():
        return folder, events
    if folder.name == "events":
        return folder.parent, folder
    if _scan(
        folder, _EVENT_FILE, first=True
    ):  # event files in a folder of another name: no conversation around them
        return None, folder
    return None


def _is_v0_metadata(doc: Any) -> bool:
    """A serialised ``ConversationMetadata`` (``conversation_id``, ``created_at``, ...)."""
    return isinstance(doc, dict) and isinstance(doc.get("conversation_id"), str) and "created_at" in doc


def _conversation_score(folder: Path) -> float:
    """How sure it is that ``folder`` is a V0 conversation (or its events folder), from content."""
    layout = _layout(folder)
    if layout is None:
        return 0.0
    conv, events = layout
    files = _event_files(events)
    for _eid, path in files[:_SNIFF_FILES]:
        one = Source(path)
        if b'"action"' not in one.head and b'"observation"' not in one.head:
            continue  # not parsed: numbered files of other data sets (Who&When's 1.json ...) are common
        if one.json_shape != "object":
            continue  # a numbered trajectory (a list of events) is a file of its own
        rec = one.first_record
        if isinstance(rec, dict) and "kind" in rec:
            return 0.0  # a V1 event
        if _is_event_object(rec) and is_v0_event(rec):
            return 0.95
    if conv is None or events.name != "events" or (conv / "base_state.json").exists():
        return 0.0  # base_state.json: a V1 conversation
    if not files and _scan(events, _V1_EVENT_FILE, first=True):
        return 0.0
    meta = conv / "metadata.json"
    try:
        if meta.is_file() and _is_v0_metadata(Source(meta).json):
            return 0.7  # event files unreadable or missing: loaded to report them
    except FormatError:
        pass
    if files:
        return 0.0  # numbered files, none of them a V0 event: another data set's
    if _cache_pages(conv):
        return 0.5
    if conv.parent.name in _CONTAINERS and not _scan(events, _ANY, first=True):
        return 0.5  # a conversation whose events are not written yet, named by where it sits
    return 0.0


def _safe_score(folder: Path) -> float:
    """:func:`_conversation_score` for the load of a folder of conversations, where one odd
    subfolder must not end the load."""
    try:
        return _conversation_score(folder)
    except Exception:  # a sniffer never raises
        return 0.0


def _subfolders(folder: Path) -> list[Path]:
    try:
        return [p for p in Source(folder).children() if p.is_dir() and not p.name.startswith(".")]
    except OSError:
        return []


@register
class OpenHandsV0Importer(Importer):
    name = "openhands_v0"
    description = (
        "OpenHands V0 trajectories (event lists), evaluation output records with history and "
        "conversation folders of the V0 file store (sessions/<sid>/events/<id>.json + metadata.json)"
    )
    handles_dirs = True  # conversation folders
    handles_files = True  # trajectories and evaluation outputs

    def sniff(self, src: Source) -> float:
        if src.is_dir:
            return _conversation_score(src.path)  # the registry guards sniffers
        rec = src.first_record
        if src.json_shape == "array":
            return 0.9 if is_v0_event(rec) else 0.0
        if src.json_shape in ("object", "jsonl") and isinstance(rec, dict):
            hist = rec.get("history")
            if isinstance(hist, list) and hist and (is_v0_event(hist[0]) or _is_pair(hist[0])):
                return 0.85
            if isinstance(hist, list) and hist and is_flat_event(hist[0]):
                return 0.8  # the older flat events (openhands-resolver output.jsonl)
            traj = rec.get("trajectory")
            if isinstance(traj, list) and traj and is_v0_event(traj[0]):
                return 0.85  # the server's /trajectory response saved as it came
        return 0.0

    def load(self, src: Source) -> Iterator[Trace | TraceLoadError]:
        if src.is_dir:
            yield from self._load_folder(src.path)
            return
        if src.json_shape == "jsonl":
            for line, offset, value in src.iter_jsonl():
                if isinstance(value, FormatError):
                    yield TraceLoadError(src.path, value.reason, line=line, offset=offset)
                    continue
                if not isinstance(value, dict) or not isinstance(value.get("history"), list):
                    yield TraceLoadError(src.path, "record has no 'history' event list", line=line)
                    continue
                try:
                    yield self._trace(src, value["history"], value, line=line, index=line)
                except (FormatError, ValueError, TypeError) as exc:
                    yield TraceLoadError(src.path, f"bad record: {exc}", line=line)
            return
        doc = src.json
        if isinstance(doc, list):
            yield self._trace(src, doc, None, line=None, index=None)
        elif isinstance(doc, dict) and isinstance(doc.get("history"), list):
            yield self._trace(src, doc["history"], doc, line=None, index=None)
        elif isinstance(doc, dict) and isinstance(doc.get("trajectory"), list):
            # GET /api/conversations/<id>/trajectory: {"trajectory": [events]}
            yield self._trace(src, doc["trajectory"], None, line=None, index=None, base="/trajectory")
        else:
            raise FormatError(
                "not an OpenHands V0 trajectory: expected a list of events, {history: [...]} or {trajectory: [...]}"
            )

    def _trace(
        self,
        src: Source,
        events: list[Any],
        envelope: dict[str, Any] | None,
        *,
        line: int | None,
        index: int | None,
        base: str | None = None,
    ) -> Trace:
        if events and not any(is_v0_event(e) or _is_pair(e) or is_flat_event(e) for e in events[:5]):
            raise FormatError(f"not an OpenHands V0 trajectory: {_why_not_events(events)}")
        tid = None
        if envelope is not None:
            for key in ("instance_id", "conversation_id", "sid"):
                if isinstance(envelope.get(key), (str, int)):
                    tid = str(envelope[key])
                    break
            else:
                tid = _issue_id(envelope.get("issue"))
        b = TraceBuilder(self.name, src.path, trace_id=tid, index=index)
        if base is None:
            base = "/history" if envelope is not None else ""
        state = self._map(
            b, ((source_ref(line=line, pointer=f"{base}{where}"), e) for where, e in _flatten(events))
        )
        fields = self._fields(state)
        if envelope is not None:
            rest = {k: v for k, v in envelope.items() if k != "history"}
            fields["raw"] = rest
            if isinstance(rest.get("instance_id"), str):
                fields["task_id"] = rest["instance_id"]
            elif tid is not None:
                fields["task_id"] = tid  # resolver output: the issue
            if isinstance(rest.get("instruction"), str):
                fields["task"] = rest["instruction"]
            meta = rest.get("metadata")
            meta = meta if isinstance(meta, dict) else {}
            llm_config = meta.get("llm_config")
            llm_config = llm_config if isinstance(llm_config, dict) else {}
            model = llm_config.get("model") or meta.get("model_name")
            if fields["model"] is None and isinstance(model, str):
                fields["model"] = model
            metrics = rest.get("metrics")
            if isinstance(metrics, dict):  # whole-run totals of the eval record
                usage = with_cost(
                    usage_from(metrics.get("accumulated_token_usage")), metrics.get("accumulated_cost")
                )
                if usage is not None:
                    fields["usage"] = usage
            test_result = rest.get("test_result")
            metrics_out: dict[str, Any] = (
                {"test_result": test_result} if isinstance(test_result, dict) else {}
            )
            if isinstance(rest.get("success"), bool):  # the resolver's own LLM guess, not a test verdict
                metrics_out["resolver_success"] = rest["success"]
                if isinstance(rest.get("success_explanation"), str):
                    metrics_out["resolver_success_explanation"] = rest["success_explanation"]
            if metrics_out or state.final_output is not None:
                fields["outcome"] = Outcome(final_output=state.final_output, metrics=metrics_out)
            err = rest.get("error")
            if isinstance(err, str) and err and state.finish_seq is None:
                fields["termination"] = Termination(reason="error", by="error", native=err)
        elif state.final_output is not None:
            fields["outcome"] = Outcome(final_output=state.final_output)
        return b.build(**fields)

    def _map(self, b: TraceBuilder, items: Iterable[tuple[SourceRef, Any]]) -> _State:
        """Map events, in order, onto ``b``: the one mapping of every V0 container."""
        state = _State()
        for ref, e in items:
            if not isinstance(e, dict):
                b.add("message", content=dumps_text(e), source=ref, raw=e, extra={"unrecognised": True})
                continue
            self._event(b, e, ref, state)
        return state

    @staticmethod
    def _fields(state: _State) -> dict[str, Any]:
        """Trace fields the events give (model, task, times, termination)."""
        fields: dict[str, Any] = {"framework": "OpenHands", "model": state.model, "task": state.task}
        if state.started is not None:
            fields["started_at"] = state.started
        if state.ended is not None:
            fields["ended_at"] = state.ended
        if state.finish_seq is not None:
            fields["termination"] = Termination(
                reason="final_answer", by="agent", native="finish", at_seq=state.finish_seq
            )
        elif state.last_state is not None:
            reason, by = _STATES.get(state.last_state, ("unknown", "unknown"))
            fields["termination"] = Termination(
                reason=reason, by=by, native=state.last_state, at_seq=state.last_state_seq
            )
        return fields

    # -- conversation folders ------------------------------------------------------------------

    def _load_folder(self, folder: Path) -> Iterator[Trace | TraceLoadError]:
        layout = _layout(folder)
        if layout is not None:
            yield from self._conversation(*layout)
            return
        # a folder of conversations (sessions/, users/<user>/conversations/): one trace each
        found = False
        for sub in _subfolders(folder):
            sub_layout = _layout(sub)
            if sub_layout is not None and _safe_score(sub) > 0:
                found = True
                yield from self._conversation(*sub_layout)
        if not found:
            raise FormatError(
                "not an OpenHands V0 conversation folder: no events/ folder of <id>.json event files"
            )

    def _conversation(self, conv: Path | None, events: Path) -> Iterator[Trace | TraceLoadError]:
        """One conversation: ``events/<id>.json`` in id order (cache pages fill missing ids), with
        ``metadata.json``. Bad files are yielded as errors before the trace."""
        root = conv if conv is not None else events
        paths: list[str] = []
        meta: dict[str, Any] | None = None
        meta_path = conv / "metadata.json" if conv is not None else None
        if meta_path is not None and meta_path.is_file():
            doc = read_json_file(meta_path, "metadata.json")
            if isinstance(doc, TraceLoadError):
                yield doc
            elif isinstance(doc, dict):
                meta = doc
                paths.append(str(meta_path))
            else:
                yield TraceLoadError(meta_path, "metadata.json: expected a JSON object")
        found: dict[int, tuple[SourceRef, dict[str, Any]]] = {}
        bad: list[tuple[int, TraceLoadError]] = []  # event id, what is wrong with its file
        files = _event_files(events)
        for eid, path in files:
            doc = read_json_file(path, "event file")
            if isinstance(doc, TraceLoadError):
                bad.append((eid, doc))
                continue
            if not _is_event_object(doc):
                what = "an object" if isinstance(doc, dict) else f"a JSON {type(doc).__name__}"
                reason = f"not an OpenHands V0 event ({what} without 'action' or 'observation')"
                bad.append((eid, TraceLoadError(path, reason)))
                continue
            found[eid] = (source_ref(path=path), doc)
            paths.append(path)
        page_errors: list[TraceLoadError] = []
        recovered: dict[int, str] = {}
        pages = _cache_pages(conv) if conv is not None else []
        for start, end, page_path in pages:
            if all(i in found for i in range(start, end)):
                continue  # every event of the page was read from its own file: the usual case
            page = read_json_file(page_path, "event cache page")
            if isinstance(page, TraceLoadError):
                page_errors.append(page)
                continue
            if not isinstance(page, list):
                page_errors.append(
                    TraceLoadError(page_path, "event cache page: expected a JSON list of events")
                )
                continue
            used = False
            for k, rec in enumerate(page[: end - start]):
                eid = start + k  # a page holds the events start..end-1, in order
                if eid in found or not _is_event_object(rec):
                    continue
                found[eid] = (source_ref(path=page_path, pointer=f"/{k}"), rec)
                recovered[eid] = page_path
                used = True
            if used:
                paths.append(page_path)
        for eid, err in bad:
            if eid in recovered:
                err.reason += (
                    f" (event {eid} read from its copy in event_cache/{os.path.basename(recovered[eid])})"
                )
            yield err
        yield from page_errors
        if not found:
            if not bad and not page_errors:
                yield TraceLoadError(
                    events, "empty conversation: the events folder holds no <id>.json event files"
                )
            return
        tid = meta.get("conversation_id") if meta is not None else None
        if not (isinstance(tid, str) and tid):
            tid = conv.name if conv is not None else None
        b = TraceBuilder(self.name, root, trace_id=tid)
        state = self._map(b, (found[eid] for eid in sorted(found)))
        fields = self._fields(state)
        fields["source_paths"] = [str(root), *paths]
        if state.final_output is not None:
            fields["outcome"] = Outcome(final_output=state.final_output)
        raw: dict[str, Any] = {}
        if meta is not None:
            raw["metadata"] = meta
            _metadata_fields(fields, meta)
        skipped = [name for name in _NOT_READ if conv is not None and (conv / name).exists()]
        if skipped:
            raw["files_not_read"] = skipped  # listed, never opened
        if raw:
            fields["raw"] = raw
        yield b.build(**fields)

    def _event(self, b: TraceBuilder, e: dict[str, Any], ref: SourceRef, st: _State) -> None:
        native = e
        if is_flat_event(e):
            e = _unflatten(e, st.prev_action)
        st.prev_action = "action" in e and e.get("action") not in _SYSTEM_ACTIONS
        source = e.get("source")
        actor = source if isinstance(source, str) else None
        eid = _str(e.get("id"))
        cause = _str(e.get("cause"))
        ts = parse_ts(e.get("timestamp"))
        if ts is not None:
            st.started = st.started or ts
            st.ended = ts
        common: dict[str, Any] = {"id": eid, "parent_id": cause, "started_at": ts, "source": ref}
        tcm = e.get("tool_call_metadata")
        tcm = tcm if isinstance(tcm, dict) else None
        resp = tcm.get("model_response") if tcm is not None else None
        resp = resp if isinstance(resp, dict) else None
        llm_call_id = _str(resp.get("id")) if resp is not None else None
        if resp is not None and isinstance(resp.get("model"), str) and st.model is None:
            st.model = resp["model"]
        message = _str(e.get("message"))
        raw: Any = native
        if "action" in e:
            action = _str(e.get("action")) or "unknown"
            args = e.get("args") if isinstance(e.get("args"), dict) else {}
            assert isinstance(args, dict)
            usage = self._usage(e, resp, llm_call_id, st) if source == "agent" else None
            role = "assistant" if source == "agent" else ("user" if source == "user" else "environment")
            thought = _str(args.get("thought"))
            if action == "message":
                text = _str(args.get("content")) or message
                b.add("message", actor=actor, role=role, content=text, llm_call_id=llm_call_id, usage=usage,
                      raw=raw, **common)  # fmt: skip
                if source == "user" and st.task is None:
                    st.task = text
                return
            if action in _SYSTEM_ACTIONS:
                subtype = "context_compaction" if action.startswith("condensation") else action
                content = message or dumps_text(args)
                b.add("system", actor=actor, role="system" if source != "agent" else "assistant", content=content,
                      subtype=subtype, raw=raw, **common)  # fmt: skip
                if action == "change_agent_state" and isinstance(args.get("agent_state"), str):
                    st.last_state, st.last_state_seq = args["agent_state"], len(b.events) - 1
                return
            if action == "think":
                b.add("reasoning", actor=actor, role=role, content=thought or message, llm_call_id=llm_call_id,
                      usage=usage, raw=raw, **common)  # fmt: skip
                return
            if action == "finish":
                text = _str(args.get("final_thought")) or thought or message
                ev = b.add("termination", actor=actor, role=role, content=text, subtype="finish",
                           llm_call_id=llm_call_id, usage=usage, raw=raw, **common)  # fmt: skip
                st.finish_seq = ev.seq
                st.final_output = text
                return
            if thought and thought.strip():
                b.add("reasoning", actor=actor, role=role, content=thought, llm_call_id=llm_call_id, usage=usage,
                      raw=raw, **common)  # fmt: skip
                raw, usage = None, None
                common = {**common, "id": None}
            call_id = _str(tcm.get("tool_call_id")) if tcm is not None else None
            name = _str(tcm.get("function_name")) if tcm is not None else None
            arguments, arguments_raw = self._arguments(resp, call_id)
            if arguments is None and arguments_raw is None:
                arguments, arguments_raw = parse_arguments({k: v for k, v in args.items() if k != "thought"})
            b.add(
                "tool_call", actor=actor, role=role, llm_call_id=llm_call_id, usage=usage, raw=raw,
                tool_call=ToolCall(name=name or action, call_id=call_id, arguments=arguments,
                                   arguments_raw=arguments_raw),
                extra={"action": action} if name and name != action else {}, **{**common, "id": eid},
            )  # fmt: skip
            return
        obs: str = _str(e.get("observation")) or "unknown"
        extras = e.get("extras") if isinstance(e.get("extras"), dict) else {}
        assert isinstance(extras, dict)
        obs_text = _str(e.get("content"))
        if obs == "agent_state_changed":
            new_state = extras.get("agent_state")
            b.add("system", actor=actor, role="environment", content=_str(new_state) or message, subtype=obs, raw=raw,
                  **common)  # fmt: skip
            if isinstance(new_state, str):
                st.last_state, st.last_state_seq = new_state, len(b.events) - 1
            return
        answers = e.get("_answers") is True  # a flat observation: it answers the action before it
        if obs in ("null", "recall", "condensation") or (
            cause is None and tcm is None and obs != "error" and not answers
        ):
            subtype = "context_compaction" if obs == "condensation" else obs
            b.add("system", actor=actor, role="environment", content=obs_text or message, subtype=subtype, raw=raw,
                  **common)  # fmt: skip
            return
        if obs == "error" and cause is None and tcm is None and not answers:
            b.add("error", actor=actor, content=obs_text or message, raw=raw, **common)
            return
        meta = extras.get("metadata")
        code = meta.get("exit_code") if isinstance(meta, dict) else extras.get("exit_code")
        code = code if isinstance(code, int) and not isinstance(code, bool) else None
        success = e.get("success")
        if isinstance(success, bool):
            is_error: bool | None = not success
        elif obs in ("error", "user_rejected"):
            is_error = True
        elif code is not None:
            is_error = code != 0
        else:
            is_error = None
        output = obs_text if obs_text else message
        b.add(
            "tool_result", actor="environment", role="tool", raw=raw,
            tool_result=ToolResult(
                call_id=_str(tcm.get("tool_call_id")) if tcm is not None else None,
                name=_str(tcm.get("function_name")) if tcm is not None else obs,
                output=output, is_error=is_error, exit_code=code,
                status="rejected" if obs == "user_rejected" else None,
            ),
            extra={"observation": obs}, **common,
        )  # fmt: skip

    @staticmethod
    def _arguments(resp: dict[str, Any] | None, call_id: str | None) -> tuple[Any, str | None]:
        if resp is None:
            return None, None
        choices = resp.get("choices")
        if not isinstance(choices, list):
            return None, None
        for ch in choices:
            msg = ch.get("message") if isinstance(ch, dict) else None
            calls = msg.get("tool_calls") if isinstance(msg, dict) else None
            if not isinstance(calls, list):
                continue
            for c in calls:
                if isinstance(c, dict) and (call_id is None or c.get("id") == call_id):
                    fn = c.get("function")
                    if isinstance(fn, dict):
                        return parse_arguments(fn.get("arguments"))
        return None, None

    @staticmethod
    def _usage(
        e: dict[str, Any], resp: dict[str, Any] | None, llm_call_id: str | None, st: _State
    ) -> Usage | None:
        if llm_call_id is not None:
            if llm_call_id in st.seen_calls:
                return None
            st.seen_calls.add(llm_call_id)
        if resp is not None:
            u = usage_from(resp.get("usage"))
            if u is not None:
                return u
        metrics = e.get("llm_metrics")
        if not isinstance(metrics, dict):
            return None
        acc = metrics.get("accumulated_token_usage")
        cost = metrics.get("accumulated_cost")
        cur_in = acc.get("prompt_tokens") if isinstance(acc, dict) else None
        cur_out = acc.get("completion_tokens") if isinstance(acc, dict) else None
        cur_cost = float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None
        prev_in, prev_out, prev_cost = st.acc
        u = Usage(
            input_tokens=cur_in - prev_in if isinstance(cur_in, int) else None,
            output_tokens=cur_out - prev_out if isinstance(cur_out, int) else None,
            cost_usd=cur_cost - prev_cost if cur_cost is not None else None,
        )
        st.acc = (
            cur_in if isinstance(cur_in, int) else prev_in,
            cur_out if isinstance(cur_out, int) else prev_out,
            cur_cost if cur_cost is not None else prev_cost,
        )
        return None if u.is_empty() else u


_META_EXTRA = (
    "title", "selected_repository", "selected_branch", "git_provider", "trigger", "pr_number",
    "conversation_version",
)  # fmt: skip


def _metadata_fields(fields: dict[str, Any], meta: dict[str, Any]) -> None:
    """Trace fields from ``metadata.json`` (a serialised ``ConversationMetadata``)."""
    model = meta.get("llm_model")
    if fields.get("model") is None and isinstance(model, str) and model:
        fields["model"] = model
    created = parse_ts(meta.get("created_at"))
    if created is not None:
        # UTC and timezone-aware, where event timestamps are the server's local time without a zone
        fields["started_at"] = created
        updated = parse_ts(meta.get("last_updated_at"))
        ended = fields.get("ended_at")
        if updated is not None:
            fields["ended_at"] = updated
        elif ended is not None and (ended.tzinfo is None) != (created.tzinfo is None):
            del fields["ended_at"]  # no end in the metadata, and the events' end is in another clock
    counts = {k: meta.get(k) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
    usage = with_cost(usage_from(counts), meta.get("accumulated_cost"))
    # the counters default to 0 (never updated): zeros everywhere say nothing
    if usage is not None and any(
        (usage.input_tokens, usage.output_tokens, usage.total_tokens, usage.cost_usd)
    ):
        fields["usage"] = usage
    extra = {k: meta[k] for k in _META_EXTRA if meta.get(k) not in (None, "", [], {})}
    if extra:
        fields["extra"] = extra


class _State:
    def __init__(self) -> None:
        self.model: str | None = None
        self.task: str | None = None
        self.started: Any = None
        self.ended: Any = None
        self.finish_seq: int | None = None
        self.final_output: str | None = None
        self.last_state: str | None = None
        self.last_state_seq: int | None = None
        self.seen_calls: set[str] = set()
        self.acc: tuple[int, int, float] = (0, 0, 0.0)
        self.prev_action = False  # the event before was a tool action (flat observations answer it)
