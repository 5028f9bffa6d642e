"""A handler function as the official SDK reads it: its arguments model, its output model, the
parameter that receives the :class:`~.context.Context`, and how its value becomes content.

The SDK describes and validates a function through pydantic: ``inputSchema`` is the JSON schema
of a model named ``<function>Arguments`` with a field per parameter, arguments are validated by
it (a failure is the tool error ``Error executing tool <name>: <pydantic's message>``), and a
return annotation gives an ``outputSchema`` (a model, a TypedDict, a ``dict[str, T]``, or any
other type wrapped as ``{"result": ...}`` in a model named ``<function>Output``). This module
does the same with pydantic itself, so that both the schemas and the error texts a client sees
are the SDK's, byte for byte.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import sys
import types
import typing
from collections.abc import Callable, Sequence
from itertools import chain
from typing import Annotated, Any, NotRequired, get_args, get_origin, is_typeddict

import pydantic_core
import typing_extensions
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, WithJsonSchema, create_model
from pydantic.fields import FieldInfo

from ...protocol.types import (
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)
from ...server.sync_calls import run_sync_call
from .media import Audio, Image
from .resolve import ResolvedParameter, resolved_parameters

__all__ = ["FunctionModel", "context_parameter", "read_function", "to_content"]

_BLOCKS = (TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource)
_CONTENT_TYPES = (*_BLOCKS, Image, Audio)
_SCALARS = (str, int, float, bool, bytes, type(None))


class ArgModelBase(BaseModel):
    """The base of every arguments model (arbitrary types allowed, as in the SDK)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    def model_dump_one_level(self) -> dict[str, Any]:
        """The fields by their wire names, values kept as they are (models stay models)."""
        return {
            info.alias or name: getattr(self, name)
            for name, info in type(self).model_fields.items()
        }


