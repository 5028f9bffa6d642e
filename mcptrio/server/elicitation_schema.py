"""The ``requestedSchema`` of a form-mode elicitation, from a dict or from a Python class, and
what the user's answer becomes (:class:`Elicited`).

Elicitation allows only a flat object of primitive properties (string, number, integer,
boolean, and single- or multi-select enums, titled or not), so a class is turned into a schema
through msgspec's JSON Schema generator (pydantic's for a ``BaseModel``, whose answer is then
validated by the model) and then checked property by property against the
restricted forms in :mod:`mcptrio.protocol.types.elicitation`. Anything richer (nested objects,
arrays of free values) is refused when the handler asks, with a message naming the property,
rather than sent to a client that must reject it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

import msgspec

from ..protocol.errors import InvalidParams
from ..protocol.types import ElicitResult
from ..protocol.types.elicitation import parse_primitive_schema
from .pydantic_values import model_class, validated_model

__all__ = ["Elicited", "elicited", "schema_for_elicitation"]

T = TypeVar("T")

_ALLOWED_KEYS = {"type", "properties", "required", "$schema", "title", "description"}


def schema_for_elicitation(schema: type[Any] | Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
    """The ``requestedSchema`` to send, and the type to convert an accepted answer to.

    Raises ``ValueError`` when the schema is not one elicitation allows.
    """
    if isinstance(schema, Mapping):
        return _checked(dict(schema)), None
    model = model_class(schema)
    generated = msgspec.json.schema(schema) if model is None else model.model_json_schema()
    defs: dict[str, Any] = generated.get("$defs", {})
    root = _resolve(generated, defs)
    properties = {
        name: _resolve(prop, defs) for name, prop in (root.get("properties") or {}).items()
    }
    requested: dict[str, Any] = {"type": "object", "properties": properties}
    if root.get("required"):
        requested["required"] = list(root["required"])
    return _checked(requested), schema


def _resolve(node: Mapping[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        merged = dict(defs[ref.removeprefix("#/$defs/")])
        merged.update({k: v for k, v in node.items() if k != "$ref"})
        return _enum_type(merged)
    if "anyOf" in node and "type" not in node:
        # ``Optional[X]`` with a default of ``None``: the field is simply not required.
        options = [o for o in node["anyOf"] if o.get("type") != "null"]
        if len(options) == 1:
            merged = {
                **_resolve(options[0], defs),
                **{k: v for k, v in node.items() if k not in ("anyOf", "default")},
            }
            if node.get("default") is not None:
                merged["default"] = node["default"]
            return merged
    if node.get("type") == "array" and isinstance(node.get("items"), Mapping):
        return {**node, "items": _resolve(node["items"], defs)}
    return _enum_type(dict(node))


def _enum_type(node: dict[str, Any]) -> dict[str, Any]:
    if "enum" in node and "type" not in node:
        node["type"] = "string"
    return node


def _checked(schema: dict[str, Any]) -> dict[str, Any]:
    if schema.get("type") != "object" or not isinstance(schema.get("properties"), Mapping):
        raise ValueError("An elicitation schema must be an object with `properties`")
    extra = set(schema) - _ALLOWED_KEYS
    if extra:
        raise ValueError(f"An elicitation schema cannot use {sorted(extra)}")
    for name, prop in schema["properties"].items():
        try:
            parse_primitive_schema(prop)
        except (msgspec.ValidationError, TypeError, AttributeError) as exc:
            raise ValueError(
                f"Elicitation property {name!r} is not a primitive the spec allows: {exc}"
            ) from None
    return schema


@dataclass(frozen=True, slots=True)
class Elicited(Generic[T]):
    """The user's answer to :meth:`Context.elicit`.

    ``action`` is ``"accept"``, ``"decline"`` or ``"cancel"``. On ``accept``, ``content`` is
    what the client sent and ``data`` is it converted to the type you asked with (or the same
    dict when you passed a schema dict).
    """

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None
    data: T | None


def elicited(result: ElicitResult, target: type[Any] | None) -> Elicited[Any]:
    """The user's answer ``result``, its content converted to ``target`` when accepted (an
    answer that does not fit raises :class:`InvalidParams`)."""
    content = result.content if isinstance(result.content, dict) else None
    if result.action != "accept":
        return Elicited(result.action, content, None)
    if target is None:
        return Elicited("accept", content, content)
    model = model_class(target)
    try:
        if model is None:
            data = msgspec.convert(content or {}, target)
        else:
            data = validated_model(model, content or {})
    except ValueError as exc:
        raise InvalidParams(f"The client's elicitation answer does not fit: {exc}") from None
    return Elicited("accept", content, data)
