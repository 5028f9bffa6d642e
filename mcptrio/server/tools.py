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

The function is read and called as every handler is (see :mod:`.handler`): parameters annotated
:class:`~mcptrio.server.context.Context` receive the request's context and are not in the
schema; synchronous functions run in a worker thread, async ones in the request's task (write
long-running work as an async function, which is cancelled at its next checkpoint); a
generator's items are collected into a list, which is then the tool's value.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, Unpack

import msgspec

from ..protocol.apps_extension import ToolUi
from ..protocol.errors import McpError
from ..protocol.types import CallToolResult, Tool, ToolAnnotations, ToolExecution
from .apps import tool_meta
from .attrs_values import StructureError, cattrs_available
from .handler import Handler, default_name, read_handler
from .handler_context import HandlerContext
from .registry import DescriptionOptions, Registered
from .schema import ArgumentsPlan, OutputPlan, describe_arguments, describe_output
from .tool_results import error_result, structured_result, to_call_tool_result

if TYPE_CHECKING:
    import cattrs

__all__ = [
    "RegisteredTool",
    "TaskSupport",
    "ToolError",
    "ToolOptions",
    "make_tool",
    "to_call_tool_result",
    "validate_tool_name",
]

log = logging.getLogger("mcptrio.server")

# The 2025-11-25 naming guidance: 1-128 characters of A-Z a-z 0-9 _ - .
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}")


#: ``execution.taskSupport`` of a tool.
TaskSupport = Literal["forbidden", "optional", "required"]
_TASK_SUPPORT: dict[object, TaskSupport] = {
    None: "forbidden",
    False: "forbidden",
    True: "optional",
    "forbidden": "forbidden",
    "optional": "optional",
    "required": "required",
}


class ToolOptions(DescriptionOptions, total=False):
    """The options of a tool: the keywords of ``@server.tool``, ``Server.add_tool`` and
    :func:`make_tool`, besides those every kind has (:class:`DescriptionOptions`; a tool's
    ``name`` must be 1-128 characters of ``A-Za-z0-9_-.``, the 2025-11-25 naming guidance).
    Every one may be left out (or ``None``) for its default."""

    #: Hints about the tool's behaviour (read-only, destructive, idempotent, open-world).
    annotations: ToolAnnotations | None
    #: ``None`` infers it from the return annotation (data types get an ``outputSchema``,
    #: content types do not), ``True`` requires it, ``False`` turns it off.
    structured_output: bool | None
    #: Replaces the schema clients are shown (kept exactly as given, ``$schema``, ``$defs`` and
    #: all) where the signature cannot say everything; arguments are still checked and converted
    #: through the signature, so keep the two in agreement.
    input_schema: Mapping[str, Any] | None
    #: The ``cattrs.Converter`` that structures attrs-class arguments and unstructures
    #: attrs-class results (see :mod:`mcptrio.server.attrs_values`; needs cattrs installed).
    converter: cattrs.Converter | None
    #: Whether a client may run the tool as a task (2025-11-25 ``execution.taskSupport``):
    #: ``"optional"`` (or ``True``) lets it choose, ``"required"`` makes every call a task,
    #: ``"forbidden"`` (or ``False``, the default) refuses task-augmented calls. The function
    #: stays as it is: see ``docs/how-to/long-running-tools.md``.
    task: TaskSupport | bool | None
    #: 2026-07-28 tasks extension: the function runs in the request first, where what it asks
    #: is answered in input-required rounds, until it calls ``ctx.begin_task()``; the task then
    #: runs it again from the start with those answers (see :mod:`.task_extension`).
    input_before_task: bool | None
    #: MCP Apps (SEP-1865): the ``ui://`` view the tool renders in (a URI, or a ``ToolUi`` with
    #: ``visibility``), written to ``_meta.ui``; see :mod:`mcptrio.server.apps`.
    ui: str | ToolUi | None


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


