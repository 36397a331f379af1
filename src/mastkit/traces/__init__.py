"""Traces: the canonical model and importers for the formats agent systems write."""

from mastkit.traces.load import iter_load, load_traces
from mastkit.traces.model import (
    EVENT_KINDS,
    SCHEMA_VERSION,
    AgentInfo,
    Event,
    Label,
    Outcome,
    SourceRef,
    Termination,
    ToolCall,
    ToolResult,
    Trace,
    Usage,
)
from mastkit.traces.registry import Importer, get_importer, importers, register
from mastkit.traces.source import Source

__all__ = [
    "EVENT_KINDS",
    "SCHEMA_VERSION",
    "AgentInfo",
    "Event",
    "Importer",
    "Label",
    "Outcome",
    "Source",
    "SourceRef",
    "Termination",
    "ToolCall",
    "ToolResult",
    "Trace",
    "Usage",
    "get_importer",
    "importers",
    "iter_load",
    "load_traces",
    "register",
]
