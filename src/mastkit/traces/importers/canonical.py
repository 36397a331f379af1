"""mastkit's own canonical JSONL (written by ``mastkit traces convert``): one Trace per line."""

from __future__ import annotations

from collections.abc import Iterator

from mastkit.errors import FormatError, TraceLoadError
from mastkit.traces._build import validation_reason
from mastkit.traces.model import Trace
from mastkit.traces.registry import Importer, register
from mastkit.traces.source import Source


@register
class CanonicalImporter(Importer):
    name = "canonical"
    description = "mastkit canonical JSONL (one Trace per line, from `mastkit traces convert`)"

    def sniff(self, src: Source) -> float:
        rec = src.first_record
        if isinstance(rec, dict) and "schema_version" in rec and "source_format" in rec and "events" in rec:
            return 1.0
        return 0.0

    def load(self, src: Source) -> Iterator[Trace | TraceLoadError]:
        if src.json_shape == "object":
            yield Trace.model_validate(src.json)
            return
        if src.json_shape != "jsonl":
            raise FormatError("not canonical JSONL")
        for line, offset, value in src.iter_jsonl():
            if isinstance(value, FormatError):
                yield TraceLoadError(src.path, value.reason, line=line, offset=offset)
                continue
            try:
                yield Trace.model_validate(value)
            except ValueError as exc:
                yield TraceLoadError(
                    src.path, f"not a canonical trace: {validation_reason(exc)}", line=line, offset=offset
                )