class RegisteredTool(Registered[Tool]):
    """A tool as the server keeps it: its description, and how to call it."""

    __slots__ = (
        "_arguments",
        "_arguments_type",
        "_output",
        "_structure",
        "_structured",
        "_takes_nothing",
        "annotations",
        "input_before_task",
        "task_support",
    )
    handler: Handler

    def __init__(
        self,
        name: str,
        handler: Handler,
        arguments: ArgumentsPlan,
        output: OutputPlan,
        options: ToolOptions,
    ) -> None:
        super().__init__(name, handler, options)
        self.annotations = options.get("annotations")
        task = options.get("task")
        if task not in _TASK_SUPPORT:
            raise ValueError(
                f"Tool {name!r}: task must be 'forbidden', 'optional', 'required' or a bool,"
                f" not {task!r}"
            )
        #: Whether the tool may (``"optional"``), must (``"required"``) or must not
        #: (``"forbidden"``) be called as a task.
        self.task_support: TaskSupport = _TASK_SUPPORT[task]
        #: Whether the function asks for input in the request before its task begins.
        self.input_before_task = bool(options.get("input_before_task"))
        self._arguments = arguments
        self._output = output
        # What every call reads of the plans (fixed at registration).
        self._arguments_type = arguments.arguments_type
        self._structure = arguments.structure
        self._structured = output.output_schema is not None
        # A function without parameters called without arguments has nothing to validate: its
        # values are known without converting.
        self._takes_nothing = (
            not msgspec.structs.fields(arguments.arguments_type) and arguments.structure is None
        )

    @property
    def fn(self) -> Callable[..., Any]:
        return self.handler.fn

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

    def _describe(self) -> Tool:
        output_schema = self._output.output_schema
        return Tool(
            name=self.name,
            title=self.title,
            description=self.description if self.description else None,
            input_schema=self._arguments.input_schema,
            output_schema=output_schema,
            annotations=self.annotations,
            icons=self.icons,
            meta=self.meta,
            execution=None
            if self.task_support == "forbidden"
            else ToolExecution(task_support=self.task_support),
        )

    @property
    def answers_at_once(self) -> bool:
        """Whether a call without a task is answered where it was decoded (see :mod:`.eager`):
        the tool is never a task and its function never suspends."""
        return self.task_support == "forbidden" and self.handler.never_suspends

    async def call(self, ctx: HandlerContext, arguments: dict[str, Any] | None) -> CallToolResult:
        """Run the tool for one ``tools/call`` and return its result (see the module docstring),
        in the newest shape."""
        if not arguments and self._takes_nothing:
            values: dict[str, Any] = {}
        else:
            try:
                parsed = msgspec.convert(
                    {} if arguments is None else arguments, self._arguments_type, str_keys=True
                )
            except msgspec.ValidationError as exc:
                return error_result(f"Invalid arguments for tool {self.name!r}: {exc}")
            values = msgspec.structs.asdict(parsed)
            structure = self._structure
            if structure is not None:
                try:
                    values = structure(values, arguments or {})
                except StructureError as exc:
                    return error_result(f"Invalid arguments for tool {self.name!r}: {exc}")
        try:
            value = await self.handler.call(ctx, values)
            if not self._structured:
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

    def __repr__(self) -> str:
        return f"<RegisteredTool {self.name!r}>"


def make_tool(fn: Callable[..., Any], **options: Unpack[ToolOptions]) -> RegisteredTool:
    """Describe ``fn`` (a function, method, ``functools.partial`` or callable object) as a tool.

    See :class:`ToolOptions` for the options. Raises ``ValueError`` for a bad name, or a
    signature or return type that cannot be described (``*args``, ``**kwargs``, types msgspec
    does not know; see :mod:`.handler` for what every handler's signature may hold).
    """
    name = options.get("name")
    if name is None:
        name = default_name(fn)
        if name is None:
            raise ValueError(f"Cannot name a tool after {fn!r}: pass name=...")
    owner = f"Tool {validate_tool_name(name)!r}"
    ui = options.get("ui")
    if ui is not None:
        options = {**options, "meta": tool_meta(ui, options.get("meta"), owner)}
    handler = read_handler(fn, owner)
    converter = options.get("converter")
    if converter is not None and not cattrs_available():
        raise ValueError(f"{owner}: converter= needs cattrs (pip install mcptrio[attrs])")
    arguments = describe_arguments(handler, owner, converter)
    input_schema = options.get("input_schema")
    if input_schema is not None:
        if input_schema.get("type") != "object":
            raise ValueError(f"{owner}: an inputSchema must have type 'object'")
        arguments = ArgumentsPlan(arguments.arguments_type, dict(input_schema), arguments.structure)
    output = describe_output(
        handler.returns, options.get("structured_output"), owner, converter, handler.fn
    )
    return RegisteredTool(name, handler, arguments, output, options)


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    """The exceptions of ``group`` and its nested groups, in order."""
    out: list[BaseException] = []
    for exc in group.exceptions:
        out.extend(_leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return out
