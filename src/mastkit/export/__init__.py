"""Send annotations where users already look: OpenTelemetry backends (OTLP/HTTP) and Langfuse."""

from mastkit.export.langfuse import export_langfuse, langfuse_scores
from mastkit.export.otel import ExportError, annotation_spans, export_otlp, export_request, otel_trace_id

__all__ = [
    "ExportError",
    "annotation_spans",
    "export_langfuse",
    "export_otlp",
    "export_request",
    "langfuse_scores",
    "otel_trace_id",
]
