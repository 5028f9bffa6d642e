"""Tools: a Python function, described to the client and called with validated arguments.

:func:`make_tool` does all the describing once, at registration: the tool's name (checked
against the 2025-11-25 naming guidance), its description (the docstring), its ``inputSchema``
from the signature and its ``outputSchema`` from the return annotation (see
:mod:`mcptrio.server.schema`). A call then costs one ``msgspec.convert`` of the arguments, the
function itself, and the conversion of what it returned (see :mod:`mcptrio.server.tool_results`).

Errors, as the model sees them:

- arguments that fail validation: a tool error result (``isError: true``) with msgspec's reason,
  so the model can correct itself (2025-11-25, SEP-1303). Unknown arguments are ignored;
- :class:`ToolError` raised by the function: a tool error result with its message (also when a
  nursery inside the tool raises a group of them: their messages, one a line);
- any other exception: a tool error result ``"Error executing tool <name>: <exc>"``, and the
  traceback logged on ``mcptrio.server``;
- :class:`~mcptrio.protocol.errors.McpError` raised by the function: not a tool result but a
  JSON-RPC error response with its code (the session answers it); a group holding a single
  one, from a nursery inside the tool, counts as that error;
- ``trio.Cancelled`` (``notifications/cancelled``, the session ending) always propagates.

Synchronous functions run in a worker thread (``trio.to_thread.run_sync``) so they never block
the event loop. A thread cannot be interrupted: if the request is cancelled meanwhile, the
request waits for the function to return and then discards its result. Structured concurrency
is kept (nothing outlives the session that started it); write long-running work as an async
function, which is cancelled at its next checkpoint.

Parameters annotated :class:`~mcptrio.server.context.Context` receive the request's context, and
ones annotated :class:`~mcptrio.runtime.context.RequestContext` the lower-level request context;
neither appears in the schema.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec
import trio
from msgspec import UNSET

from ..protocol.errors import InternalError, McpError
from ..protocol.types import CallToolResult, Icon, Tool, ToolAnnotations
from ..runtime.context import RequestContext
from .context import Context
from .schema import (
    ArgumentsPlan,
    OutputPlan,
    describe_arguments,
    describe_output,
    resolve_hints,
    underlying_callable,
)
from .tool_results import error_result, structured_result, to_call_tool_result

__all__ = [
    "RegisteredTool",
    "ToolError",
    "make_tool",
    "to_call_tool_result",
    "validate_tool_name",
]

log = logging.getLogger("mcptrio.server")

# The 2025-11-25 naming guidance: 1-128 characters of A-Z a-z 0-9 _ - .
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}")


class ToolError(McpError):
    """Raise from a tool to report a failure to the model.

    The call is answered with a tool error result (``isError: true``) whose text is the message,
    exactly as given: say what went wrong and, when the model can fix it, how. Raised anywhere
    else (a resource, a prompt), it is an error answer like any :class:`McpError` (-32603).
    """


def validate_tool_name(name: str) -> str:
    """Return ``name``, or raise ``ValueError`` if the 2025-11-25 naming guidance forbids it."""
    if not _TOOL_NAME.fullmatch(name):
        raise ValueError(
            f"Invalid tool name {name!r}: use 1-128 characters of A-Z, a-z, 0-9, '_', '-', '.'"
        )
    return name


class RegisteredTool:
    """A tool as the server keeps it: its description, and how to call it."""

    __slots__ = (
        "_arguments",
        "_definition",
        "_fast",
        "_is_async",
        "_output",
        "annotations",
        "description",
        "fn",
        "icons",
        "meta",
        "name",
        "title",
    )

    def __init__(
        self,
        *,
        name: str,
        fn: Callable[..., Any],
        title: str | None,
        description: str | None,
        annotations: ToolAnnotations | None,
        icons: Sequence[Icon] | None,
        meta: dict[str, Any] | None,
        arguments: ArgumentsPlan,
        output: OutputPlan,
        is_async: bool,
    ) -> None:
        self.name = name
        self.fn = fn
        self.title = title
        self.description = description
        self.annotations = annotations
        self.icons = list(icons) if icons is not None else None
        self.meta = meta
        self._arguments = arguments
        self._output = output
        self._is_async = is_async
        # Nothing to inject or pass positionally: the converted struct is the keyword arguments.
        self._fast = not (
            arguments.positional_names or arguments.context_names or arguments.request_context_names
        )
        self._definition: Tool | None = None

    @property
    def input_schema(self) -> dict[str, Any]:
        return self._arguments.input_schema

    @property
    def arguments_type(self) -> type[msgspec.Struct]:
        """The Struct each call's arguments are converted into (a field per parameter)."""
        return self._arguments.arguments_type

    @property
    def output_schema(self) -> dict[str, Any] | None:
        """The ``outputSchema`` (sent from 2025-06-18), or ``None`` for a content tool."""
        return self._output.output_schema

    @property
    def definition(self) -> Tool:
        """The tool as the newest revision describes it (the session's connection fits it to
        the negotiated one)."""
        if self._definition is None:
            output_schema = self._output.output_schema
            self._definition = Tool(
                name=self.name,
                title=UNSET if self.title is None else self.title,
                description=self.description if self.description else UNSET,
                input_schema=self._arguments.input_schema,
                output_schema=UNSET if output_schema is None else output_schema,
                annotations=UNSET if self.annotations is None else self.annotations,
                icons=UNSET if self.icons is None else self.icons,
                meta=UNSET if self.meta is None else self.meta,
            )
        return self._definition

    async def call(
        self, ctx: Context | RequestContext, arguments: dict[str, Any] | None
    ) -> CallToolResult:
        """Run the tool for one ``tools/call`` and return its result (see the module docstring),
        in the newest shape."""
        try:
            parsed = msgspec.convert(
                {} if arguments is None else arguments,
                self._arguments.arguments_type,
                str_keys=True,
            )
        except msgspec.ValidationError as exc:
            return error_result(f"Invalid arguments for tool {self.name!r}: {exc}")
        kwargs = msgspec.structs.asdict(parsed)
        args: tuple[Any, ...] = () if self._fast else self._inject(ctx, kwargs)
        try:
            if self._is_async:
                value = await self.fn(*args, **kwargs)
            else:
                value = await trio.to_thread.run_sync(functools.partial(self.fn, *args, **kwargs))
            if self._output.output_schema is None:
                return to_call_tool_result(value)
            return structured_result(value, self._output)
        except ToolError as exc:
            return error_result(str(exc))
        except McpError:
            raise
        except ExceptionGroup as group:
            # A nursery inside the tool wraps what its tasks raised: look inside.
            tool_errors, others = group.split(ToolError)
            if others is None and tool_errors is not None:
                return error_result("\n".join(str(e) for e in _leaves(tool_errors)))
            mcp_errors, others = group.split(McpError)
            if others is None and mcp_errors is not None and len(_leaves(mcp_errors)) == 1:
                raise _leaves(mcp_errors)[0] from group
            log.exception("Tool %r failed", self.name)
            reasons = "; ".join(str(e) for e in _leaves(group))
            return error_result(f"Error executing tool {self.name}: {reasons}")
        except Exception as exc:
            log.exception("Tool %r failed", self.name)
            return error_result(f"Error executing tool {self.name}: {exc}")

    def _inject(self, ctx: Context | RequestContext, kwargs: dict[str, Any]) -> tuple[Any, ...]:
        """Add the context parameters to ``kwargs``; take out and return the positional ones."""
        plan = self._arguments
        if plan.context_names:
            if not isinstance(ctx, Context):
                raise InternalError(
                    f"Tool {self.name!r} takes a Context, but was called with a RequestContext"
                )
            for name in plan.context_names:
                kwargs[name] = ctx
        if plan.request_context_names:
            request_context = ctx.request_context if isinstance(ctx, Context) else ctx
            for name in plan.request_context_names:
                kwargs[name] = request_context
        return tuple(kwargs.pop(name) for name in plan.positional_names)

    def __repr__(self) -> str:
        return f"<RegisteredTool {self.name!r}>"


