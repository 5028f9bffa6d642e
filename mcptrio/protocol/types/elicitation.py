"""Elicitation: ``elicitation/create`` (2025-06-18+) and ``notifications/elicitation/complete``
(2025-11-25), plus the restricted schema types of a form.

Revision notes:

- 2025-06-18: form elicitation only: ``{message, requestedSchema}``; the requested schema is a
  flat object whose properties are :class:`StringSchema`, :class:`NumberSchema`,
  :class:`BooleanSchema` or an enum schema with ``enum`` + ``enumNames`` (now
  :class:`LegacyTitledEnumSchema`). Result ``{action, content?}``; content values are strings,
  integers or booleans.
- 2025-11-25: ``mode`` (``"form"``, the default, or ``"url"``) with ``elicitationId`` and ``url``
  for URL mode; ``task`` augmentation; ``default`` on every primitive; the standards-based enum
  schemas (:class:`UntitledSingleSelectEnumSchema`, :class:`TitledSingleSelectEnumSchema`,
  :class:`UntitledMultiSelectEnumSchema`, :class:`TitledMultiSelectEnumSchema`); string-array
  content values; :class:`ElicitationCompleteNotification`; and the ``-32042`` error whose
  ``data`` is :class:`URLElicitationRequiredErrorData`.

The schema's ``ElicitRequestParams`` is ``ElicitRequestFormParams | ElicitRequestURLParams``,
told apart by an *optional* ``mode``; msgspec cannot decode such a union, so
:class:`ElicitRequest` is one struct holding the members of both. It checks on construction and
on decode that URL mode has ``url`` and ``elicitationId`` and form mode has
``requestedSchema``. :meth:`ElicitRequest.form` and :meth:`ElicitRequest.url_mode` build each.

``requestedSchema`` stays a ``dict[str, Any]`` so any schema a peer sends survives a round
trip. The schema structs below are for building and inspecting it:
:func:`requested_schema` turns them into the dict, :func:`parse_primitive_schema` and
:func:`requested_schema_properties` go the other way. Structs whose ``type`` is fixed carry it
as a msgspec tag, so it is always encoded; :class:`NumberSchema` has a ``type`` field
(``"number"`` or ``"integer"``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeAlias

import msgspec

from ..base import Meta, Notification, Request, Result, WireStruct
from .tasks import TaskMetadata

__all__ = [
    "BooleanSchema",
    "ElicitAction",
    "ElicitRequest",
    "ElicitResult",
    "ElicitValue",
    "ElicitationCompleteNotification",
    "EnumOption",
    "EnumSchema",
    "LegacyTitledEnumSchema",
    "MultiSelectEnumSchema",
    "NumberSchema",
    "PrimitiveSchemaDefinition",
    "SingleSelectEnumSchema",
    "StringSchema",
    "TitledEnumItems",
    "TitledMultiSelectEnumSchema",
    "TitledSingleSelectEnumSchema",
    "URLElicitationRequiredErrorData",
    "UntitledEnumItems",
    "UntitledMultiSelectEnumSchema",
    "UntitledSingleSelectEnumSchema",
    "parse_primitive_schema",
    "requested_schema",
    "requested_schema_properties",
]

# --- the restricted schema types of a form -----------------------------------------------


class _FieldSchema(WireStruct, kw_only=True):
    """What every field of a form may have: a display ``title`` and a ``description``."""

    title: str | None = None
    description: str | None = None


class StringSchema(_FieldSchema, kw_only=True, tag_field="type", tag="string"):
    """A free-text field; ``format`` is one of ``email``, ``uri``, ``date``, ``date-time``."""

    min_length: int | None = None
    max_length: int | None = None
    format: Literal["email", "uri", "date", "date-time"] | None = None
    default: str | None = None


class NumberSchema(_FieldSchema, kw_only=True):
    """A numeric field, ``type`` ``"number"`` or ``"integer"``."""

    type: Literal["number", "integer"]
    minimum: int | float | None = None
    maximum: int | float | None = None
    default: int | float | None = None


class BooleanSchema(_FieldSchema, kw_only=True, tag_field="type", tag="boolean"):
    """A yes/no field."""

    default: bool | None = None


class EnumOption(WireStruct, kw_only=True):
    """One titled choice: the value ``const`` and its display ``title`` (2025-11-25)."""

    const: str
    title: str


class UntitledSingleSelectEnumSchema(_FieldSchema, kw_only=True, tag_field="type", tag="string"):
    """Pick one of ``enum`` (2025-11-25)."""

    enum: list[str]
    default: str | None = None


class TitledSingleSelectEnumSchema(_FieldSchema, kw_only=True, tag_field="type", tag="string"):
    """Pick one of ``oneOf`` (values with display titles) (2025-11-25)."""

    one_of: list[EnumOption]
    default: str | None = None


class UntitledEnumItems(WireStruct, kw_only=True, tag_field="type", tag="string"):
    """``items`` of :class:`UntitledMultiSelectEnumSchema`: ``{"type": "string", "enum"}``."""

    enum: list[str]


class TitledEnumItems(WireStruct, kw_only=True):
    """``items`` of :class:`TitledMultiSelectEnumSchema`: ``{"anyOf": [{const, title}]}``."""

    any_of: list[EnumOption]


class _MultiSelectSchema(_FieldSchema, kw_only=True):
    """Pick several: how many, and which by default."""

    min_items: int | None = None
    max_items: int | None = None
    default: list[str] | None = None


class UntitledMultiSelectEnumSchema(
    _MultiSelectSchema, kw_only=True, tag_field="type", tag="array"
):
    """Pick several of ``items.enum`` (2025-11-25)."""

    items: UntitledEnumItems


class TitledMultiSelectEnumSchema(_MultiSelectSchema, kw_only=True, tag_field="type", tag="array"):
    """Pick several of ``items.anyOf`` (values with display titles) (2025-11-25)."""

    items: TitledEnumItems


class LegacyTitledEnumSchema(_FieldSchema, kw_only=True, tag_field="type", tag="string"):
    """Pick one of ``enum``, displayed as ``enumNames`` (the 2025-06-18 ``EnumSchema``;
    deprecated in 2025-11-25)."""

    enum: list[str]
    enum_names: list[str] | None = None
    default: str | None = None


SingleSelectEnumSchema: TypeAlias = UntitledSingleSelectEnumSchema | TitledSingleSelectEnumSchema
MultiSelectEnumSchema: TypeAlias = UntitledMultiSelectEnumSchema | TitledMultiSelectEnumSchema
EnumSchema: TypeAlias = SingleSelectEnumSchema | MultiSelectEnumSchema | LegacyTitledEnumSchema
#: One property of a requested schema (for typing; not decodable as a union, see
#: :func:`parse_primitive_schema`).
PrimitiveSchemaDefinition: TypeAlias = StringSchema | NumberSchema | BooleanSchema | EnumSchema


def parse_primitive_schema(obj: Mapping[str, Any]) -> PrimitiveSchemaDefinition:
    """Convert one property of a requested schema to its struct.

    Raises :class:`msgspec.ValidationError` when it fits none of the restricted types.
    """
    kind = obj.get("type")
    cls: type[PrimitiveSchemaDefinition]
    if kind == "boolean":
        cls = BooleanSchema
    elif kind in ("number", "integer"):
        cls = NumberSchema
    elif kind == "array":
        items = obj.get("items")
        titled = isinstance(items, Mapping) and "anyOf" in items
        cls = TitledMultiSelectEnumSchema if titled else UntitledMultiSelectEnumSchema
    elif kind == "string":
        if "oneOf" in obj:
            cls = TitledSingleSelectEnumSchema
        elif "enum" in obj:
            has_names = "enumNames" in obj
            cls = LegacyTitledEnumSchema if has_names else UntitledSingleSelectEnumSchema
        else:
            cls = StringSchema
    else:
        raise msgspec.ValidationError(f"unsupported elicitation schema type {kind!r}")
    result: PrimitiveSchemaDefinition = msgspec.convert(dict(obj), cls)
    return result


def requested_schema(
    properties: Mapping[str, PrimitiveSchemaDefinition],
    required: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Build a ``requestedSchema`` object from schema structs."""
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {name: msgspec.to_builtins(prop) for name, prop in properties.items()},
    }
    if required:
        schema["required"] = list(required)
    return schema


