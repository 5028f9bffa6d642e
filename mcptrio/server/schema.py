"""Python type hints to JSON Schema, and the plans that convert a tool's arguments and output.

Everything here runs once, when a tool is registered; a call only runs the plans it produced.

Arguments: the value parameters the handler reader found (see :mod:`.handler`; the ones that
receive the request's context are not among them) become the fields of a msgspec Struct built
for the tool. msgspec writes its JSON Schema, which becomes the ``inputSchema``, and one
``msgspec.convert`` per call validates and converts the arguments into it. msgspec understands
Structs, dataclasses, attrs classes, TypedDicts, enums, ``Literal``,
``Annotated[T, msgspec.Meta(...)]`` constraints, unions, and the standard containers.
``Annotated[T, "text"]`` is accepted as a shorthand for
``Annotated[T, msgspec.Meta(description="text")]``. Unknown arguments are ignored (a model that
sends an extra key still gets its call answered).

Output: a return annotation that is an ordinary content type (``str``, ``bytes``, content
blocks, :mod:`~mcptrio.server.media` helpers, lists of them, ``CallToolResult``, ``None``, no
annotation at all) describes content and gets no ``outputSchema``. Any other annotation is
structured output: its schema is the ``outputSchema`` when it is an object schema, and is wrapped
as ``{"result": ...}`` when it is not (the 2025-06-18 and 2025-11-25 schemas require an object).

Schemas are self-contained: nested types live under ``$defs`` at the root of the same schema
and are referenced as ``#/$defs/Name``.
"""

from __future__ import annotations

import collections.abc
import copy
import functools
import inspect
import operator
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args, get_origin

import msgspec

from ..protocol.types import CallToolResult, ContentBlock
from .attrs_values import StructureError, arguments_structurer, result_unstructurer
from .handler import Handler
from .media import Media
from .pydantic_values import PydanticArguments, pydantic_arguments, pydantic_output
from .type_refusals import SCHEMA_ERRORS, parameter_refusal, return_refusal

if TYPE_CHECKING:
    import cattrs

__all__ = [
    "ArgumentsPlan",
    "OutputPlan",
    "describe_arguments",
    "describe_output",
    "object_schema",
]

# The struct every tool's arguments convert into is named so that no user type can collide
# with it in the schema's $defs (msgspec cannot describe two types of one name).
_ARGUMENTS_STRUCT_NAME = "__mcptrio_tool_arguments__"
_CONTENT_CLASSES: tuple[type, ...] = (*get_args(ContentBlock), CallToolResult, Media)
_PLAIN_CONTENT_TYPES: tuple[type, ...] = (str, bytes, bytearray, memoryview)
_SEQUENCE_ORIGINS = (list, tuple, collections.abc.Sequence, collections.abc.Iterable)
_CONTAINER_ORIGINS = (
    list,
    tuple,
    set,
    frozenset,
    dict,
    collections.abc.Sequence,
    collections.abc.MutableSequence,
    collections.abc.Set,
    collections.abc.MutableSet,
    collections.abc.Mapping,
    collections.abc.MutableMapping,
)
_MUTABLE_DEFAULTS = (list, dict, set, bytearray)


@dataclass(frozen=True, slots=True)
class ArgumentsPlan:
    """How a tool's arguments are described and validated."""

    #: The msgspec Struct the arguments convert into (one field per value parameter).
    arguments_type: type[msgspec.Struct]
    #: The ``inputSchema``.
    input_schema: dict[str, Any]
    #: ``(values, sent) -> values``: the attrs-class arguments structured by cattrs from what
    #: the client sent (see :mod:`.attrs_values`); ``None`` when there are none.
    structure: Callable[[dict[str, Any], Mapping[str, Any]], dict[str, Any]] | None = None


@dataclass(frozen=True, slots=True)
class OutputPlan:
    """How a tool's return value becomes a result."""

    #: The ``outputSchema`` (``None``: the value is converted to content).
    output_schema: dict[str, Any] | None
    #: The return annotation values are validated against (structured output only).
    return_type: Any
    #: Whether the value is sent as ``{"result": value}`` (its schema is not an object).
    wrapped: bool
    #: The value to JSON-ready builtins through cattrs, when the annotation holds attrs classes
    #: (see :mod:`.attrs_values`); ``None``: msgspec does it.
    unstructure: Callable[[Any], Any] | None = None
    #: The value checked against the annotation and made JSON-ready builtins by pydantic, when
    #: pydantic describes it (see :mod:`.pydantic_values`); ``ValueError`` when it does not fit.
    dump: Callable[[Any], Any] | None = None


