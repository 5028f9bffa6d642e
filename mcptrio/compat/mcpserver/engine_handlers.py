"""The functions an :class:`~.server.MCPServer` registers with mcptrio's engine, and the
descriptions that replace the engine's own.

Each engine function takes the raw values of the request (the tool's arguments through
``ctx.arguments``; a template's variables and a prompt's arguments as ``str`` parameters, all
optional so that the SDK's own checks run) and mcptrio's context, and answers the way the SDK's
``MCPServer`` does: its validation, its error texts and codes, its conversion of values.
"""

from __future__ import annotations

import base64
import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pydantic_core
from pydantic import ValidationError, validate_call

from ...protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, McpError
from ...protocol.types import (
    Annotations,
    BlobResourceContents,
    CallToolResult,
    Completion,
    GetPromptResult,
    Icon,
    Prompt,
    PromptArgument,
    Resource,
    ResourceTemplate,
    TextContent,
    TextResourceContents,
    Tool,
    ToolAnnotations,
)
from ...server.context import Context as EngineContext
from ...server.sync_calls import run_sync_call
from .context import Context
from .exceptions import (
    ResourceError,
    ResourceNotFoundError,
    ToolError,
    UnexpectedResourceError,
    UnexpectedToolError,
)
from .functions import FunctionModel
from .messages import to_messages
from .resolve import resolve_all

#: Makes the SDK's ``Context`` of a request from mcptrio's (the server's
#: :meth:`~.server.MCPServer.context_of`).
ContextOf = Callable[[EngineContext], Context]

__all__ = [
    "completion_handler",
    "prompt_definition",
    "prompt_handler",
    "resource_definition",
    "resource_handler",
    "tool_definition",
    "tool_handler",
]

log = logging.getLogger("mcptrio.compat")
_CONTEXT = "mcptrio_engine_context"


def _engine_function(
    name: str, parameters: Sequence[str], body: Callable[..., Awaitable[Any]]
) -> Callable[..., Awaitable[Any]]:
    """``body`` as a function the engine reads as ``(<parameters>: str | None = None,
    mcptrio_engine_context: mcptrio.Context)``: the engine hands it the raw text values and its
    context, and the SDK's rules apply inside."""

    async def engine_function(**values: Any) -> Any:
        return await body(values.pop(_CONTEXT), values)

    keyword = inspect.Parameter.KEYWORD_ONLY
    signature = [
        inspect.Parameter(p, keyword, default=None, annotation=str | None) for p in parameters
    ]
    signature.append(inspect.Parameter(_CONTEXT, keyword, annotation=EngineContext))
    engine_function.__signature__ = inspect.Signature(signature)  # type: ignore[attr-defined]
    engine_function.__annotations__ = {p: str | None for p in parameters} | {
        _CONTEXT: EngineContext
    }
    engine_function.__name__ = engine_function.__qualname__ = name
    return engine_function


def tool_handler(
    context_of: ContextOf, name: str, function: FunctionModel
) -> Callable[..., Awaitable[CallToolResult]]:
    """A tool call as the SDK answers it: every failure but an ``McpError`` is a tool error."""

    async def call(engine: EngineContext, _: dict[str, Any]) -> CallToolResult:
        try:
            try:
                values = function.validate(dict(engine.arguments))
            except ValidationError as exc:
                raise ToolError(f"Error executing tool {name}: {exc}") from exc
            try:
                context = context_of(engine)
                if function.resolved:
                    values |= await resolve_all(list(function.resolved), values, context)
                value = await function.call(values, context)
                return function.tool_result(value)
            except McpError:
                raise
            except (UnexpectedToolError, UnexpectedResourceError) as exc:
                raise UnexpectedToolError(f"Error executing tool {name}: {exc}") from exc
            except (ToolError, ResourceError) as exc:
                raise ToolError(f"Error executing tool {name}: {exc}") from exc
            except Exception as exc:
                raise UnexpectedToolError(f"Error executing tool {name}") from exc
        except ToolError as exc:
            if isinstance(exc, UnexpectedToolError):
                log.exception("Tool %r raised an unexpected exception", name)
            return CallToolResult(content=[TextContent(text=str(exc))], is_error=True)

    return _engine_function(name, (), call)


def tool_definition(
    name: str,
    *,
    title: str | None,
    description: str,
    function: FunctionModel,
    annotations: ToolAnnotations | None,
    icons: list[Icon] | None,
    meta: dict[str, Any] | None,
) -> Tool:
    return Tool(
        name=name,
        title=title,
        description=description,
        input_schema=function.input_schema,
        output_schema=function.output_schema,
        annotations=annotations,
        icons=icons,
        meta=meta,
    )


