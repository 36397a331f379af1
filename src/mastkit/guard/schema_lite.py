"""A small JSON Schema subset for tool arguments: type, required, properties,
additionalProperties (true/false), enum, items. Enough to catch a call with a missing or
mistyped argument without a dependency."""

from __future__ import annotations

from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list, tuple),
    "null": (type(None),),
}


def _is(value: Any, name: str) -> bool:
    types = _TYPES.get(name)
    if types is None:
        return True  # an unknown type name checks nothing
    if isinstance(value, bool) and name in ("integer", "number"):
        return False
    return isinstance(value, types)


def schema_errors(value: Any, schema: dict[str, Any], path: str = "") -> list[str]:
    """What is wrong with ``value`` under ``schema`` (empty when it fits), each as ``path: problem``."""
    where = path or "arguments"
    errors: list[str] = []
    expected = schema.get("type")
    if expected is not None:
        names = [expected] if isinstance(expected, str) else list(expected)
        if not any(_is(value, n) for n in names):
            return [f"{where}: expected {' or '.join(names)}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{where}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{where}: missing required {key!r}")
        props: dict[str, Any] = schema.get("properties", {})
        for key, sub in props.items():
            if key in value and isinstance(sub, dict):
                errors.extend(schema_errors(value[key], sub, f"{path}.{key}" if path else key))
        if schema.get("additionalProperties") is False:
            for key in value:
                if key not in props:
                    errors.append(f"{where}: unexpected {key!r}")
    if isinstance(value, (list, tuple)) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            errors.extend(schema_errors(item, schema["items"], f"{where}[{i}]"))
    return errors