def requested_schema_properties(schema: Mapping[str, Any]) -> dict[str, PrimitiveSchemaDefinition]:
    """The properties of a ``requestedSchema`` as schema structs (see
    :func:`parse_primitive_schema`)."""
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        raise msgspec.ValidationError("requestedSchema has no `properties` object")
    out: dict[str, PrimitiveSchemaDefinition] = {}
    for name, prop in props.items():
        if not isinstance(prop, Mapping):
            raise msgspec.ValidationError(f"requestedSchema property {name!r} is not an object")
        out[str(name)] = parse_primitive_schema(prop)
    return out


# --- requests, results, notifications ----------------------------------------------------

#: The user's answer: ``accept`` (submitted / consented), ``decline`` or ``cancel``.
ElicitAction: TypeAlias = Literal["accept", "decline", "cancel"]
#: A submitted form value. String arrays are 2025-11-25+; ``float`` covers ``number`` fields.
ElicitValue: TypeAlias = str | int | float | bool | list[str]


class ElicitResult(Result, kw_only=True):
    """The client's answer to ``elicitation/create``.

    ``content`` is present only for ``accept`` in form mode.
    """

    action: ElicitAction
    content: dict[str, ElicitValue] | None = None


class ElicitRequest(Request[ElicitResult], kw_only=True):
    """``elicitation/create``: the server asks the user for input, through the client.

    Form mode (``mode`` absent or ``"form"``) needs ``requestedSchema``; URL mode
    (``mode="url"``, 2025-11-25) needs ``elicitationId`` and ``url``.
    """

    METHOD = "elicitation/create"

    message: str
    mode: Literal["form", "url"] | None = None
    requested_schema: dict[str, Any] | None = None
    elicitation_id: str | None = None
    url: str | None = None
    task: TaskMetadata | None = None

    def __post_init__(self) -> None:
        if self.mode == "url":
            if self.url is None:
                raise ValueError("URL-mode elicitation needs a `url`")
        elif self.requested_schema is None:
            raise ValueError("form-mode elicitation needs `requestedSchema`")

    @property
    def effective_mode(self) -> Literal["form", "url"]:
        """``"url"`` or ``"form"`` (an absent ``mode`` means form)."""
        return "url" if self.mode == "url" else "form"

    @classmethod
    def form(
        cls,
        message: str,
        requested_schema: Mapping[str, Any],
        *,
        explicit_mode: bool = False,
        task: TaskMetadata | None = None,
        meta: Meta | None = None,
    ) -> ElicitRequest:
        """A form-mode request. ``mode`` is written only with ``explicit_mode=True`` (2025-06-18
        peers do not know the member)."""
        return cls(
            message=message,
            requested_schema=dict(requested_schema),
            mode="form" if explicit_mode else None,
            task=task,
            meta=meta,
        )

    @classmethod
    def url_mode(
        cls,
        message: str,
        url: str,
        elicitation_id: str,
        *,
        task: TaskMetadata | None = None,
        meta: Meta | None = None,
    ) -> ElicitRequest:
        """A URL-mode request (2025-11-25)."""
        return cls(
            message=message,
            mode="url",
            url=url,
            elicitation_id=elicitation_id,
            task=task,
            meta=meta,
        )


class ElicitationCompleteNotification(Notification, kw_only=True):
    """``notifications/elicitation/complete`` (2025-11-25): a URL-mode elicitation finished."""

    METHOD = "notifications/elicitation/complete"

    elicitation_id: str


class URLElicitationRequiredErrorData(WireStruct, kw_only=True):
    """``error.data`` of a ``-32042`` error: URL-mode elicitations to complete first."""

    elicitations: list[ElicitRequest]