def describe_arguments(
    handler: Handler, owner: str, converter: cattrs.Converter | None = None
) -> ArgumentsPlan:
    """Build the arguments struct and ``inputSchema`` of a tool; ``ValueError`` if impossible.

    ``converter`` structures attrs-class arguments (see :mod:`.attrs_values`)."""
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    schema_defaults: dict[str, Any] = {}
    given = [(p.name, p.annotation, p.default) for p in handler.parameters]
    try:
        by_pydantic = pydantic_arguments(given)
    except SCHEMA_ERRORS as exc:
        raise ValueError(parameter_refusal(owner, handler, exc)) from None
    taken = () if by_pydantic is None else by_pydantic.names
    for parameter in handler.parameters:
        annotation = _descriptions_to_meta(parameter.annotation)
        default = parameter.default
        if parameter.name in taken:
            # pydantic validates it (and fills its default): msgspec passes on what was sent.
            fields.append((parameter.name, Any, None))
        elif parameter.required:
            fields.append((parameter.name, annotation))
        elif isinstance(default, _MUTABLE_DEFAULTS) and default:
            # msgspec refuses a non-empty mutable default: give each call its own copy.
            factory = functools.partial(copy.deepcopy, default)
            fields.append((parameter.name, annotation, msgspec.field(default_factory=factory)))
            schema_defaults[parameter.name] = default
        else:
            fields.append((parameter.name, annotation, default))
    try:
        arguments_type = msgspec.defstruct(_ARGUMENTS_STRUCT_NAME, fields, kw_only=True)
        schema = object_schema(arguments_type, keep_title=False)
        for name, default in schema_defaults.items():
            schema["properties"][name]["default"] = msgspec.to_builtins(default, str_keys=True)
        if by_pydantic is not None:
            _merge_pydantic(schema, by_pydantic)
    except SCHEMA_ERRORS as exc:
        raise ValueError(parameter_refusal(owner, handler, exc)) from None
    structure = arguments_structurer([g for g in given if g[0] not in taken], converter)
    if by_pydantic is not None:
        structure = _with_pydantic(structure, by_pydantic)
    return ArgumentsPlan(arguments_type=arguments_type, input_schema=schema, structure=structure)


def _merge_pydantic(schema: dict[str, Any], by_pydantic: PydanticArguments) -> None:
    """Give the parameters pydantic describes the schemas it writes, its ``$defs`` at the root."""
    properties = schema["properties"]
    required = set(schema.get("required", ())) - set(by_pydantic.names)
    required |= by_pydantic.required
    for name in by_pydantic.names:
        properties[name] = by_pydantic.properties[name]
    ordered = [name for name in properties if name in required]
    schema.pop("required", None)
    if ordered:
        schema["required"] = ordered
    defs = schema.setdefault("$defs", {})
    for name, definition in by_pydantic.defs.items():
        if defs.setdefault(name, definition) != definition:
            raise ValueError(
                f"two different types named {name!r} (one described by msgspec, one by"
                " pydantic) would share one name in the schema's $defs: rename one"
            )
    if not defs:
        del schema["$defs"]


def _with_pydantic(
    structure: Callable[[dict[str, Any], Mapping[str, Any]], dict[str, Any]] | None,
    by_pydantic: PydanticArguments,
) -> Callable[[dict[str, Any], Mapping[str, Any]], dict[str, Any]]:
    validate = by_pydantic.validate

    def structure_all(values: dict[str, Any], sent: Mapping[str, Any]) -> dict[str, Any]:
        if structure is not None:
            values = structure(values, sent)
        try:
            values.update(validate(sent))
        except ValueError as exc:
            raise StructureError(str(exc)) from None
        return values

    return structure_all


def describe_output(
    annotation: Any,
    structured_output: bool | None,
    owner: str,
    converter: cattrs.Converter | None = None,
    fn: Callable[..., Any] | None = None,
) -> OutputPlan:
    """The output plan for a return annotation (``inspect.Signature.empty`` when there is none)
    of ``fn`` (named in the error when the annotation cannot be described).

    ``structured_output``: ``None`` infers it from the annotation, ``True`` requires an
    ``outputSchema`` (``ValueError`` when the annotation cannot have one), ``False`` disables it.
    """
    if structured_output is False:
        return OutputPlan(None, None, wrapped=False)
    if structured_output is None and is_content_annotation(annotation):
        return OutputPlan(None, None, wrapped=False)
    if annotation is inspect.Signature.empty or _is_result_type(annotation):
        raise ValueError(
            f"{owner}: structured output needs a return annotation that describes"
            " data (not CallToolResult, content blocks or no annotation at all)"
        )
    try:
        by_pydantic = pydantic_output(annotation)
    except SCHEMA_ERRORS:
        raise ValueError(return_refusal(owner, fn, annotation)) from None
    if by_pydantic is not None:
        schema, dump = by_pydantic.schema, by_pydantic.dump
        if schema.get("type") == "object":
            return OutputPlan(schema, annotation, wrapped=False, dump=dump)
        return OutputPlan(_wrap(schema), annotation, wrapped=True, dump=dump)
    described = _descriptions_to_meta(annotation)
    try:
        schema = object_schema(described, keep_title=True)
    except SCHEMA_ERRORS:
        raise ValueError(return_refusal(owner, fn, annotation)) from None
    annotation = described
    unstructure = result_unstructurer(annotation, converter)
    if schema.get("type") == "object":
        return OutputPlan(schema, annotation, wrapped=False, unstructure=unstructure)
    return OutputPlan(_wrap(schema), annotation, wrapped=True, unstructure=unstructure)


