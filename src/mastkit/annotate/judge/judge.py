"""The LLM-as-a-Judge annotator: any provider, windows for long traces, one repair retry,
self-consistency, rule hints (hybrid), cached responses and a budget.

Per trace: render into windows (:mod:`.render`), ask the judge about each window with a
prompt built from the taxonomy (:mod:`.prompt`), validate each reply (:mod:`.parse`) —
a reply that does not validate gets one repair request; if that fails too, the window's
verdicts are all ``unknown`` with the reason. Windows merge as present > absent > unknown
(the verdict of each window is kept in ``extra["windows"]``). With ``samples > 1`` each
window is asked k times and the verdicts are voted.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import cast

from mastkit.annotate.detectors._base import detectors
from mastkit.annotate.judge.parse import ParsedReply, parse_reply
from mastkit.annotate.judge.prompt import PROMPT_VERSION, reply_schema, system_prompt, user_prompt
from mastkit.annotate.model import (
    Annotation,
    AnnotatorConfig,
    Attribution,
    Evidence,
    ModeVerdict,
    VerdictValue,
)
from mastkit.annotate.rules import run_detectors
from mastkit.llm.call import CallUsage, ResponseCache, cached_call
from mastkit.llm.redact import redact_trace
from mastkit.llm.render import Window, fence_nonce, render_windows
from mastkit.llm.reply import ReplyError
from mastkit.providers import Budget, ChatMessage, ChatRequest, Provider
from mastkit.taxonomy import Taxonomy
from mastkit.traces.model import Trace


@dataclass(frozen=True)
class JudgeOptions:
    """Judge settings that change results (they are part of the run's configuration hash)."""

    samples: int = 1
    """Self-consistency: ask k times per window and vote."""
    temperature: float | None = None
    """Defaults to 0 for one sample, 0.7 for several."""
    examples: bool = False
    """Include the taxonomy's few-shot examples in the prompt."""
    hybrid: bool = False
    """Pass rule-detector findings to the judge as hints; fill the judge's unknowns with rule verdicts."""
    window_tokens: int | None = None
    """Trace tokens per window; default: the model's context minus prompt and reply reserve."""
    max_windows: int = 8
    overlap_events: int = 3
    max_output_tokens: int = 4096
    structured_output: bool = True
    """Send the reply JSON schema as structured-output request (servers that reject it: set False)."""


@dataclass
class _Usage(CallUsage):
    """What one trace's calls used, and what redaction removed."""

    redactions: Counter[str] = field(default_factory=Counter)
    """Secrets removed from the trace before it was rendered, by kind."""


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
        self._schema = reply_schema(taxonomy)

    async def aclose(self) -> None:
        """Close the provider's HTTP client of the running event loop (idle connections)."""
        aclose = getattr(self.provider, "aclose", None)
        if aclose is not None:
            await aclose()

    # -- one call ---------------------------------------------------------------------------

    async def _call(
        self, messages: list[ChatMessage], *, trace_id: str, temperature: float, seed: int, usage: _Usage
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
        )

    # -- one window, one sample ------------------------------------------------------------

    async def _sample(
        self,
        trace: Trace,
        window: Window,
        system: str,
        fence: str,
        hints: list[ModeVerdict] | None,
        seed: int,
        usage: _Usage,
    ) -> tuple[ParsedReply | None, list[str]]:
        temperature = self.options.temperature
        if temperature is None:
            temperature = 0.0 if self.options.samples == 1 else 0.7
        messages = [
            ChatMessage(role="system", content=system),
            ChatMessage(role="user", content=user_prompt(trace, window, fence, hints=hints)),
        ]
        source = f"judge:{self.provider.name}:{self.provider.model}"
        text = await self._call(
            messages, trace_id=trace.trace_id, temperature=temperature, seed=seed, usage=usage
        )
        try:
            parsed = parse_reply(text, self.taxonomy, source=source, n_events=len(trace.events))
            return parsed, parsed.problems
        except ReplyError as first:
            repair = [
                *messages,
                ChatMessage(role="assistant", content=text[:8000]),
                ChatMessage(
                    role="user",
                    content=(
                        f"Your reply could not be used: {first}. Reply again with only the JSON object described "
                        "in the instructions, with a verdict for every mode code."
                    ),
                ),
            ]
            text2 = await self._call(repair, trace_id=trace.trace_id, temperature=0.0, seed=seed, usage=usage)
            try:
                parsed = parse_reply(text2, self.taxonomy, source=source, n_events=len(trace.events))
                return parsed, [f"window {window.index}: repaired after: {first}", *parsed.problems]
            except ReplyError as second:
                return None, [
                    f"window {window.index}: unusable reply after one repair ({first}; then {second})"
                ]

    async def _window(
        self,
        trace: Trace,
        window: Window,
        system: str,
        fence: str,
        hints: list[ModeVerdict] | None,
        usage: _Usage,
    ) -> tuple[list[ModeVerdict], ParsedReply | None, list[str]]:
        k = max(1, self.options.samples)
        results = await asyncio.gather(
            *(self._sample(trace, window, system, fence, hints, s, usage) for s in range(k))
        )
        problems = [p for _r, ps in results for p in ps]
        parsed = [r for r, _ps in results if r is not None]
        if not parsed:
            reason = problems[-1] if problems else "no usable judge reply"
            return (
                [
                    ModeVerdict(code=m.code, verdict="unknown", rationale=reason, source="judge")
                    for m in self.taxonomy.modes
                ],
                None,
                problems,
            )
        if len(parsed) == 1 and k == 1:
            return parsed[0].verdicts, parsed[0], problems
        voted = []
        for i, m in enumerate(self.taxonomy.modes):
            votes = Counter(p.verdicts[i].verdict for p in parsed)
            n_present, n_absent = votes["present"], votes["absent"]
            if n_present * 2 >= k and n_present >= n_absent:
                choice = "present"
            elif n_absent * 2 > k:
                choice = "absent"
            else:
                choice = "unknown"
            choice = cast(VerdictValue, choice)
            members = [p.verdicts[i] for p in parsed if p.verdicts[i].verdict == choice]
            evidence = next((v.evidence for v in members if v.evidence), [])
            voted.append(
                ModeVerdict(
                    code=m.code,
                    verdict=choice,
                    confidence=round(votes[choice] / k, 3),
                    evidence=evidence,
                    rationale=next((v.rationale for v in members if v.rationale), None),
                    source=f"judge:{self.provider.name}:{self.provider.model}",
                    extra={"votes": dict(votes), "samples": k},
                )
            )
        return voted, parsed[0], problems

    # -- whole trace -------------------------------------------------------------------------

    async def annotate(self, trace: Trace) -> Annotation:
        usage = _Usage()
        redactor = getattr(self.provider, "redactor", None)
        if redactor is not None:  # whole strings, once, before any window cut or elision
            trace, found = redact_trace(trace, redactor)
            usage.redactions.update(found)
        rule_verdicts = run_detectors(trace, self.taxonomy) if self.options.hybrid else None
        fence = f"trace-{fence_nonce(trace)}"
        system = system_prompt(self.taxonomy, fence, examples=self.options.examples)
        budget_tokens = self.options.window_tokens or max(
            2000,
            self.provider.context_window
            - self.provider.estimate_tokens(system)
            - self.options.max_output_tokens
            - 1500,
        )
        windows = render_windows(
            trace,
            budget_tokens,
            overlap_events=self.options.overlap_events,
            max_windows=self.options.max_windows,
        )
        results = await asyncio.gather(
            *(self._window(trace, w, system, fence, rule_verdicts, usage) for w in windows)
        )
        errors = [
            p for _v, _p, ps in results for p in ps if "unusable" in p or "repaired" in p or "no JSON" in p
        ]
        merged = self._merge([v for v, _p, _ps in results], windows)
        if rule_verdicts is not None:
            merged = [self._fill_from_rules(j, r) for j, r in zip(merged, rule_verdicts, strict=True)]
        replies = [p for _v, p, _ps in results if p is not None]
        attribution = None
        step_reply = next((p for p in replies if p.responsible_step is not None or p.responsible_agent), None)
        if step_reply is not None:
            attribution = Attribution(
                agent=step_reply.responsible_agent, step=step_reply.responsible_step, method="judge"
            )
        return Annotation(
            trace_id=trace.trace_id,
            config=self.config,
            config_hash=self.config_hash,
            verdicts=merged,
            summary=" ".join(p.summary for p in replies if p.summary)[:2000] or None,
            predicted_success=replies[-1].task_success if replies else None,
            attribution=attribution,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cost_usd=round(usage.cost_usd, 6),
            model_calls=usage.calls,
            errors=errors,
            extra={
                "windows": len(windows),
                "problems": [p for _v, _p, ps in results for p in ps][:50],
                # what redaction removed before the trace reached the model (kind -> count)
                "redactions": dict(usage.redactions),
                "redacted": sum(usage.redactions.values()),
            },
        )

    def _merge(self, per_window: list[list[ModeVerdict]], windows: list[Window]) -> list[ModeVerdict]:
        if len(per_window) == 1:
            return per_window[0]
        merged = []
        for i, m in enumerate(self.taxonomy.modes):
            vs = [w[i] for w in per_window]
            present = [v for v in vs if v.verdict == "present"]
            absent = [v for v in vs if v.verdict == "absent"]
            chosen: VerdictValue
            if present:
                chosen, pool = "present", present
            elif absent:
                chosen, pool = "absent", absent
            else:
                chosen, pool = "unknown", vs
            confs = [v.confidence for v in pool if v.confidence is not None]
            evidence: list[Evidence] = [ev for v in present for ev in v.evidence]
            merged.append(
                ModeVerdict(
                    code=m.code,
                    verdict=chosen,
                    confidence=max(confs) if confs else None,
                    evidence=evidence,
                    rationale=next((v.rationale for v in pool if v.rationale), None),
                    source=pool[0].source or "judge",
                    extra={
                        "windows": [
                            {
                                "window": w.index,
                                "events": [w.first_seq, w.last_seq],
                                "verdict": v.verdict,
                                "confidence": v.confidence,
                            }
                            for w, v in zip(windows, vs, strict=True)
                        ]
                    },
                )
            )
        return merged

    @staticmethod
    def _fill_from_rules(judge: ModeVerdict, rule: ModeVerdict) -> ModeVerdict:
        if judge.verdict != "unknown" or rule.verdict == "unknown":
            return judge
        return rule.model_copy(
            update={"extra": {**rule.extra, "filled_from_rules": True, "judge_rationale": judge.rationale}}
        )
