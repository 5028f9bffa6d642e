"""A server's side of the 2026-07-28 tasks extension (``io.modelcontextprotocol/tasks``).

The wire rules are in :mod:`mcptrio.protocol.tasks_extension`; the tasks themselves are actors
of the server's :class:`~mcptrio.tasks.TaskSupervisor`, their records in its store, as the
2025-11-25 tasks are (:mod:`.task_calls`). What this module adds:

**Which calls become tasks.** A tool declares task support (``@server.tool(task=...)``). In the
stateless era a ``tools/call`` of such a tool becomes a task when the request declares the
extension in its ``_meta`` (the server decides; the client never asks); otherwise a tool whose
support is ``"optional"`` is called as usual, and one whose support is ``"required"`` is
answered -32021 naming the extension. The ``task`` request param of 2025-11-25 means nothing
here (the fitting step drops it).

**Input before the task** (SEP-2663 "Composition with Multi Round-Trip Requests"). A tool
registered with ``input_before_task=True`` runs in the request first, where its asks are
input-required rounds as usual (:mod:`.input_rounds`), until it calls
:meth:`Context.begin_task <mcptrio.server.Context.begin_task>`: the request is then answered
with the task, which runs the tool again from the start with the answers gathered (the same
replay the rounds already make), ``begin_task`` being a no-op there. A tool that never calls it
is answered in the request, as a plain call.

**Input inside a task.** The task's handler asks as any handler does (``ctx.elicit``,
``ctx.sample``, ``ctx.ask``): each ask gets a key unique for the task's lifetime, the task
moves to ``input_required`` with every outstanding ask in ``inputRequests``, and the handler
waits (its task's TTL and ``tasks/cancel`` bound the wait). ``tasks/update`` delivers answers by
key: unknown or already answered keys are ignored, an answer that does not fit its request is
ignored too (the ask stays outstanding), and a partial set leaves the task ``input_required``
with only the keys still unanswered. Once none is left the task is ``working`` again.

**No notifications about a task's request.** ``notifications/progress`` and
``notifications/message`` are not sent for tasks: a task's progress message becomes its
``statusMessage``, and its log messages are dropped. Status changes reach a client on a
``subscriptions/listen`` stream that asked for the task's id (:func:`watch_tasks`).

**Who sees a task.** The requestor's principal when the server authenticates. Without an
authenticator the stateless era has no session to bind a task to, and the client's address is
all that tells requestors apart: over HTTP and WebSocket a task is its address's (whose
``max_unfinished_per_owner`` is then per address, so one client cannot take every other
client's share), elsewhere (stdio, in memory: one client) anyone's who holds the task id (ids
are 192-bit random).

**Several workers.** Everything about a task is in its record, so any worker answers
``tasks/get`` and ``tasks/cancel``. ``tasks/update`` hands answers straight to the task when it
runs in the same process; otherwise it merges them into the record's ``input_responses``, where
the worker running the task finds them (it watches the record while it waits). That merge is a
read then a write: a store shared between workers should offer it as one atomic step (two
updates racing can lose one), and ``Mcp-Name: <taskId>`` lets a load balancer send a task's
requests to one worker meanwhile.

Limits: a task that asks for input waits at most until its TTL; a listen stream follows at most
:data:`MAX_WATCHED_TASKS` tasks.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol

import msgspec
import trio

from ..protocol import tasks_extension as ext
from ..protocol.base import Request, Result
from ..protocol.errors import InvalidParams
from ..protocol.methods import METHODS
from ..protocol.request_meta import RequestMeta
from ..protocol.types import CallToolRequest, InputRequest
from ..stores.task_store import TaskRecord
from ..tasks import RunningTask, TaskSupervisor
from .handler_context import HandlerContext, Route
from .input_rounds import InputRequired
from .logging_bridge import handling
from .requestor import requestor_key
from .task_inputs import BeginTask, ExtensionTaskContext, TaskInputs

if TYPE_CHECKING:
    from .forwarding import ForwardedTool
    from .tools import RegisteredTool

__all__ = [
    "MAX_WATCHED_TASKS",
    "ExtensionTasks",
    "TaskOwner",
    "detailed_task",
    "task_owner",
    "tasks_extension_capability",
    "watch_tasks",
]

log = logging.getLogger("mcptrio.server")

#: The tasks one listen stream may follow.
MAX_WATCHED_TASKS: Final = 100


def tasks_extension_capability() -> dict[str, dict[str, Any]]:
    """The ``extensions`` a server with task-capable tools declares (in the stateless era: the
    fitting step leaves ``extensions`` out of older revisions, as it leaves ``tasks`` out of
    this one)."""
    return {ext.EXTENSION_ID: {}}


def task_owner(ctx: HandlerContext) -> str:
    """Whose a stateless-era task is: the principal's when there is one, else the client
    address's when the transport knows it, else the holder's of its id (see the module
    docstring)."""
    return requestor_key(ctx)


def detailed_task(record: TaskRecord) -> ext.DetailedTask:
    """The status-specific task of ``record`` (what ``tasks/get`` answers)."""
    input_requests = result = error = None
    if record.status == "input_required" and record.input_requests:
        input_requests = msgspec.json.decode(record.input_requests, type=dict[str, InputRequest])
    elif record.status == "completed" and record.result is not None:
        result = msgspec.json.decode(record.result, type=dict[str, Any])
    elif record.status == "failed" and record.error is not None:
        error = msgspec.json.decode(record.error, type=dict[str, Any])
    return ext.DetailedTask(
        task_id=record.task_id,
        status=record.status,
        status_message=record.status_message,
        created_at=record.created_at,
        last_updated_at=record.last_updated_at,
        ttl_ms=record.ttl_ms,
        poll_interval_ms=record.poll_interval_ms,
        input_requests=input_requests,
        result=result,
        error=error,
    )


class TaskOwner(Protocol):
    """A server whose tasks the extension serves (a :class:`~mcptrio.Server` is one)."""

    tasks: TaskSupervisor


class ExtensionTasks:
    """The tasks extension's half of a server's request handlers."""

    def __init__(self, owner: TaskOwner) -> None:
        self._owner = owner
        # The input exchanges of the tasks running in this process, by task id.
        self._inputs: dict[str, TaskInputs] = {}

    @property
    def supervisor(self) -> TaskSupervisor:
        """The supervisor running the owner's tasks (read each time: it may be replaced)."""
        return self._owner.tasks

    def routes(self) -> dict[type[Any], Route]:
        return {
            ext.GetTaskRequest: self.get,
            ext.UpdateTaskRequest: self.update,
            ext.CancelTaskRequest: self.cancel,
        }

    async def call_tool(
        self,
        ctx: HandlerContext,
        tool: RegisteredTool | ForwardedTool,
        request: CallToolRequest,
        arguments: dict[str, Any] | None,
    ) -> Result | None:
        """A stateless-era ``tools/call`` as the extension says (the module docstring);
        ``None`` when the tool is to be called as usual."""
        meta = ctx.request_meta
        support = getattr(tool, "task_support", "forbidden")
        if meta is None or support == "forbidden" or not meta.revision.extensions:
            return None
        if not ext.declares(meta.client_capabilities):
            if support == "required":
                raise ext.required_error(
                    f"Tool {tool.name!r} runs only as a task: declare the {ext.EXTENSION_ID}"
                    " extension in the request's clientCapabilities"
                )
            return None
        seeded: Mapping[str, Any] = {}
        if getattr(tool, "input_before_task", False):
            ctx._task_prelude = True
            try:
                return await tool.call(ctx, arguments)
            except BeginTask:
                seeded = ctx.input_answers
            except BaseExceptionGroup as group:
                # begin_task() called in a nursery of the function's own.
                began, rest = group.split(BeginTask)
                if began is None or rest is not None:
                    raise
                seeded = ctx.input_answers
            finally:
                ctx._task_prelude = False
        return await self._start(ctx, tool, arguments, meta, seeded)

    async def _start(
        self,
        ctx: HandlerContext,
        tool: RegisteredTool | ForwardedTool,
        arguments: dict[str, Any] | None,
        meta: RequestMeta,
        seeded: Mapping[str, Any],
    ) -> ext.CreateTaskResult:
        origin = ctx._runtime

        async def work(running: RunningTask) -> Result:
            inputs = TaskInputs(running, self.supervisor.store, meta, seeded)
            self._inputs[running.task_id] = inputs
            task_ctx = ctx._for_task(ExtensionTaskContext(origin, inputs))
            task_ctx._task_inputs = inputs
            try:
                with handling(task_ctx):
                    return await tool.call(task_ctx, arguments)
            except InputRequired as asked:  # pragma: no cover - asks park in a task
                raise AssertionError("a task's asks do not end rounds") from asked
            finally:
                self._inputs.pop(running.task_id, None)

        record = await self.supervisor.create(
            task_owner(ctx), "tools/call", work, error_result_fails=False
        )
        return ext.CreateTaskResult.of(detailed_task(record))

    async def _record(self, ctx: HandlerContext, task_id: str) -> TaskRecord:
        return await self.supervisor.get(task_owner(ctx), task_id)

    async def get(self, ctx: HandlerContext, request: ext.GetTaskRequest) -> ext.GetTaskResult:
        return ext.GetTaskResult.of(detailed_task(await self._record(ctx, request.task_id)))

    async def update(
        self, ctx: HandlerContext, request: ext.UpdateTaskRequest
    ) -> ext.UpdateTaskResult:
        record = await self._record(ctx, request.task_id)
        inputs = self._inputs.get(record.task_id)
        if inputs is not None:
            await inputs.deliver(request.input_responses)
        elif record.status == "input_required" and record.input_requests:
            await self._answer_through_store(record, request.input_responses)
        return ext.UpdateTaskResult()

    async def _answer_through_store(self, record: TaskRecord, responses: Mapping[str, Any]) -> None:
        """Answers to a task another worker runs: merged into its record, where that worker's
        :class:`TaskInputs` finds them. A read-merge-write: a store shared between workers
        should make it atomic (see the module docstring)."""
        asked = msgspec.json.decode(record.input_requests or b"{}", type=dict[str, InputRequest])
        received: dict[str, Any] = (
            msgspec.json.decode(record.input_responses) if record.input_responses else {}
        )
        taken = {
            key: raw
            for key, raw in responses.items()
            if key in asked and key not in received and _fits(asked[key], raw)
        }
        if not taken:
            return
        await self.supervisor.store.transition(
            record.task_id,
            "input_required",
            status_message=record.status_message,
            input_requests=record.input_requests,
            input_responses=msgspec.json.encode({**received, **taken}),
        )

    async def cancel(
        self, ctx: HandlerContext, request: ext.CancelTaskRequest
    ) -> ext.CancelTaskResult:
        owner = task_owner(ctx)
        record = await self.supervisor.get(owner, request.task_id)
        if not record.terminal:
            # It may end (or expire) meanwhile: cancellation is eventually consistent, and the
            # ack says only that the request was taken.
            with contextlib.suppress(InvalidParams):
                await self.supervisor.cancel(owner, record.task_id)
        return ext.CancelTaskResult()

    async def accepted_ids(self, ctx: HandlerContext, task_ids: list[str]) -> list[str]:
        """The ids of ``task_ids`` a listen stream of ``ctx`` may follow (known, the
        requestor's, at most :data:`MAX_WATCHED_TASKS`)."""
        owner = task_owner(ctx)
        accepted: list[str] = []
        for task_id in dict.fromkeys(task_ids):
            if len(accepted) >= MAX_WATCHED_TASKS:
                break
            record = await self.supervisor.store.get(task_id)
            if record is not None and record.owner == owner:
                accepted.append(task_id)
        return accepted


