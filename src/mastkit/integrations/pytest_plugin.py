"""A pytest plugin that fails an agent test when fatal failure modes are in the run's trace.

Opt-in per test: nothing happens unless a test carries the ``mastkit`` marker or asks for the
``mastkit_trace`` fixture::

    import pytest

    @pytest.mark.mastkit(fail_on=["FM-1.3", "FM-3.3"])
    def test_agent_fixes_the_bug(mastkit_trace):
        guard = mastkit_trace.guardian          # a fresh Guardian; drive your agent with it
        run_my_agent(guard)                     # or: mastkit_trace.add("run.jsonl") / a Trace

After the test body passed, the traces it named (``trace=`` in the marker, ``mastkit_trace.add``)
or else the guardian's recorded run are annotated — with the rule detectors, offline, unless
``annotator="llm"``/``"hybrid"`` or ``$MASTKIT_PYTEST_ANNOTATOR`` asks for the LLM judge (model from
``$MASTKIT_PYTEST_MODEL``, server from ``$MASTKIT_PYTEST_BASE_URL``) — and the test fails listing
each fatal mode found with its evidence. ``fail_on`` defaults to every mode of the taxonomy.

Registered as the ``mastkit`` pytest11 entry point; this module imports only pytest at load time,
so it costs nothing in test runs that do not use it.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from mastkit.annotate.model import Annotation
    from mastkit.guard import Guardian
    from mastkit.traces.model import Trace

MARKER_HELP = (
    "mastkit(fail_on=None, trace=None, spec=None, annotator=None, taxonomy='mast'): annotate the "
    "agent run's trace after the test and fail it when a mode in fail_on (default: all) is present"
)
ENV_ANNOTATOR = "MASTKIT_PYTEST_ANNOTATOR"
ENV_MODEL = "MASTKIT_PYTEST_MODEL"
ENV_BASE_URL = "MASTKIT_PYTEST_BASE_URL"


class MastkitTrace:
    """What the ``mastkit_trace`` fixture gives a test: a guardian to drive the agent with, and a
    place to name the trace files or :class:`~mastkit.traces.Trace` objects to check."""

    def __init__(self, spec: Any = None, task: str | None = None, test_dir: Path | None = None) -> None:
        self._spec = spec
        self._task = task
        self._test_dir = test_dir
        self._guardian: Guardian | None = None
        self.sources: list[Trace | Path] = []
        """Traces and trace files named by the test (checked instead of the guardian's run)."""
        self.annotations: list[Annotation] = []
        """The annotations made after the test (one per trace), for reports and debugging."""

    @property
    def guardian(self) -> Guardian:
        """A fresh :class:`~mastkit.guard.Guardian` (the marker's ``spec``, else the defaults)
        whose recorded run is checked when the test names no other trace."""
        if self._guardian is None:
            from mastkit.guard import Guardian

            if self._spec is None:
                self._guardian = Guardian.default(task=self._task)
            else:
                self._guardian = Guardian.from_spec(self._spec, task=self._task)
        return self._guardian

    def add(self, trace: Trace | str | Path) -> None:
        """Check this trace (a Trace, or a trace file in any format mastkit reads) after the test."""
        if isinstance(trace, (str, Path)):
            trace = _resolve(Path(trace), self._test_dir)
        self.sources.append(trace)

    def traces(self) -> list[Trace]:
        """The traces to check: those named, else the guardian's run (when it recorded anything)."""
        from mastkit.traces import Trace, load_traces

        out: list[Trace] = []
        for src in self.sources:
            if isinstance(src, Trace):
                out.append(src)
            else:
                out.extend(load_traces(src))
        if not self.sources and self._guardian is not None and self._guardian.events:
            out.append(self._guardian.trace())
        return out


def _resolve(path: Path, test_dir: Path | None) -> Path:
    if not path.is_absolute() and test_dir is not None and (test_dir / path).exists():
        return test_dir / path
    return path


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)


