"""A server's 2025-11-25 tasks: task-augmented ``tools/call`` and the ``tasks/*`` requests.

A tool declares whether it may be run as a task (``@server.tool(task="optional")``, see
:class:`~.tools.ToolOptions`); :func:`call_tool` then decides, as the spec says:

- a task-augmented call of a tool whose ``taskSupport`` is ``"forbidden"``: -32601;
- a plain call of a tool whose ``taskSupport`` is ``"required"``: -32601;
- otherwise a task-augmented call is answered at once with a :class:`CreateTaskResult`, and the
  tool runs as a task in the server's task nursery (:mod:`mcptrio.tasks`), with the same
  :class:`~.context.Context` API: its progress, log messages and requests to the client carry
  the related-task ``_meta``, and a request to the client moves the task to
  ``input_required`` until it is answered.

Only revisions with core tasks (2025-11-25) see any of this: before it, ``task`` is not on the
wire and a tool is called as it always was; the 2026-07-28 extension is served elsewhere.
Tasks are bound to the requestor (:func:`mcptrio.tasks.owner_of`: its principal, else its
session).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from ..protocol.base import Request, Result
from ..protocol.errors import CapabilityNotNegotiated, MethodNotFound
from ..protocol.types import (
    CallToolRequest,
    CancelTaskRequest,
    CancelTaskResult,
    GetTaskPayloadRequest,
    GetTaskRequest,
    GetTaskResult,
    ListTasksRequest,
    ListTasksResult,
    ServerTaskRequestsCapability,
    ServerTasksCapability,
    TaskToolsCapability,
)
from ..tasks import TaskReceiver, TaskRequestContext, TaskSupervisor, owner_of
from ..tasks.handle import CoreTaskBackend, TaskHandle, task_augmented
from .context import Context
from .logging_bridge import current_context

if TYPE_CHECKING:
    from .forwarding import ForwardedTool
    from .method_handlers import Route
    from .server import Server
    from .tools import RegisteredTool

__all__ = [
    "ServerTasks",
    "any_task_tools",
    "core_tasks",
    "open_serving",
    "request_as_task",
    "tasks_capability",
]

ResultT = TypeVar("ResultT", bound=Result)

#: Where a client declares that it takes a request as a task, by method.
_CLIENT_TASK_REQUESTS = {
    "sampling/createMessage": ("sampling", "createMessage"),
    "elicitation/create": ("elicitation", "create"),
}


async def request_as_task(
    ctx: Context, request: Request[ResultT], ttl: float | None = None
) -> TaskHandle[ResultT]:
    """Send ``request`` (sampling or elicitation) to the client as a task; its handle.

    The client must have declared ``tasks.requests.<that request>`` (2025-11-25):
    :class:`CapabilityNotNegotiated` otherwise, before anything is sent. ``ttl`` in seconds.
    """
    path = _CLIENT_TASK_REQUESTS.get(request.METHOD)
    caps = ctx.client_capabilities
    declared: Any = None if caps is None or caps.tasks is None else caps.tasks.requests
    for step in path or ():
        declared = None if declared is None else getattr(declared, _snake(step), None)
    if path is None or declared is None or not core_tasks(ctx):
        raise CapabilityNotNegotiated(
            f"The client does not take {request.METHOD} as a task (tasks.requests undeclared)"
        )
    augmented = task_augmented(request, None if ttl is None else round(ttl * 1000))
    created = await ctx.send_request(augmented)
    return TaskHandle.created(CoreTaskBackend(ctx.send_request), created, request.RESULT)  # type: ignore[arg-type]


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def core_tasks(ctx: Context) -> bool:
    """Whether the request's revision has 2025-11-25 core tasks."""
    meta = ctx.request_meta
    features = meta.revision if meta is not None else ctx.session.connection.features
    return features is not None and features.tasks


@asynccontextmanager
async def open_serving(
    lifespan: AbstractAsyncContextManager[Any],
    tasks: TaskSupervisor,
    mounted: Iterable[AbstractAsyncContextManager[Any]] = (),
) -> AsyncIterator[Any]:
    """A server's serving lifetime: its lifespan, then the serving lifetimes of the servers
    mounted in it (``mounted``: their handlers run on its sessions and reach their own
    ``ctx.lifespan``), and inside them the task nursery (so tasks may use what the lifespans
    opened, and end before they close); yields the lifespan's value."""
    async with lifespan as value, AsyncExitStack() as stack:
        for serving in mounted:
            await stack.enter_async_context(serving)
        async with tasks.running():
            yield value


def any_task_tools(tools: Iterable[object]) -> bool:
    """Whether any of ``tools`` may be called as a task."""
    return any(getattr(t, "task_support", "forbidden") != "forbidden" for t in tools)


def tasks_capability() -> ServerTasksCapability:
    """The ``tasks`` a server with task-capable tools declares."""
    return ServerTasksCapability(
        list={},
        cancel={},
        requests=ServerTaskRequestsCapability(tools=TaskToolsCapability(call={})),
    )


class ServerTasks:
    """The task half of a server's request handlers."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.receiver = TaskReceiver(server.tasks)

    def routes(self) -> dict[type[Any], Route]:
        return {
            GetTaskRequest: self.get,
            GetTaskPayloadRequest: self.result,
            ListTasksRequest: self.list,
            CancelTaskRequest: self.cancel,
        }

    @staticmethod
    def owner(ctx: Context) -> str:
        return owner_of(ctx.principal, ctx.session)

    async def call_tool(
        self,
        ctx: Context,
        tool: RegisteredTool | ForwardedTool,
        request: CallToolRequest,
        arguments: dict[str, Any] | None,
    ) -> Result | None:
        """Answer a ``tools/call`` as the tool's task support says; ``None`` when it is to be
        called as usual."""
        support = getattr(tool, "task_support", "forbidden")
        if not core_tasks(ctx):
            return None
        if request.task is None:
            if support == "required":
                raise MethodNotFound(
                    f"Tool {tool.name!r} must be called as a task (its taskSupport is 'required')"
                )
            return None
        if support == "forbidden":
            raise MethodNotFound(f"Tool {tool.name!r} does not support task-augmented calls")
        server = ctx.server

        async def work(tctx: TaskRequestContext) -> Result:
            task_ctx = Context(tctx, server)
            token = current_context.set(task_ctx)
            try:
                return await tool.call(task_ctx, arguments)
            finally:
                current_context.reset(token)

        return await self.receiver.start(ctx._runtime, request.task, self.owner(ctx), work)

    async def get(self, ctx: Context, request: GetTaskRequest) -> GetTaskResult:
        return await self.receiver.get(self.owner(ctx), request)

    async def result(self, ctx: Context, request: GetTaskPayloadRequest) -> Result:
        return await self.receiver.result(ctx._runtime, self.owner(ctx), request)

    async def list(self, ctx: Context, request: ListTasksRequest) -> ListTasksResult:
        return await self.receiver.list(self.owner(ctx), request)

    async def cancel(self, ctx: Context, request: CancelTaskRequest) -> CancelTaskResult:
        return await self.receiver.cancel(self.owner(ctx), request)