def _fits(asked: InputRequest, raw: Any) -> bool:
    """Whether ``raw`` is an answer of the shape ``asked`` calls for."""
    spec = METHODS.get(asked.method)
    if spec is None or not issubclass(spec.params, Request):
        return False
    try:
        msgspec.convert(raw, spec.params.RESULT)
    except msgspec.ValidationError:
        return False
    return True


async def watch_tasks(
    supervisor: TaskSupervisor, ctx: HandlerContext, task_ids: list[str], tag: dict[str, Any]
) -> None:
    """Send ``notifications/tasks`` (tagged with ``tag``) on ``ctx``'s listen stream for every
    status change of ``task_ids``, until each ends or is gone."""
    async with trio.open_nursery() as nursery:
        for task_id in task_ids:
            nursery.start_soon(_watch_one, supervisor, ctx, task_id, tag)


async def _watch_one(
    supervisor: TaskSupervisor, ctx: HandlerContext, task_id: str, tag: dict[str, Any]
) -> None:
    # No version is -1: the stream opens with the task as it is now.
    version = -1
    while True:
        current = await supervisor.store.wait_for_change(task_id, version)
        if current is None:
            return
        version = current.version
        notification = ext.TaskStatusNotification.of(detailed_task(current), meta=dict(tag))
        await ctx.notify(notification)
        if current.terminal:
            return
