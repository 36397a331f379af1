"""mastkit: why do LLM agents fail? Load traces, annotate failure modes, attribute and analyse them."""

from typing import TYPE_CHECKING, Any

from mastkit.errors import MastkitError, TraceLoadError

if TYPE_CHECKING:
    from mastkit.traces import Event, Trace, load_traces

__version__ = "0.1.0"

__all__ = ["Event", "MastkitError", "Trace", "TraceLoadError", "__version__", "load_traces"]


def __getattr__(name: str) -> Any:
    # The trace model and the importers load on first use, so `mastkit --version` stays quick.
    if name in ("Event", "Trace", "load_traces"):
        from mastkit import traces

        return getattr(traces, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
