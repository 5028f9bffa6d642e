"""Tools: a Python function, described to the client and called with validated arguments.

The function's signature becomes the tool's ``inputSchema``: each parameter is a field of a
msgspec Struct built once at registration, whose JSON Schema msgspec writes and whose
``msgspec.convert`` validates and converts the arguments of every call. Arguments that fail
validation are reported as a tool error result (``isError: true`` with the reason), so the model
can correct itself, as the 2025-11-25 revision asks. A parameter annotated
:class:`~mcptrio.runtime.context.RequestContext` receives the request's context instead.

Synchronous functions run in a worker thread so they never block the event loop.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, get_type_hints

import msgspec
import trio
from msgspec import UNSET

from ..protocol.codec import encode
from ..protocol.types import CallToolResult, ContentBlock, TextContent, Tool
from ..runtime.context import RequestContext

__all__ = ["RegisteredTool", "ToolArgumentsError", "make_tool"]

# The 2025-11-25 naming guidance: 1-128 characters of A-Z a-z 0-9 _ - .
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")
_CONTENT_TYPES = tuple(getattr(ContentBlock, "__args__", ()))


class ToolArgumentsError(Exception):
    """The arguments of a call did not fit the tool's input schema."""


@dataclass(slots=True)
class RegisteredTool:
    """A tool as the server keeps it: its description and how to call it."""

    definition: Tool
    fn: Callable[..., Any]
    arguments_type: type[msgspec.Struct]
    context_parameter: str | None
    is_async: bool

    @property
    def name(self) -> str:
        return self.definition.name

    async def call(self, ctx: RequestContext, arguments: dict[str, Any]) -> CallToolResult:
        try:
            parsed = msgspec.convert(arguments, self.arguments_type, str_keys=True)
        except msgspec.ValidationError as exc:
            raise ToolArgumentsError(f"Invalid arguments for tool {self.name!r}: {exc}") from None
        kwargs = {f: getattr(parsed, f) for f in self.arguments_type.__struct_fields__}
        if self.context_parameter is not None:
            kwargs[self.context_parameter] = ctx
        if self.is_async:
            value = await self.fn(**kwargs)
        else:
            value = await trio.to_thread.run_sync(functools.partial(self.fn, **kwargs))
        return to_call_tool_result(value)


def to_call_tool_result(value: Any) -> CallToolResult:
    """Turn what a tool function returned into a ``CallToolResult``."""
    if isinstance(value, CallToolResult):
        return value
    if isinstance(value, str):
        return CallToolResult(content=[TextContent(text=value)])
    if _CONTENT_TYPES and isinstance(value, _CONTENT_TYPES):
        return CallToolResult(content=[value])
    if (
        isinstance(value, list)
        and _CONTENT_TYPES
        and all(isinstance(v, _CONTENT_TYPES) for v in value)
    ):
        return CallToolResult(content=list(value))
    if value is None:
        return CallToolResult(content=[])
    return CallToolResult(content=[TextContent(text=encode(value).decode())])


def make_tool(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
) -> RegisteredTool:
    """Describe ``fn`` as a tool; raise ``ValueError`` for a name the spec's guidance forbids."""
    tool_name = name or fn.__name__
    if not _TOOL_NAME.match(tool_name):
        raise ValueError(
            f"Invalid tool name {tool_name!r}: use 1-128 characters of A-Z, a-z, 0-9, '_', '-', '.'"
        )
    hints = get_type_hints(fn, include_extras=True)
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    context_parameter: str | None = None
    for parameter in inspect.signature(fn).parameters.values():
        annotation = hints.get(parameter.name, Any)
        if annotation is RequestContext:
            context_parameter = parameter.name
            continue
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise ValueError(f"Tool {tool_name!r}: *args and **kwargs parameters are not supported")
        if parameter.default is inspect.Parameter.empty:
            fields.append((parameter.name, annotation))
        else:
            fields.append((parameter.name, annotation, parameter.default))
    arguments_type = msgspec.defstruct(f"{tool_name}_arguments", fields, kw_only=True)
    doc = description if description is not None else inspect.getdoc(fn)
    definition = Tool(
        name=tool_name,
        title=UNSET if title is None else title,
        description=doc if doc else UNSET,
        input_schema=input_schema(arguments_type),
    )
    return RegisteredTool(
        definition=definition,
        fn=fn,
        arguments_type=arguments_type,
        context_parameter=context_parameter,
        is_async=inspect.iscoroutinefunction(fn),
    )


def input_schema(arguments_type: type[msgspec.Struct]) -> dict[str, Any]:
    """The JSON Schema of an arguments struct, with the object itself at the root."""
    schema = msgspec.json.schema(arguments_type)
    defs: dict[str, Any] = schema.get("$defs", {})
    ref = schema.get("$ref", "")
    root = dict(defs.pop(ref.rsplit("/", 1)[-1], schema))
    root.pop("title", None)
    root.setdefault("properties", {})
    if defs:
        root["$defs"] = defs
    return root
