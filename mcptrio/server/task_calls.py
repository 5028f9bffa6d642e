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
from typing import TYPE_CHECKING, Any

from ..protocol.base import Result
from ..protocol.errors import MethodNotFound
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
from .handler_context import HandlerContext, Route
from .logging_bridge import handling
from .sync_calls import open_sync_workers
from .task_requests import has_core_tasks

if TYPE_CHECKING:
    from .forwarding import ForwardedTool
    from .tools import RegisteredTool

__all__ = ["ServerTasks", "any_task_tools", "open_serving", "tasks_capability"]


@asynccontextmanager
async def open_serving(
    lifespan: AbstractAsyncContextManager[Any],
    tasks: TaskSupervisor,
    mounted: Iterable[AbstractAsyncContextManager[Any]] = (),
) -> AsyncIterator[Any]:
    """A server's serving lifetime: its lifespan, then the serving lifetimes of the servers
    mounted in it (``mounted``: their handlers run on its sessions and reach their own
    ``ctx.lifespan``), and inside them the sync handlers' worker threads (:mod:`.sync_calls`;
    a lifespan may open them first with another bound) and the task nursery (so tasks may use
    what the lifespans opened, and end before they close); yields the lifespan's value."""
    async with lifespan as value, AsyncExitStack() as stack:
        for serving in mounted:
            await stack.enter_async_context(serving)
        async with open_sync_workers(), tasks.running():
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

    def __init__(self, supervisor: TaskSupervisor) -> None:
        self.receiver = TaskReceiver(supervisor)

    def routes(self) -> dict[type[Any], Route]:
        return {
            GetTaskRequest: self.get,
            GetTaskPayloadRequest: self.result,
            ListTasksRequest: self.list,
            CancelTaskRequest: self.cancel,
        }

    @staticmethod
    def owner(ctx: HandlerContext) -> str:
        return owner_of(ctx.principal, ctx.session)

    async def call_tool(
        self,
        ctx: HandlerContext,
        tool: RegisteredTool | ForwardedTool,
        request: CallToolRequest,
        arguments: dict[str, Any] | None,
    ) -> Result | None:
        """Answer a ``tools/call`` as the tool's task support says; ``None`` when it is to be
        called as usual."""
        support = getattr(tool, "task_support", "forbidden")
        if not has_core_tasks(ctx.request_meta, ctx.session.connection):
            return None
        if request.task is None:
            if support == "required":
                raise MethodNotFound(
                    f"Tool {tool.name!r} must be called as a task (its taskSupport is 'required')"
                )
            return None
        if support == "forbidden":
            raise MethodNotFound(f"Tool {tool.name!r} does not support task-augmented calls")

        async def work(tctx: TaskRequestContext) -> Result:
            task_ctx = ctx._for_task(tctx)
            with handling(task_ctx):
                return await tool.call(task_ctx, arguments)

        return await self.receiver.start(ctx._runtime, request.task, self.owner(ctx), work)

    async def get(self, ctx: HandlerContext, request: GetTaskRequest) -> GetTaskResult:
        return await self.receiver.get(self.owner(ctx), request)

    async def result(self, ctx: HandlerContext, request: GetTaskPayloadRequest) -> Result:
        return await self.receiver.result(ctx._runtime, self.owner(ctx), request)

    async def list(self, ctx: HandlerContext, request: ListTasksRequest) -> ListTasksResult:
        return await self.receiver.list(self.owner(ctx), request)

    async def cancel(self, ctx: HandlerContext, request: CancelTaskRequest) -> CancelTaskResult:
        return await self.receiver.cancel(self.owner(ctx), request)