def object_schema(tp: Any, *, keep_title: bool) -> dict[str, Any]:
    """The JSON Schema of ``tp`` with the type itself at the root and ``$defs`` beside it."""
    schema = msgspec.json.schema(tp)
    defs: dict[str, Any] = schema.pop("$defs", {})
    ref = schema.get("$ref")
    if isinstance(ref, str) and len(schema) == 1:
        name = ref.rsplit("/", 1)[-1]
        root = dict(defs[name])
        # A recursive type still refers to itself by name: keep its definition then.
        if not _refers_to(ref, root, defs, name):
            del defs[name]
        schema = root
    if not keep_title:
        schema.pop("title", None)
    if schema.get("type") == "object":
        schema.setdefault("properties", {})
    if defs:
        schema["$defs"] = defs
    return schema


def is_content_annotation(annotation: Any) -> bool:
    """Whether a return annotation describes content rather than data."""
    if annotation is inspect.Signature.empty or annotation is None or annotation is type(None):
        return True
    if annotation is Any or annotation is object:
        return True
    origin = get_origin(annotation)
    if origin is Annotated:
        return is_content_annotation(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return all(is_content_annotation(arg) for arg in get_args(annotation))
    if origin in _SEQUENCE_ORIGINS:
        args = [a for a in get_args(annotation) if a is not Ellipsis]
        return bool(args) and all(_is_content_item(a) for a in args)
    return _is_content_item(annotation)


def _is_content_item(annotation: Any) -> bool:
    if get_origin(annotation) is Annotated:
        return _is_content_item(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType):
        return all(_is_content_item(arg) for arg in get_args(annotation))
    return isinstance(annotation, type) and issubclass(
        annotation, (*_PLAIN_CONTENT_TYPES, *_CONTENT_CLASSES)
    )


def _is_result_type(annotation: Any) -> bool:
    if get_origin(annotation) is Annotated:
        return _is_result_type(get_args(annotation)[0])
    return isinstance(annotation, type) and issubclass(annotation, _CONTENT_CLASSES)


def _descriptions_to_meta(annotation: Any) -> Any:
    """Rewrite ``Annotated[T, "text"]`` (at any depth) as ``Annotated[T, Meta(description=s)]``."""
    origin = get_origin(annotation)
    if origin is Annotated:
        base, *extras = get_args(annotation)
        rewritten = [msgspec.Meta(description=e) if isinstance(e, str) else e for e in extras]
        return Annotated[(_descriptions_to_meta(base), *rewritten)]
    if origin is Literal or origin is None:
        return annotation
    args = get_args(annotation)
    if not args:
        return annotation
    new_args = tuple(a if a is Ellipsis else _descriptions_to_meta(a) for a in args)
    if new_args == args:
        return annotation
    if origin is Union or origin is types.UnionType:
        return functools.reduce(operator.or_, new_args)
    if origin in _CONTAINER_ORIGINS:
        return typing.cast(Any, annotation).__origin__[new_args]
    return annotation


def _wrap(schema: dict[str, Any]) -> dict[str, Any]:
    inner = dict(schema)
    defs = inner.pop("$defs", None)
    wrapped: dict[str, Any] = {
        "type": "object",
        "properties": {"result": inner},
        "required": ["result"],
    }
    if defs:
        wrapped["$defs"] = defs
    return wrapped


def _refers_to(ref: str, root: dict[str, Any], defs: dict[str, Any], name: str) -> bool:
    others = [d for n, d in defs.items() if n != name]
    return _contains_ref(ref, root) or _contains_ref(ref, others)


def _contains_ref(ref: str, node: Any) -> bool:
    if isinstance(node, dict):
        return node.get("$ref") == ref or any(_contains_ref(ref, v) for v in node.values())
    if isinstance(node, list):
        return any(_contains_ref(ref, v) for v in node)
    return False