@dataclasses.dataclass(frozen=True, slots=True)
class FunctionModel:
    """A function read once, at registration."""

    fn: Callable[..., Any]
    arg_model: type[ArgModelBase]
    context_name: str | None
    #: Validates the value for ``structuredContent`` (``None``: unstructured output).
    output_adapter: TypeAdapter[Any] | None = None
    output_schema: dict[str, Any] | None = None
    wrap_output: bool = False
    #: The parameters filled by resolvers (``Annotated[T, Resolve(fn)]``), not by arguments.
    resolved: tuple[ResolvedParameter, ...] = ()

    @property
    def input_schema(self) -> dict[str, Any]:
        return self.arg_model.model_json_schema(by_alias=True)

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The keyword arguments for the function; pydantic's ``ValidationError`` if they do not
        fit. A string given for a parameter that is not a ``str`` is read as JSON first when it
        holds a list or an object (some clients send them so)."""
        fields: dict[str, FieldInfo] = {}
        for name, info in self.arg_model.model_fields.items():
            fields[name] = info
            if info.alias:
                fields[info.alias] = info
        parsed = dict(arguments)
        for key, value in arguments.items():
            field = fields.get(key)
            if field is None or not isinstance(value, str) or field.annotation is str:
                continue
            try:
                decoded = json.loads(value)
            except (ValueError, RecursionError):
                continue
            if not isinstance(decoded, str | int | float):
                parsed[key] = decoded
        return self.arg_model.model_validate(parsed).model_dump_one_level()

    async def call(self, values: dict[str, Any], context: Any) -> Any:
        """Call the function; a plain ``def`` runs in a worker thread, as in the SDK."""
        if self.context_name is not None:
            values[self.context_name] = context
        if _is_async(self.fn):
            return await self.fn(**values)
        return await run_sync_call(lambda: self.fn(**values))

    def tool_result(self, value: Any) -> CallToolResult:
        """The ``tools/call`` result for what the function returned."""
        if isinstance(value, CallToolResult):
            return value
        content = to_content(value)
        adapter = self.output_adapter
        if adapter is None:
            return CallToolResult(content=content)
        if self.wrap_output:
            value = {"result": value}
        validated = adapter.validate_python(value, by_alias=True, by_name=True)
        if isinstance(validated, BaseModel):
            structured = validated.model_dump(mode="json", by_alias=True)
        else:
            structured = adapter.dump_python(validated, mode="json", by_alias=True)
        return CallToolResult(content=content, structured_content=structured)


def _is_async(fn: Callable[..., Any]) -> bool:
    while hasattr(fn, "func"):
        fn = fn.func
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004
    )


def context_parameter(fn: Callable[..., Any], context_type: type) -> str | None:
    """The parameter annotated with ``context_type`` (or an optional or union of it)."""
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        return None
    for name, annotation in hints.items():
        candidates = get_args(annotation) if get_origin(annotation) is not None else (annotation,)
        if any(inspect.isclass(c) and issubclass(c, context_type) for c in candidates):
            return name
    return None


def read_function(
    fn: Callable[..., Any],
    context_type: type,
    *,
    skip: Sequence[str] = (),
    structured_output: bool | None = None,
) -> FunctionModel:
    """Read ``fn`` as the SDK does: ``ValueError`` for what it refuses."""
    name = getattr(fn, "__name__", type(fn).__name__)
    try:
        signature = inspect.signature(fn, eval_str=True)
    except NameError as exc:
        raise ValueError(f"Unable to evaluate type annotations for callable {name!r}") from exc
    context_name = context_parameter(fn, context_type)
    resolved = tuple(resolved_parameters(fn))
    skip = (*skip, *(parameter.name for parameter in resolved))
    fields: dict[str, Any] = {}
    for parameter in signature.parameters.values():
        if parameter.name == context_name or parameter.name in skip:
            continue
        if parameter.name.startswith("_"):
            raise ValueError(f"Parameter {parameter.name} of {name} cannot start with '_'")
        empty = parameter.annotation is inspect.Parameter.empty
        annotation = Any if empty else parameter.annotation
        metadata: list[Any] = []
        if empty:
            metadata.append(WithJsonSchema({"title": parameter.name, "type": "string"}))
        field_name, options = parameter.name, {}
        if callable(getattr(BaseModel, field_name, None)):
            options["alias"] = field_name
            field_name = f"field_{field_name}"
        typed = Annotated[(annotation, *metadata, Field(**options))]  # type: ignore[valid-type]
        has_default = parameter.default is not inspect.Parameter.empty
        fields[field_name] = (typed, parameter.default) if has_default else typed
    arg_model = create_model(f"{name}Arguments", __base__=ArgModelBase, **fields)
    base = FunctionModel(fn, arg_model, context_name, resolved=resolved)
    if structured_output is False:
        return base
    returns = signature.return_annotation
    if returns is inspect.Parameter.empty:
        if structured_output:
            raise ValueError(f"Function {name}: return annotation required for structured output")
        return base
    bare = get_args(returns)[0] if get_origin(returns) is Annotated else returns
    if isinstance(bare, type) and issubclass(bare, CallToolResult):
        return base
    if structured_output is None and _returns_content(bare):
        return base
    try:
        model, wrap = _output_model(returns, bare, name)
        if model is None:
            raise TypeError(f"{bare!r} has no fields")
        adapter: TypeAdapter[Any] = TypeAdapter(model)
        schema = _inline_root_ref(adapter.json_schema())
    except Exception as exc:
        if structured_output:
            raise ValueError(
                f"Function {name}: return type {bare} is not serializable for structured output"
            ) from exc
        return base
    return dataclasses.replace(base, output_adapter=adapter, output_schema=schema, wrap_output=wrap)


def _returns_content(annotation: Any) -> bool:
    origin = get_origin(annotation)
    if origin is None:
        return isinstance(annotation, type) and issubclass(annotation, _CONTENT_TYPES)
    if origin is Annotated:
        return _returns_content(get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType, list, tuple, Sequence):
        return any(_returns_content(arg) for arg in get_args(annotation))
    return False


def _output_model(annotation: Any, bare: Any, name: str) -> tuple[Any, bool]:
    """The type ``structuredContent`` is validated against, and whether it is wrapped."""
    if isinstance(bare, types.GenericAlias) and get_origin(bare) is dict:
        args = get_args(bare)
        if len(args) == 2 and args[0] is str:
            return Annotated[bare, Field(title=f"{name}DictOutput")], False
    if isinstance(bare, type) and not isinstance(bare, types.GenericAlias):
        if issubclass(bare, BaseModel):
            return bare, False
        if is_typeddict(bare):
            return _readable_typeddict(bare), False
        if bare not in _SCALARS:
            hints = typing.get_type_hints(bare)
            if not hints:
                return None, False
            fields = {field: (hint, getattr(bare, field, ...)) for field, hint in hints.items()}
            model: type[BaseModel] = create_model(bare.__name__, **fields)  # type: ignore[call-overload]
            return model, False
    return create_model(f"{name}Output", result=annotation), True


def _readable_typeddict(typed: Any) -> Any:
    """``typed`` as a ``typing_extensions.TypedDict``: pydantic refuses ``typing.TypedDict``
    below Python 3.12 (the SDK rebuilds it the same way)."""
    if sys.version_info >= (3, 12) or type(typed).__module__ != "typing":
        return typed
    required = typed.__required_keys__
    items = {
        key: hint if key in required else NotRequired[hint]
        for key, hint in typing.get_type_hints(typed, include_extras=True).items()
    }
    rebuilt: Any = typing_extensions.TypedDict(typed.__name__, items)  # type: ignore[misc]
    rebuilt.__doc__ = typed.__doc__
    rebuilt.__module__ = typed.__module__
    return rebuilt


def _inline_root_ref(schema: dict[str, Any]) -> dict[str, Any]:
    """A schema whose root is a bare ``$ref`` gets the definition inline (an object root)."""
    ref = schema.get("$ref")
    prefix = "#/$defs/"
    if not isinstance(ref, str) or not ref.startswith(prefix):
        return schema
    definition: dict[str, Any] = schema["$defs"][ref.removeprefix(prefix)]
    return {**definition, **{key: value for key, value in schema.items() if key != "$ref"}}


def to_content(value: Any) -> list[Any]:
    """The content blocks for a value, as the SDK makes them: blocks as they are, ``Image`` and
    ``Audio`` as their blocks, lists and tuples item by item, a ``str`` as text and anything
    else as its JSON (indented by 2)."""
    if value is None:
        return []
    if isinstance(value, _BLOCKS):
        return [value]
    if isinstance(value, Image | Audio):
        return [value.to_content()]
    if isinstance(value, list | tuple):
        return list(chain.from_iterable(to_content(item) for item in value))
    if not isinstance(value, str):
        value = pydantic_core.to_json(value, fallback=str, indent=2).decode()
    return [TextContent(text=value)]
