"""pydantic's errors as one located ``DataError``: the file, the 1-based line (or row), the user's
field path, why, and what was given."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from judgelab.errors import DataError


def _validate(model: type[BaseModel], record: dict[str, Any], where: str, line: int) -> Any:
    try:
        return model.model_validate(record)
    except ValidationError as err:
        raise data_error(err, record, where, line) from None


def data_error(err: ValidationError, record: Mapping[str, Any], where: str, line: int | None) -> DataError:
    """pydantic's first error on ``record`` as one located line: the user's field path, why, what was given."""
    errors = err.errors(include_url=False)
    field = _field_of(errors[0], record)
    messages: list[str] = []
    for error in errors:
        if _field_of(error, record) == field:
            message = _message(error)
            if message not in messages:
                messages.append(message)
    detail = "; or ".join(messages)
    first = errors[0]
    if first["type"] not in ("missing", "value_error") and first["loc"] and "input" in first:
        detail += f" (got {_short(first['input'])})"
    return DataError(detail, where, line, field)


def _message(error: Mapping[str, Any]) -> str:
    if error["type"] == "missing":
        return "required field is missing"
    msg = str(error["msg"]).removeprefix("Value error, ")
    return msg[:1].lower() + msg[1:] if msg.startswith("Input") else msg


def _field_of(error: Mapping[str, Any], record: Mapping[str, Any]) -> str | None:
    """pydantic's loc as the user's field path: keys that exist in the input, joined by '.'.

    Union member tags in the loc (``label.int``) are not keys of the input and are dropped; a
    model-level error names its field through ``ctx['field']`` (see ``Item``).
    """
    loc = error.get("loc") or ()
    if not loc:
        return (error.get("ctx") or {}).get("field")
    parts: list[str] = []
    node: Any = record
    for part in loc:
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, (list, tuple)) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        elif not parts:
            node = None  # a top-level field absent from the input (missing)
        else:
            continue
        parts.append(str(part))
    if error.get("type") == "missing" and len(loc) > 1 and parts and parts[-1] != str(loc[-1]):
        parts.append(str(loc[-1]))  # a key missing inside a list of objects: name it (messages.0.role)
    return ".".join(parts)


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
