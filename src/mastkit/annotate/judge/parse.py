"""Parse and validate a judge reply. Never guesses: anything missing stays ``unknown``.

Accepted: a JSON object, possibly wrapped in markdown fences or surrounded by prose (the
first balanced ``{...}`` is taken). A reply with no JSON at all but one label line per mode
(the MAST reference ``@@ A. ... B. ... C. 1.1 Disobey Task Specification: yes`` answer, or
its markdown variants) is recovered from those lines when they cover at least half the
modes — each line is anchored on its code and the verdict must follow the label, so the
"no" in "Ig**no**red" or the "No" of "No or Incomplete Verification" is never taken for a
verdict (agentdash's defect); the recovery is reported in ``problems``. Mode codes are normalised (``1.3``, ``FM1.3``,
``FM-1.3 Step Repetition`` → ``FM-1.3``) against the taxonomy, verdict words are mapped
(``yes``/``true`` → present, ``no``/``false`` → absent). A reply that is not JSON, or
whose shape is wrong, raises :class:`ReplyError` (the caller asks once for a repair). A
mode the reply leaves out becomes ``unknown`` with the reason — never ``absent``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from mastkit.annotate.judge.schema import finding_model
from mastkit.annotate.model import Evidence, ModeVerdict
from mastkit.llm.reply import ReplyError, as_int, json_object
from mastkit.taxonomy import Taxonomy


@dataclass
class ParsedReply:
    verdicts: list[ModeVerdict]
    summary: str | None = None
    task_success: bool | None = None
    responsible_agent: str | None = None
    responsible_step: int | None = None
    problems: list[str] = field(default_factory=list)


_CODE = re.compile(r"(?i)\b(?:FM[-_ ]?)?(\d+)\.(\d+)\b")
_VERDICTS = {
    "present": "present", "yes": "present", "true": "present", "detected": "present", "1": "present",
    "absent": "absent", "no": "absent", "false": "absent", "not present": "absent", "0": "absent",
    "unknown": "unknown", "unsure": "unknown", "uncertain": "unknown", "n/a": "unknown", "null": "unknown",
}  # fmt: skip


def normalise_code(raw: Any, taxonomy: Taxonomy) -> str | None:
    """Map a code as a judge may write it to a taxonomy code, or None."""
    if not isinstance(raw, str):
        return None
    text = raw.strip()
    codes = {m.code for m in taxonomy.modes}
    if text in codes:
        return text
    upper = {c.upper(): c for c in codes}
    if text.upper() in upper:
        return upper[text.upper()]
    m = _CODE.search(text)
    if m:
        for cand in (f"FM-{m.group(1)}.{m.group(2)}", f"{m.group(1)}.{m.group(2)}"):
            if cand in codes:
                return cand
    # Custom taxonomies: the first token may be the code.
    first = text.split()[0] if text.split() else ""
    return upper.get(first.upper())


def _verdict(raw: Any) -> str | None:
    if isinstance(raw, bool):
        return "present" if raw else "absent"
    if isinstance(raw, (int, float)) and raw in (0, 1):
        return "present" if raw else "absent"
    if raw is None:
        return "unknown"
    if isinstance(raw, str):
        return _VERDICTS.get(raw.strip().strip(".").lower())
    return None


def _evidence(items: Any) -> list[Evidence]:
    out = []
    for it in items if isinstance(items, list) else []:
        if isinstance(it, dict):
            start = as_int(it.get("seq_start", it.get("seq", it.get("step"))))
            end = as_int(it.get("seq_end")) if it.get("seq_end") is not None else start
            quote = it.get("quote")
            agent = it.get("agent")
            out.append(
                Evidence(
                    seq_start=start,
                    seq_end=end,
                    quote=quote if isinstance(quote, str) else None,
                    agent=agent if isinstance(agent, str) else None,
                )
            )
        elif isinstance(it, str):
            out.append(Evidence(quote=it))
    return out


# -- free-text label lines (no JSON in the reply) ----------------------------------------------

_VERDICT_WORD = r"(?P<v>not\s+present|yes|no|present|absent|true|false|detected|unknown|unsure|uncertain|n/a)(?![A-Za-z/])"
# A mode code where a label line starts: at a line start (after bullets, markdown, "C."/"C"),
# after a colon (the template's "C. ...:" header) or after a previous verdict (run-together lines).
_LABEL = re.compile(
    r"(?:^|(?<=[:\n])|(?<=\byes)|(?<=\bno)|(?<=\btrue)|(?<=\bfalse)|(?<=\bpresent)|(?<=\babsent))"
    r"[ \t>*_#|\-•]*(?:C\.?\s*)?[*_]*(?:FM[-_ ]?)?(?P<code>\d+\.\d+)(?![\d])"
    r"(?=(?P<rest>[^\n]*))",
    re.IGNORECASE | re.MULTILINE,
)
# After the code: an optional label (no colon or pipe in it) ended by a separator, then the verdict.
_AFTER_CODE = re.compile(
    r"^[\s*_|]*(?:[^:|\n=]{0,90}?(?:\s*[*_]*\s*[:=|]|\s+[-–—]\s)|[:=|\-–—])?[\s*_|\[(\"']*" + _VERDICT_WORD,
    re.IGNORECASE,
)
_SUCCESS = re.compile(r"(?im)^[ \t>*_#\-]*B[.)][^\n]*?(?:[:]|B[.)])[\s*_]*(?P<v>yes|no)\b")
_SUCCESS_TERSE = re.compile(r"(?im)^[ \t>*_#\-]*B[.)][\s*_]*(?P<v>yes|no)\b")
_SUMMARY = re.compile(
    r"(?is)(?:^|\n)[ \t>*_#\-]*A[.)][\s*_]*(?:[^\n:]{0,120}:)?\s*(?P<s>.*?)(?=\n[ \t>*_#\-]*B[.)]|$)"
)


# After the mode's own name: separators only, then the verdict.
_AFTER_NAME = re.compile(r"^[\s*_|:=\-–—→>)\]}(\[\"'.]*" + _VERDICT_WORD, re.IGNORECASE)


def _name_pattern(name: str) -> re.Pattern[str]:
    words = [re.escape(w) for w in re.findall(r"[A-Za-z0-9']+", name)]
    return re.compile(r"[^A-Za-z0-9']*".join(words), re.IGNORECASE)


def _text_verdicts(text: str, taxonomy: Taxonomy) -> dict[str, str]:
    """``{code: verdict}`` from label lines like ``2.5 Ignored Other Agent's Input: no``.

    When the line repeats the mode's name, the verdict is read only after it, so a name that
    starts with a verdict word ("No or Incomplete Verification") is never read as the verdict.
    """
    found: dict[str, str] = {}
    names = {m.code: _name_pattern(m.name) for m in taxonomy.modes if m.name}
    for m in _LABEL.finditer(text.replace("@@", "\n")):
        code = normalise_code(m.group("code"), taxonomy)
        if code is None or code in found:
            continue
        rest = m.group("rest")
        name = names[code].search(rest[:60]) if code in names else None
        if name is not None:
            after = _AFTER_NAME.match(rest[name.end() :])
        else:
            after = _AFTER_CODE.match(rest)
        if after is None:
            continue
        verdict = _verdict(re.sub(r"\s+", " ", after.group("v")))
        if verdict is not None:
            found[code] = verdict
    return found


def _text_reply(text: str, taxonomy: Taxonomy, source: str) -> ParsedReply | None:
    found = _text_verdicts(text, taxonomy)
    if len(found) * 2 < len(taxonomy.modes):
        return None
    problems = [f"no JSON in the reply: {len(found)}/{len(taxonomy.modes)} verdicts read from label lines"]
    verdicts = []
    for m in taxonomy.modes:
        if m.code in found:
            extra: dict[str, Any] = {"from_text": True}
            verdicts.append(ModeVerdict(code=m.code, verdict=found[m.code], source=source, extra=extra))
        else:
            verdicts.append(
                ModeVerdict(
                    code=m.code,
                    verdict="unknown",
                    source=source,
                    rationale="the judge returned no verdict for this mode",
                )
            )
            problems.append(f"{m.code}: missing from the reply; kept as unknown")
    success = _SUCCESS.search(text) or _SUCCESS_TERSE.search(text)
    summary = _SUMMARY.search(text)
    return ParsedReply(
        verdicts=verdicts,
        summary=(summary.group("s").strip()[:2000] or None) if summary else None,
        task_success=(success.group("v").lower() == "yes") if success else None,
        problems=problems,
    )


def _wire_item(item: dict[str, Any], code: str, verdict: str) -> dict[str, Any]:
    """A mode entry as written by a model, in the shape of the reply model (lenient on names)."""
    evidence = []
    for ev in _evidence(item.get("evidence")):
        start = ev.seq_start if ev.seq_start is not None else -1
        evidence.append(
            {
                "seq_start": start,
                "seq_end": ev.seq_end if ev.seq_end is not None else start,
                "agent": ev.agent,
                "quote": ev.quote or "",
            }
        )
    reasoning = item.get("reasoning", item.get("rationale", item.get("reason")))
    conf = item.get("confidence")
    # a confidence that is not a number counts as not given
    conf = (
        min(1.0, max(0.0, float(conf)))
        if isinstance(conf, (int, float)) and not isinstance(conf, bool)
        else None
    )
    return {
        "code": code,
        "evidence": evidence,
        "reasoning": reasoning if isinstance(reasoning, str) else "",
        "verdict": verdict,
        "confidence": conf,
    }


def parse_reply(text: str, taxonomy: Taxonomy, *, source: str, n_events: int | None = None) -> ParsedReply:
    """Validate a judge reply against the taxonomy's reply model. Raises :class:`ReplyError` when unusable.

    Each mode entry is normalised (code spellings, verdict words, ``rationale`` for
    ``reasoning``, ``seq`` for ``seq_start``) and then validated by the model of
    :func:`mastkit.annotate.judge.schema.reply_model`; an entry that does not validate is
    reported in ``problems`` and its mode stays ``unknown``.
    """
    try:
        obj = json_object(text)
    except ReplyError:
        recovered = _text_reply(text, taxonomy, source)
        if recovered is None:
            raise
        return recovered
    modes = obj.get("modes", obj.get("failure_modes"))
    if isinstance(modes, dict):  # {"FM-1.1": {...}} or {"FM-1.1": "yes"}
        modes = [{"code": k, **(v if isinstance(v, dict) else {"verdict": v})} for k, v in modes.items()]
    if not isinstance(modes, list):
        raise ReplyError("the reply has no 'modes' list")
    finding = finding_model(taxonomy)
    problems: list[str] = []
    found: dict[str, ModeVerdict] = {}
    for item in modes:
        if not isinstance(item, dict):
            problems.append(f"ignored a mode entry that is not an object: {item!r:.60}")
            continue
        code = normalise_code(item.get("code"), taxonomy)
        if code is None:
            problems.append(f"ignored unknown mode code {item.get('code')!r:.60}")
            continue
        if code in found:
            problems.append(f"{code} given twice; the first verdict is kept")
            continue
        verdict = _verdict(item.get("verdict", item.get("present")))
        if verdict is None:
            problems.append(f"{code}: unreadable verdict {item.get('verdict')!r:.40}; kept as unknown")
            verdict = "unknown"
        wire = _wire_item(item, code, verdict)
        given_confidence = wire["confidence"] is not None
        if not given_confidence:
            wire["confidence"] = 0.5  # validated as a number, stored as None
        try:
            checked = finding.model_validate(wire)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(x) for x in first["loc"])
            problems.append(f"{code}: invalid entry ({where}: {first['msg']}); kept as unknown")
            continue
        evidence = [
            Evidence(
                seq_start=e.seq_start if e.seq_start >= 0 else None,
                seq_end=e.seq_end if e.seq_end >= 0 else None,
                agent=e.agent,
                quote=e.quote or None,
            )
            for e in checked.evidence  # type: ignore[attr-defined]
        ]
        if n_events is not None:
            for ev in evidence:
                if ev.seq_start is not None and not 0 <= ev.seq_start < n_events:
                    problems.append(f"{code}: evidence seq {ev.seq_start} is outside the trace")
        confidence: float | None = checked.confidence if given_confidence else None  # type: ignore[attr-defined]
        extra: dict[str, Any] = {}
        found[code] = ModeVerdict(
            code=code,
            verdict=checked.verdict,  # type: ignore[attr-defined]
            confidence=confidence,
            evidence=evidence,
            rationale=checked.reasoning or None,  # type: ignore[attr-defined]
            source=source,
            extra=extra,
        )
    verdicts = []
    for m in taxonomy.modes:
        if m.code in found:
            verdicts.append(found[m.code])
        else:
            verdicts.append(
                ModeVerdict(
                    code=m.code,
                    verdict="unknown",
                    source=source,
                    rationale="the judge returned no verdict for this mode",
                )
            )
            problems.append(f"{m.code}: missing from the reply; kept as unknown")
    if not found:
        raise ReplyError("the reply contains no verdict for any mode of the taxonomy")
    success = obj.get("task_success")
    summary = obj.get("summary")
    agent = obj.get("responsible_agent")
    return ParsedReply(
        verdicts=verdicts,
        summary=summary if isinstance(summary, str) else None,
        task_success=success if isinstance(success, bool) else None,
        responsible_agent=agent if isinstance(agent, str) and agent else None,
        responsible_step=as_int(obj.get("responsible_step")),
        problems=problems,
    )
