"""The LLM-as-a-Judge annotator: any provider, evidence-checked verdicts, map-reduce over long
traces, self-consistency, rule hints (hybrid), cached responses and a budget.

Per trace:

1. Render it (:mod:`mastkit.llm.render`) and, when it fits, ask for every mode in one request
   (:func:`.prompt.decide_prompt`).
2. When it does not fit, cut it into windows and ask each window for *candidate findings*
   (map, :func:`.prompt.window_prompt`), then decide every mode for the whole run in one
   adjudication request over the windows' verified findings, their summaries and the end of
   the run (reduce, :func:`.prompt.adjudicate_prompt`). Findings from one window therefore
   do not add up unchecked, an early window never decides the modes about how the run
   ends, and the responsible step and task success are decided once, for the whole run.
3. Every reply is validated by the reply model (:mod:`.schema`); an unusable one gets one
   repair request. Every quoted piece of evidence is checked against the trace
   (:mod:`.evidence`); a ``present`` left without verifiable evidence becomes ``unknown``
   and says so.
4. With ``samples > 1`` each request is asked k times and the answers are combined by
   :func:`combine`.

A request whose reply is still unusable after the repair fails the trace
(:class:`JudgeReplyError`): nothing is stored for it, the run counts it as failed and a rerun
tries it again (the usable replies of the other requests come from the response cache).

``confidence`` has one meaning throughout: the judge's probability that the verdict is
correct (:data:`.schema.CONFIDENCE_ANCHORS`); combined over samples it is the mean
probability of the chosen verdict. How much of the trace the judge saw (windows, elided
characters, events left out) is recorded in ``Annotation.extra["coverage"]``.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from mastkit.annotate.detectors._base import detectors
from mastkit.annotate.judge.evidence import TraceText, verify
from mastkit.annotate.judge.parse import ParsedReply, parse_reply
from mastkit.annotate.judge.prompt import (
    PROMPT_VERSION,
    PromptOptions,
    WindowFindings,
    adjudicate_prompt,
    decide_prompt,
    repair_message,
    system_prompt,
    window_prompt,
)
from mastkit.annotate.judge.schema import reply_model
from mastkit.annotate.model import Annotation, AnnotatorConfig, ModeVerdict, VerdictValue
from mastkit.annotate.rule_annotator import run_detectors
from mastkit.attribute.model import Attribution
from mastkit.llm.call import CallUsage, ResponseCache, cached_call
from mastkit.llm.fence import fence_name, fence_secret
from mastkit.llm.redact import redact_trace
from mastkit.llm.render import RenderOptions, RenderStats, Window, render_events, render_windows
from mastkit.llm.reply import ReplyError, strict_schema
from mastkit.providers import Budget, ChatMessage, ChatRequest, Provider
from mastkit.taxonomy import Taxonomy
from mastkit.traces.model import Trace


class JudgeReplyError(ReplyError):
    """A judge request got no usable reply, even after one repair: the trace is not annotated."""


@dataclass(frozen=True)
class JudgeOptions:
    """Judge settings that change results (they are part of the run's configuration hash)."""

    samples: int = 1
    """Self-consistency: ask each request k times and combine the answers."""
    temperature: float | None = None
    """Defaults to 0 for one sample, 0.7 for several."""
    examples: bool = False
    """Include the taxonomy's few-shot examples in the prompt."""
    hybrid: bool = False
    """Show rule-detector findings to the judge as hints; a mode the judge leaves unknown takes a
    rule's ``present`` (marked ``filled_from_rules``), never a rule's ``absent``."""
    window_tokens: int | None = None
    """Trace tokens per window; default: the model's context minus prompt and reply reserve."""
    max_windows: int = 8
    """Beyond this many windows the middle of the trace is left out (recorded in the coverage)."""
    overlap_events: int = 3
    max_output_tokens: int = 4096
    structured_output: bool = True
    """Send the reply JSON schema as structured-output request (servers that reject it: set False)."""
    max_event_chars: int = 1200
    """Longest event text shown whole; longer ones keep their head and tail (recorded)."""
    tail_chars: int = 400
    ending_chars: int = 6000
    """Characters of the end of the run shown to the adjudication request."""
    task_chars: int = 20_000
    """The task is shown whole up to this length, else cut with a marker."""


@dataclass
class _Usage(CallUsage):
    """What one trace's calls used, and the problems met."""

    problems: list[str] = field(default_factory=list)
    redactions: Counter[str] = field(default_factory=Counter)
    """Secrets removed from the trace before it was rendered, by kind."""


@dataclass
class Decision:
    """One request's answer after validation, evidence checks and (with samples) combination."""

    verdicts: list[ModeVerdict]
    summary: str | None = None
    task_success: bool | None = None
    responsible_agent: str | None = None
    responsible_step: int | None = None


def _p_present(v: ModeVerdict) -> float | None:
    """The probability that the mode is present implied by one sample's verdict (None: no opinion)."""
    if v.verdict == "unknown":
        return None
    c = v.confidence if v.confidence is not None else 0.75
    return c if v.verdict == "present" else 1.0 - c


def combine(samples: Sequence[Sequence[ModeVerdict]], source: str) -> list[ModeVerdict]:
    """Per mode, the verdict of k samples.

    A mode stays ``unknown`` when more than half of the samples could not decide it. Otherwise
    each deciding sample gives a probability that the mode is present (its confidence for
    ``present``, one minus it for ``absent``); the mean decides: above 0.5 ``present``, below
    ``absent``, exactly 0.5 (a tie) ``unknown``. The confidence is the mean probability of the
    chosen verdict; evidence and reasoning come from the samples that chose it.
    """
    k = len(samples)
    if k == 1:
        return list(samples[0])
    out = []
    for i in range(len(samples[0])):
        vs = [s[i] for s in samples]
        votes = Counter(v.verdict for v in vs)
        ps = [p for p in (_p_present(v) for v in vs) if p is not None]
        choice: VerdictValue
        confidence: float | None = None
        if votes["unknown"] * 2 > k or not ps:
            choice = "unknown"
        else:
            p = sum(ps) / len(ps)
            if p > 0.5:
                choice, confidence = "present", p
            elif p < 0.5:
                choice, confidence = "absent", 1.0 - p
            else:
                choice = "unknown"
        members = [v for v in vs if v.verdict == choice]
        rationale = next((v.rationale for v in members if v.rationale), None)
        if choice == "unknown" and not members:
            rationale = f"the {k} samples disagree evenly: {dict(votes)}"
        out.append(
            ModeVerdict(
                code=vs[0].code,
                verdict=choice,
                confidence=round(confidence, 3) if confidence is not None else None,
                evidence=next((v.evidence for v in members if v.evidence), []),
                rationale=rationale,
                source=source,
                extra={"votes": dict(votes), "samples": k},
            )
        )
    return out


def _vote(values: Sequence[Any]) -> Any:
    """The most common non-None value (first seen wins a tie), or None."""
    counts = Counter(v for v in values if v is not None)
    return counts.most_common(1)[0][0] if counts else None


class JudgeAnnotator:
    """Annotates traces with an LLM judge (``kind="llm"``, or ``"hybrid"`` with rule hints)."""

    def __init__(
        self,
        taxonomy: Taxonomy,
        provider: Provider,
        *,
        options: JudgeOptions | None = None,
        cache: ResponseCache | None = None,
        budget: Budget | None = None,
    ) -> None:
        self.taxonomy = taxonomy
        self.provider = provider
        self.options = options or JudgeOptions()
        if self.options.samples < 1:
            raise ValueError(f"samples must be >= 1, got {self.options.samples}")
        self.cache = cache
        self.budget = budget
        opts = asdict(self.options)
        if self.options.hybrid:
            opts["detectors"] = [d.name for d in detectors()]
        self.config = AnnotatorConfig(
            kind="hybrid" if self.options.hybrid else "llm",
            model=f"{provider.name}:{provider.model}",
            prompt_version=PROMPT_VERSION,
            taxonomy_id=taxonomy.id,
            taxonomy_version=taxonomy.version,
            options=opts,
        )
        self.config_hash = self.config.config_hash()
        self._schema = strict_schema(reply_model(taxonomy))
        self._source = f"judge:{provider.name}:{provider.model}"
        self._render = RenderOptions(
            max_event_chars=self.options.max_event_chars, tail_chars=self.options.tail_chars
        )
        self._prompt = PromptOptions(task_chars=self.options.task_chars)

    async def aclose(self) -> None:
        """Close the provider's HTTP client of the running event loop (idle connections)."""
        aclose = getattr(self.provider, "aclose", None)
        if aclose is not None:
            await aclose()

    # -- one request -----------------------------------------------------------------------------

    async def _call(
        self, messages: list[ChatMessage], trace_id: str, temperature: float, seed: int, usage: _Usage
    ) -> str:
        req = ChatRequest(
            messages=messages,
            temperature=temperature,
            max_tokens=self.options.max_output_tokens,
            json_schema=self._schema if self.options.structured_output else None,
            schema_name="failure_vector",
            seed=seed,
        )
        return await cached_call(
            self.provider,
            req,
            cache=self.cache,
            budget=self.budget,
            trace_id=trace_id,
            config_hash=self.config_hash,
            usage=usage,
            version=PROMPT_VERSION,
            accept=self._usable,
        )

    def _usable(self, text: str) -> bool:
        try:
            parse_reply(text, self.taxonomy, source=self._source)
        except ReplyError:
            return False
        return True

    async def _sample(
        self, trace: Trace, messages: list[ChatMessage], label: str, seed: int, usage: _Usage
    ) -> ParsedReply:
        temperature = self.options.temperature
        if temperature is None:
            temperature = 0.0 if self.options.samples == 1 else 0.7
        n = len(trace.events)
        text = await self._call(messages, trace.trace_id, temperature, seed, usage)
        try:
            parsed = parse_reply(text, self.taxonomy, source=self._source, n_events=n)
            usage.problems.extend(f"{label}: {p}" for p in parsed.problems)
            return parsed
        except ReplyError as first:
            repair = [
                *messages,
                ChatMessage(role="assistant", content=text[:8000]),
                ChatMessage(role="user", content=repair_message(str(first))),
            ]
            text2 = await self._call(repair, trace.trace_id, 0.0, seed, usage)
            try:
                parsed = parse_reply(text2, self.taxonomy, source=self._source, n_events=n)
            except ReplyError as second:
                raise JudgeReplyError(
                    f"{label}: unusable reply after one repair ({first}; then {second})"
                ) from None
            usage.problems.append(f"{label}: repaired after: {first}")
            usage.problems.extend(f"{label}: {p}" for p in parsed.problems)
            return parsed

    async def _ask(
        self, trace: Trace, system: str, user: str, label: str, text: TraceText, usage: _Usage
    ) -> Decision:
        """One request (k samples), validated, evidence-checked and combined."""
        messages = [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]
        k = self.options.samples
        outcomes = await asyncio.gather(
            *(self._sample(trace, messages, label, s, usage) for s in range(k)), return_exceptions=True
        )
        replies = [o for o in outcomes if isinstance(o, ParsedReply)]
        failures = [o for o in outcomes if isinstance(o, BaseException)]
        for exc in failures:
            if not isinstance(exc, JudgeReplyError):
                raise exc  # provider failures and budget stops end the trace as they are
        if not replies:
            raise failures[0]
        if failures:
            usage.problems.append(f"{label}: {len(failures)} of {k} samples unusable: {failures[0]}")
        checked = [[verify(v, text) for v in r.verdicts] for r in replies]
        for r in checked:
            for v in r:
                if v.extra.get("downgraded_from"):
                    usage.problems.append(f"{label}: {v.code} present without verifiable evidence; unknown")
        return Decision(
            verdicts=combine(checked, self._source),
            summary=next((r.summary for r in replies if r.summary), None),
            task_success=_vote([r.task_success for r in replies]),
            responsible_agent=_vote([r.responsible_agent for r in replies]),
            responsible_step=_vote([r.responsible_step for r in replies]),
        )

    # -- whole trace -------------------------------------------------------------------------------

    def _windows(self, trace: Trace, system: str, stats: RenderStats) -> list[Window]:
        budget_tokens = self.options.window_tokens or max(
            2000,
            self.provider.context_window
            - self.provider.estimate_tokens(system)
            - self.options.max_output_tokens
            - 1500,
        )
        return render_windows(
            trace,
            budget_tokens,
            overlap_events=self.options.overlap_events,
            max_windows=self.options.max_windows,
            opts=self._render,
            stats=stats,
        )

    def _ending(self, trace: Trace) -> str:
        """The last events of the run as rendered, up to ``ending_chars``, whole events only."""
        kept: list[str] = []
        size = 0
        for _seq, block in reversed(render_events(trace, self._render)):
            if kept and size + len(block) + 1 > self.options.ending_chars:
                kept.append("(… earlier events left out here …)")
                break
            kept.append(block)
            size += len(block) + 1
        return "\n".join(reversed(kept))

    async def annotate(self, trace: Trace) -> Annotation:
        usage = _Usage()
        redactor = getattr(self.provider, "redactor", None)
        if redactor is not None:  # whole strings, once, before any window cut or elision
            trace, found = redact_trace(trace, redactor)
            usage.redactions.update(found)
        rule_verdicts = run_detectors(trace, self.taxonomy) if self.options.hybrid else None
        fence = fence_name(trace, fence_secret(self.cache))
        system = system_prompt(self.taxonomy, fence, examples=self.options.examples)
        stats = RenderStats()
        windows = self._windows(trace, system, stats)
        text = TraceText.of(trace)
        per_window: list[Decision] = []
        if len(windows) == 1:
            user = decide_prompt(
                trace, windows[0], fence, self.taxonomy, hints=rule_verdicts, opts=self._prompt
            )
            decision = await self._ask(trace, system, user, "window 0", text, usage)
        else:
            per_window = list(
                await asyncio.gather(
                    *(
                        self._ask(
                            trace,
                            system,
                            window_prompt(
                                trace, w, fence, self.taxonomy, hints=rule_verdicts, opts=self._prompt
                            ),
                            f"window {w.index}",
                            text,
                            usage,
                        )
                        for w in windows
                    )
                )
            )
            findings = [
                WindowFindings(w, d.summary, d.verdicts) for w, d in zip(windows, per_window, strict=True)
            ]
            user = adjudicate_prompt(
                trace,
                findings,
                self._ending(trace),
                fence,
                self.taxonomy,
                hints=rule_verdicts,
                opts=self._prompt,
                omitted_events=stats.events_omitted_by_window_cap,
            )
            decision = await self._ask(trace, system, user, "adjudication", text, usage)
        verdicts = decision.verdicts
        if per_window:
            verdicts = [
                v.model_copy(
                    update={
                        "extra": {
                            **v.extra,
                            "windows": [
                                {
                                    "window": w.index,
                                    "events": [w.first_seq, w.last_seq],
                                    "verdict": d.verdicts[i].verdict,
                                    "confidence": d.verdicts[i].confidence,
                                }
                                for w, d in zip(windows, per_window, strict=True)
                            ],
                        }
                    }
                )
                for i, v in enumerate(verdicts)
            ]
        if rule_verdicts is not None:
            verdicts = [_fill_from_rules(j, r) for j, r in zip(verdicts, rule_verdicts, strict=True)]
        attribution = None
        if decision.responsible_step is not None and not 0 <= decision.responsible_step < len(trace.events):
            usage.problems.append(
                f"responsible step {decision.responsible_step} is not an event of the trace; dropped"
            )
            decision.responsible_step = None
        if decision.responsible_step is not None or decision.responsible_agent:
            attribution = Attribution(
                agent=decision.responsible_agent, step=decision.responsible_step, method="judge"
            )
        coverage = stats.as_dict()
        return Annotation(
            trace_id=trace.trace_id,
            config=self.config,
            config_hash=self.config_hash,
            verdicts=verdicts,
            summary=(decision.summary or "")[:2000] or None,
            predicted_success=decision.task_success,
            attribution=attribution,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cost_usd=round(usage.cost_usd, 6),
            model_calls=usage.calls,
            errors=[p for p in usage.problems if "repaired after" in p or "no JSON" in p or "unusable" in p],
            extra={
                "windows": len(windows),
                "requests": len(windows) + (1 if per_window else 0),
                "coverage": coverage,
                "problems": usage.problems[:200],
                # what redaction removed before the trace reached the model (kind -> count)
                "redactions": dict(usage.redactions),
                "redacted": sum(usage.redactions.values()),
            },
        )


def _fill_from_rules(judge: ModeVerdict, rule: ModeVerdict) -> ModeVerdict:
    """Hybrid: a mode the judge left unknown takes a rule detector's ``present`` (with its evidence);
    a rule's ``absent`` never becomes the answer (keyword rules cannot rule a mode out)."""
    if judge.verdict != "unknown" or rule.verdict != "present":
        return judge
    return rule.model_copy(
        update={"extra": {**rule.extra, "filled_from_rules": True, "judge_rationale": judge.rationale}}
    )
