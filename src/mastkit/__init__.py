"""mastkit: why do LLM agents fail? Load traces, annotate failure modes, attribute and analyse them."""

from mastkit.errors import MastkitError, TraceLoadError
from mastkit.traces import Event, Trace, load_traces

__version__ = "0.1.0"

__all__ = ["Event", "MastkitError", "Trace", "TraceLoadError", "__version__", "load_traces"]