@pytest.fixture
def mastkit_trace(request: pytest.FixtureRequest) -> Iterator[MastkitTrace]:
    """A :class:`MastkitTrace` for this test; its traces are checked after the test body."""
    marker = request.node.get_closest_marker("mastkit")
    kwargs = marker.kwargs if marker is not None else {}
    test_dir = Path(str(request.node.fspath)).parent
    spec = kwargs.get("spec")
    if isinstance(spec, str) and not spec.lstrip().startswith("{"):
        spec = _resolve(Path(spec), test_dir)
    yield MastkitTrace(spec=spec, task=kwargs.get("task"), test_dir=test_dir)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    result = yield  # the test body; when it failed, its own failure stands
    marker = item.get_closest_marker("mastkit")
    recorder = getattr(item, "funcargs", {}).get("mastkit_trace")
    if marker is None and not isinstance(recorder, MastkitTrace):
        return result
    kwargs = dict(marker.kwargs) if marker is not None else {}
    if recorder is None:
        recorder = MastkitTrace(test_dir=Path(str(item.path)).parent)
    named = kwargs.get("trace")
    for path in [named] if isinstance(named, (str, Path)) else list(named or []):
        recorder.add(path)
    message = check_traces(
        recorder,
        fail_on=kwargs.get("fail_on"),
        annotator=kwargs.get("annotator"),
        taxonomy=kwargs.get("taxonomy", "mast"),
    )
    if recorder.annotations:
        item.add_report_section("call", "mastkit", _summary(recorder.annotations))
    if message:
        pytest.fail(message, pytrace=False)
    return result


def check_traces(
    recorder: MastkitTrace,
    *,
    fail_on: list[str] | str | None = None,
    annotator: str | None = None,
    taxonomy: str = "mast",
) -> str | None:
    """Annotate the recorder's traces; the failure message when a fatal mode is present, else None."""
    from mastkit.taxonomy import load_taxonomy

    tax = load_taxonomy(taxonomy)
    codes = [fail_on] if isinstance(fail_on, str) else list(fail_on or [])
    unknown = [c for c in codes if c not in tax.codes]
    if unknown:
        return f"mastkit: unknown failure mode code(s) in fail_on: {', '.join(unknown)}"
    fatal = set(codes or tax.codes)
    traces = recorder.traces()
    if not traces:
        return "mastkit: no trace to check (use mastkit_trace.guardian, mastkit_trace.add(...) or trace=...)"
    kind = annotator or os.environ.get(ENV_ANNOTATOR) or "rules"
    lines: list[str] = []
    for trace in traces:
        annotation = _annotate(trace, tax, kind)
        recorder.annotations.append(annotation)
        found = [v for v in annotation.verdicts if v.verdict == "present" and v.code in fatal]
        if not found:
            continue
        lines.append(f"mastkit: fatal failure modes in trace {trace.trace_id} ({kind} annotator):")
        for v in found:
            name = tax.mode(v.code).name if v.code in tax.codes else ""
            lines.append(f"  {v.code} {name}: {v.rationale or ''}".rstrip())
            for ev in v.evidence[:3]:
                where = _seqs(ev.seq_start, ev.seq_end)
                who = f" [{ev.agent}]" if ev.agent else ""
                quote = f' "{_clip(ev.quote)}"' if ev.quote else ""
                lines.append(f"    evidence: {where}{who}{quote}".rstrip())
    return "\n".join(lines) or None


def _annotate(trace: Trace, taxonomy: Any, kind: str) -> Annotation:
    if kind == "rules":
        from mastkit.annotate.rule_annotator import annotate_rules

        return annotate_rules(trace, taxonomy)
    from mastkit.annotate.factory import make_annotator

    model = os.environ.get(ENV_MODEL)
    if not model:
        raise pytest.UsageError(f"mastkit: the {kind} annotator needs ${ENV_MODEL} (provider:model)")
    judge = make_annotator(
        kind,  # type: ignore[arg-type]
        taxonomy=taxonomy,
        model=model,
        base_url=os.environ.get(ENV_BASE_URL) or None,
    )
    return asyncio.run(judge.annotate(trace))


def _seqs(start: int | None, end: int | None) -> str:
    if start is None:
        return "trace"
    return f"seq {start}" if end in (None, start) else f"seq {start}-{end}"


def _clip(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _summary(annotations: list[Annotation]) -> str:
    out = []
    for a in annotations:
        present = [v.code for v in a.verdicts if v.verdict == "present"]
        out.append(f"{a.trace_id}: present {', '.join(present) or '-'}")
    return "\n".join(out)
