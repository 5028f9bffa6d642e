"""The 2026-07-28 backend of a client's :class:`~.tasks.TaskHandle` (the tasks extension,
``io.modelcontextprotocol/tasks``, SEP-2663).

In the stateless era a task is the server's choice: a ``tools/call`` that declares the extension
in its ``_meta`` may be answered with a task (``resultType: "task"``) instead of its result, and
one that does not declare it never is. ``client.call_tool(name, args, as_task=True)`` sends the
call declaring it (on that request only: the client's other requests declare what the client
was opened with) and returns the same :class:`~.tasks.TaskHandle` as in 2025-11-25, backed by
:class:`ExtensionTaskBackend`:

- ``status()`` is ``tasks/get`` (the handle shows the task's state in the 2025-11-25 shape,
  ``ttl`` / ``pollInterval`` in ms; :meth:`ExtensionTaskBackend.detailed` gives the whole
  :class:`~mcptrio.protocol.tasks_extension.DetailedTask`);
- ``result()`` polls at the task's ``pollIntervalMs`` until it ends and returns what the call
  would have returned: the ``CallToolResult`` (a tool error with ``is_error`` set), the
  JSON-RPC error of a ``failed`` task raised as its :class:`~mcptrio.protocol.errors.McpError`,
  :class:`~mcptrio.protocol.errors.InvalidRequest` for a cancelled one (as ``tasks/result``
  answers in 2025-11-25). While the task is ``input_required`` it answers the task's
  ``inputRequests`` with the client's own sampling / elicitation / roots handlers, each key
  once, in one ``tasks/update``: the same handlers answer the same requests in either era;
- ``update()`` is ``tasks/update`` with answers of the caller's own; ``cancel()`` is
  ``tasks/cancel`` (an acknowledgement: cancellation is cooperative), then ``tasks/get``.

A server may also answer a declaring call at once with its result (SEP-2663 allows either):
the handle then holds that result, its task is marked ``completed`` with an empty ``taskId``
and there is nothing to poll, update or cancel.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any, Final, TypeVar

import msgspec
import trio

from ..protocol import tasks_extension as ext
from ..protocol.errors import CapabilityNotNegotiated, InvalidRequest, McpError
from ..protocol.request_meta import CLIENT_CAPABILITIES_KEY
from ..protocol.types import CallToolRequest, CallToolResult, ServerCapabilities, Task
from ..stores.task_store import now_iso
from .input_required import answer_requests
from .tasks import TaskHandle

if TYPE_CHECKING:
    from .options import CallOptions
    from .sending import RequestSender

__all__ = [
    "DEFAULT_POLL_INTERVAL",
    "MAX_ANSWERED_KEYS",
    "ExtensionTaskBackend",
    "core_task",
    "outcome",
    "start_extension_task",
]

ResultT = TypeVar("ResultT")

#: How long to wait between polls when the server suggests nothing (seconds).
DEFAULT_POLL_INTERVAL: Final = 1.0
#: The shortest wait between polls, whatever the server suggests (seconds).
MIN_POLL_INTERVAL: Final = 0.01
#: ``inputRequests`` keys remembered as answered, per task (keys are unique per task: more
#: than this many asks is a server gone wrong).
MAX_ANSWERED_KEYS: Final = 10_000
#: The ``_meta`` member that declares the extension on one request.
DECLARE: Final[dict[str, Any]] = {CLIENT_CAPABILITIES_KEY: {"extensions": {ext.EXTENSION_ID: {}}}}


def core_task(task: ext.Task) -> Task:
    """``task`` in the 2025-11-25 shape a :class:`~.tasks.TaskHandle` shows."""
    return Task(
        task_id=task.task_id,
        status=task.status,
        created_at=task.created_at,
        last_updated_at=task.last_updated_at,
        ttl=task.ttl_ms,
        status_message=task.status_message,
        poll_interval=task.poll_interval_ms,
    )


async def start_extension_task(
    sender: RequestSender,
    capabilities: ServerCapabilities,
    name: str,
    arguments: Mapping[str, Any] | None,
    options: CallOptions,
) -> TaskHandle[CallToolResult]:
    """``client.call_tool(name, arguments, as_task=True)`` in the stateless era (the module
    docstring). :class:`CapabilityNotNegotiated` when the server does not declare the
    extension, before anything is sent."""
    if not ext.declares(capabilities):
        raise CapabilityNotNegotiated(
            f"The server does not declare the {ext.EXTENSION_ID} extension: it runs no tool as"
            " a task"
        )
    request = CallToolRequest(
        name=name, arguments=None if arguments is None else dict(arguments), meta=dict(DECLARE)
    )
    result: Any = await sender.request(request, **options)
    if isinstance(result, ext.CreateTaskResult):
        backend = ExtensionTaskBackend(sender, options)
        return TaskHandle(backend, core_task(result.task), CallToolResult)
    assert isinstance(result, CallToolResult)
    now = now_iso()
    done = Task(
        task_id="",
        status="completed",
        created_at=now,
        last_updated_at=now,
        ttl=None,
        status_message="The server answered at once, without a task",
    )
    backend = ExtensionTaskBackend(sender, options, immediate=result)
    return TaskHandle(backend, done, CallToolResult)


@dataclass(slots=True, eq=False)
class ExtensionTaskBackend:
    """A :class:`~.tasks.TaskBackend` speaking the tasks extension (the module docstring)."""

    sender: RequestSender
    #: The options of the ``tools/call`` that made the task, given to every request about it.
    options: CallOptions
    _: KW_ONLY
    #: The result of a call the server answered at once, without a task.
    immediate: CallToolResult | None = None
    _answered: set[str] = field(init=False, default_factory=set)

    async def _request(self, request: Any) -> Any:
        return await self.sender.request(request, **self.options)

    async def detailed(self, task_id: str) -> ext.DetailedTask:
        """``tasks/get``: the whole detailed task (its input requests, result or error)."""
        self._no_task_check(task_id)
        result = await self._request(ext.GetTaskRequest(task_id=task_id, meta=dict(DECLARE)))
        assert isinstance(result, ext.GetTaskResult)
        return result.task

    async def get(self, task_id: str) -> Task:
        if self.immediate is not None:
            return _immediate_task()
        return core_task(await self.detailed(task_id))

    async def update(self, task_id: str, input_responses: Mapping[str, Any]) -> None:
        self._no_task_check(task_id)
        request = ext.UpdateTaskRequest(
            task_id=task_id, input_responses=dict(input_responses), meta=dict(DECLARE)
        )
        await self._request(request)
        self._remember(input_responses)

    async def cancel(self, task_id: str) -> Task:
        if self.immediate is not None:
            return _immediate_task()
        await self._request(ext.CancelTaskRequest(task_id=task_id, meta=dict(DECLARE)))
        return await self.get(task_id)

    async def result(self, task_id: str, result_type: type[ResultT]) -> ResultT:
        if self.immediate is not None:
            return self.immediate  # type: ignore[return-value]
        suggested: int | None = None
        while True:
            task = await self.detailed(task_id)
            if task.status in ext.TERMINAL_STATUSES:
                return msgspec.convert(outcome(task), result_type)
            if task.status == "input_required":
                asked = {
                    k: v for k, v in (task.input_requests or {}).items() if k not in self._answered
                }
                if asked:
                    sender = self.sender
                    responses = await answer_requests(sender.session, asked, sender.handlers)
                    await self.update(task_id, responses)
                    continue
            if task.poll_interval_ms is not None:
                suggested = task.poll_interval_ms
            delay = DEFAULT_POLL_INTERVAL if suggested is None else suggested / 1000
            await trio.sleep(max(delay, MIN_POLL_INTERVAL))

    def _remember(self, keys: Mapping[str, Any]) -> None:
        if len(self._answered) + len(keys) > MAX_ANSWERED_KEYS:
            raise InvalidRequest(f"A task asked for input more than {MAX_ANSWERED_KEYS} times")
        self._answered.update(keys)

    def _no_task_check(self, task_id: str) -> None:
        if self.immediate is not None:
            raise InvalidRequest("There is no task: the server answered the call at once")


def _immediate_task() -> Task:
    now = now_iso()
    return Task(task_id="", status="completed", created_at=now, last_updated_at=now, ttl=None)


def outcome(task: ext.DetailedTask) -> dict[str, Any]:
    """The result (wire form) of a terminal ``task``, or its error raised (see the module
    docstring)."""
    if task.status == "completed":
        return task.result or {}
    if task.status == "failed":
        error = task.error or {}
        code, message = error.get("code"), error.get("message")
        raise McpError.from_wire(
            code if isinstance(code, int) else -32603,
            message if isinstance(message, str) else "The task failed",
            error.get("data"),
        )
    if task.status == "cancelled":
        raise InvalidRequest(
            "The task was cancelled before it produced a result"
            + (f": {task.status_message}" if task.status_message else "")
        )
    raise ValueError(f"Task {task.task_id} has not ended ({task.status})")