def make_tool(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    annotations: ToolAnnotations | None = None,
    icons: Sequence[Icon] | None = None,
    meta: dict[str, Any] | None = None,
    structured_output: bool | None = None,
    input_schema: Mapping[str, Any] | None = None,
) -> RegisteredTool:
    """Describe ``fn`` (a function, method, ``functools.partial`` or callable object) as a tool.

    ``name`` defaults to the function's name and must follow the 2025-11-25 naming guidance
    (1-128 characters of ``A-Za-z0-9_-.``); ``description`` defaults to the cleaned docstring.
    ``structured_output``: ``None`` infers it from the return annotation (data types get an
    ``outputSchema``, content types do not), ``True`` requires it, ``False`` turns it off.
    ``input_schema`` replaces the schema clients are shown (kept exactly as given, ``$schema``,
    ``$defs`` and all) where the signature cannot say everything; arguments are still checked
    and converted through the signature, so keep the two in agreement.

    Raises ``ValueError`` for a bad name, or a signature or return type that cannot be described
    (``*args``, ``**kwargs``, generators, types msgspec does not know).
    """
    target = underlying_callable(fn)
    tool_name = validate_tool_name(name if name is not None else _default_name(fn, target))
    if inspect.isasyncgenfunction(target) or inspect.isgeneratorfunction(target):
        raise ValueError(
            f"Tool {tool_name!r}: a generator cannot be a tool; return a list of the items instead"
        )
    hints = resolve_hints(fn, tool_name)
    arguments = describe_arguments(fn, hints, tool_name)
    if input_schema is not None:
        if input_schema.get("type") != "object":
            raise ValueError(f"Tool {tool_name!r}: an inputSchema must have type 'object'")
        arguments = dataclasses.replace(arguments, input_schema=dict(input_schema))
    output = describe_output(
        hints.get("return", inspect.Signature.empty), structured_output, tool_name
    )
    doc = description if description is not None else _docstring(fn, target)
    return RegisteredTool(
        name=tool_name,
        fn=fn,
        title=title,
        description=doc or None,
        annotations=annotations,
        icons=icons,
        meta=meta,
        arguments=arguments,
        output=output,
        is_async=inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(target),
    )


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    """The exceptions of ``group`` and its nested groups, in order."""
    out: list[BaseException] = []
    for exc in group.exceptions:
        out.extend(_leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return out


def _default_name(fn: Callable[..., Any], target: Callable[..., Any]) -> str:
    if target is not fn and not isinstance(fn, functools.partial):
        return type(fn).__name__  # a callable object: its class names it
    name = getattr(target, "__name__", None)
    if not isinstance(name, str):
        raise ValueError(f"Cannot name a tool after {fn!r}: pass name=...")
    return name


def _docstring(fn: Callable[..., Any], target: Callable[..., Any]) -> str | None:
    # A docstring of the function itself: an inherited one (``object.__call__``'s) says nothing.
    doc = getattr(target, "__doc__", None)
    if not doc and target is not fn and not isinstance(fn, functools.partial):
        doc = type(fn).__doc__  # a callable object: its class's docstring
    return inspect.cleandoc(doc) if isinstance(doc, str) else None