def resource_handler(
    context_of: ContextOf,
    uri: str,
    function: FunctionModel,
    mime_type: str,
    meta: dict[str, Any] | None,
    variables: Sequence[str],
) -> Callable[..., Awaitable[list[TextResourceContents | BlobResourceContents]]]:
    """A read as the SDK answers it: text or bytes (anything else as JSON), with the resource's
    MIME type (``text/plain`` unless it declares one, bytes too), and the SDK's error codes.
    A template's crash reads "Error creating resource from template <uri>", a static one's
    "Error reading resource <uri>"."""
    crashed = "Error creating resource from template" if variables else "Error reading resource"

    async def read(
        engine: EngineContext, values: dict[str, Any]
    ) -> list[TextResourceContents | BlobResourceContents]:
        read_uri = getattr(engine.request, "uri", uri)
        try:
            try:
                arguments = function.validate(values) if variables else {}
                content = await function.call(arguments, context_of(engine))
            except (McpError, ResourceError):
                raise
            except Exception as exc:
                raise UnexpectedResourceError(f"{crashed} {read_uri}") from exc
        except ResourceError as exc:
            if isinstance(exc, UnexpectedResourceError):
                log.exception("Resource %r raised an unexpected exception", read_uri)
            code = INVALID_PARAMS if isinstance(exc, ResourceNotFoundError) else INTERNAL_ERROR
            raise McpError(str(exc), {"uri": read_uri}, code=code) from exc
        if isinstance(content, bytes):
            blob = base64.b64encode(content).decode()
            return [BlobResourceContents(uri=read_uri, blob=blob, mime_type=mime_type, meta=meta)]
        if not isinstance(content, str):
            content = pydantic_core.to_json(content, fallback=str, indent=2).decode()
        return [TextResourceContents(uri=read_uri, text=content, mime_type=mime_type, meta=meta)]

    return _engine_function(function.arg_model.__name__, variables, read)


def resource_definition(
    uri: str,
    *,
    template: bool,
    name: str,
    title: str | None,
    description: str | None,
    mime_type: str,
    icons: list[Icon] | None,
    annotations: Annotations | None,
    meta: dict[str, Any] | None,
) -> Resource | ResourceTemplate:
    fields: dict[str, Any] = {
        "name": name,
        "title": title,
        "description": description,
        "mime_type": mime_type,
        "icons": icons,
        "annotations": annotations,
        "meta": meta,
    }
    if template:
        return ResourceTemplate(uri_template=uri, **fields)
    return Resource(uri=uri, **fields)


def prompt_handler(
    context_of: ContextOf,
    name: str,
    function: FunctionModel,
    arguments: Sequence[tuple[str, str | None, bool]],
) -> Callable[..., Awaitable[GetPromptResult]]:
    """A ``prompts/get`` as the SDK answers it: a missing argument or a failing function is an
    error whose message says so, arguments are validated by the function's annotations."""
    validated = validate_call(function.fn)
    description = function.fn.__doc__ or ""

    async def render(engine: EngineContext, values: dict[str, Any]) -> GetPromptResult:
        given = {key: value for key, value in values.items() if value is not None}
        missing = {argument for argument, _, required in arguments if required} - set(given)
        if missing:
            raise McpError(f"Missing required arguments: {missing}", code=INTERNAL_ERROR)
        try:
            if function.context_name is not None:
                given[function.context_name] = context_of(engine)
            if inspect.iscoroutinefunction(function.fn):
                value = await validated(**given)
            else:
                value = await run_sync_call(lambda: validated(**given))
            messages = to_messages(value)
        except McpError:
            raise
        except Exception as exc:
            raise McpError(f"Error rendering prompt {name}", code=INTERNAL_ERROR) from exc
        return GetPromptResult(description=description, messages=messages)

    return _engine_function(name, [argument for argument, _, _ in arguments], render)


def prompt_definition(
    name: str,
    *,
    title: str | None,
    description: str,
    arguments: Sequence[tuple[str, str | None, bool]],
    icons: list[Icon] | None,
) -> Prompt:
    return Prompt(
        name=name,
        title=title,
        description=description,
        arguments=[
            PromptArgument(name=argument, description=text, required=required)
            for argument, text, required in arguments
        ],
        icons=icons,
    )


def completion_handler(
    fn: Callable[..., Awaitable[Completion | None]],
) -> Callable[..., Awaitable[Completion]]:
    """The SDK's ``completion/complete``: the handler's ``Completion``, or an empty one."""

    async def complete(ref: Any, argument: Any, context: Any) -> Completion:
        try:
            result = await fn(ref, argument, context)
        except McpError:
            raise
        except Exception as exc:
            log.exception(
                "Completion for argument %r raised an unexpected exception", argument.name
            )
            raise McpError(
                f"Error completing argument {argument.name}", code=INTERNAL_ERROR
            ) from exc
        return result if result is not None else Completion(values=[])

    return complete
