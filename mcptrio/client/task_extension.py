"""The client's side of the 2026-07-28 tasks extension (``io.modelcontextprotocol/tasks``).

In the stateless era a task is the server's choice: a ``tools/call`` that declares the extension
in its ``_meta`` may be answered with a task (``resultType: "task"``) instead of its result, and
one that does not declare it never is. :class:`TaskExtension` is what a :class:`~.client.Client`
does with such tasks, and :class:`ExtensionTaskHandle` the handle a caller keeps of one:

- :meth:`TaskExtension.call_tool` sends the call with the extension declared (on that request
  only: the client's other requests declare what the client was opened with) and returns a
  handle, for a task or for a result the server gave at once (both are valid answers);
- :meth:`ExtensionTaskHandle.status` is ``tasks/get``: the status-specific
  :class:`~mcptrio.protocol.tasks_extension.DetailedTask`;
- :meth:`ExtensionTaskHandle.result` polls (at the server's ``pollIntervalMs``, by default)
  until the task ends and returns what the call would have returned: the ``CallToolResult``
  (tool errors included, ``is_error`` set), the JSON-RPC error of a ``failed`` task raised as
  its :class:`~mcptrio.protocol.errors.McpError`, :class:`TaskCancelled` for a cancelled one.
  While the task is ``input_required`` it answers the task's ``inputRequests`` with the
  client's own sampling / elicitation / roots handlers, each key once, through ``tasks/update``;
- :meth:`ExtensionTaskHandle.update` sends answers of the caller's own, and
  :meth:`ExtensionTaskHandle.cancel` is ``tasks/cancel`` (cooperative: the task may still end
  otherwise).

Every wait is bounded: the polling by the caller's scope (``trio.fail_after`` around
:meth:`~ExtensionTaskHandle.result`), each request by the client's timeouts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Unpack

import msgspec
import trio

from ..protocol import tasks_extension as ext
from ..protocol.errors import McpError
from ..protocol.request_meta import CLIENT_CAPABILITIES_KEY
from ..protocol.types import CallToolRequest, CallToolResult
from .errors import ClientError
from .input_required import answer_requests
from .options import CallOptions

if TYPE_CHECKING:
    from .client import Client

__all__ = [
    "DEFAULT_POLL_INTERVAL",
    "ExtensionTaskHandle",
    "TaskCancelled",
    "TaskExtension",
    "TaskNotOffered",
]

#: How long to wait between polls when the server suggests nothing (seconds).
DEFAULT_POLL_INTERVAL: Final = 1.0
#: The shortest wait between polls, whatever the server suggests (seconds).
MIN_POLL_INTERVAL: Final = 0.01
#: ``inputRequests`` keys remembered as answered, per task (keys are unique per task: more
#: than this many rounds of input is a server gone wrong).
MAX_ANSWERED_KEYS: Final = 10_000


class TaskCancelled(ClientError, default_message="The task was cancelled"):
    """The task ended ``cancelled``: it has no result."""


class TaskNotOffered(ClientError, default_message="The server does not offer tasks"):
    """The server did not declare the tasks extension (``server/discover``)."""


_DECLARE: Final[dict[str, Any]] = {CLIENT_CAPABILITIES_KEY: {"extensions": {ext.EXTENSION_ID: {}}}}


class TaskExtension:
    """A client's calls of the tasks extension (see the module docstring)."""

    __slots__ = ("_client",)

    def __init__(self, client: Client) -> None:
        self._client = client

    def offered(self) -> bool:
        """Whether the server declared the extension."""
        return ext.declares(self._client.server_capabilities)

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        **options: Unpack[CallOptions],
    ) -> ExtensionTaskHandle:
        """Call tool ``name`` declaring the extension; the handle of the task the server made,
        or of the result it gave at once (see :attr:`ExtensionTaskHandle.immediate`)."""
        if not self.offered():
            raise TaskNotOffered(
                f"The server does not declare the {ext.EXTENSION_ID} extension: call"
                f" {name!r} without as_task"
            )
        request = CallToolRequest(
            name=name,
            arguments=None if arguments is None else dict(arguments),
            meta=dict(_DECLARE),
        )
        result: Any = await self._client.request(request, **options)
        if isinstance(result, ext.CreateTaskResult):
            return ExtensionTaskHandle(self, result.task, None)
        assert isinstance(result, CallToolResult)
        return ExtensionTaskHandle(self, None, result)

    async def get(self, task_id: str, **options: Unpack[CallOptions]) -> ext.DetailedTask:
        """``tasks/get``: the task as it is now."""
        request = ext.GetTaskRequest(task_id=task_id, meta=dict(_DECLARE))
        result = await self._client.request(request, **options)
        return result.task

    async def update(
        self, task_id: str, responses: Mapping[str, Any], **options: Unpack[CallOptions]
    ) -> None:
        """``tasks/update``: answers to the task's input requests, by key (wire form)."""
        request = ext.UpdateTaskRequest(
            task_id=task_id, input_responses=dict(responses), meta=dict(_DECLARE)
        )
        await self._client.request(request, **options)

    async def cancel(self, task_id: str, **options: Unpack[CallOptions]) -> None:
        """``tasks/cancel``: ask the server to cancel the task (it may still end otherwise)."""
        await self._client.request(
            ext.CancelTaskRequest(task_id=task_id, meta=dict(_DECLARE)), **options
        )

    async def answer(self, task: ext.DetailedTask, answered: set[str]) -> None:
        """Answer the input requests of ``task`` not in ``answered`` (then added to it) with the
        client's handlers, in one ``tasks/update``."""
        asked = {k: v for k, v in (task.input_requests or {}).items() if k not in answered}
        if not asked:
            return
        if len(answered) + len(asked) > MAX_ANSWERED_KEYS:
            raise ClientError(
                f"Task {task.task_id} asked for input more than {MAX_ANSWERED_KEYS} times"
            )
        client = self._client
        responses = await answer_requests(client.session, asked, client._handlers)
        await self.update(task.task_id, responses)
        answered.update(asked)


class ExtensionTaskHandle:
    """A task the server runs for a ``tools/call`` (or the result it gave at once)."""

    __slots__ = ("_answered", "_calls", "_last", "immediate", "task")

    def __init__(
        self, calls: TaskExtension, task: ext.Task | None, immediate: CallToolResult | None
    ) -> None:
        self._calls = calls
        #: The task as created (``None`` when the server answered at once).
        self.task = task
        #: The result the server gave instead of a task (it may, SEP-2663).
        self.immediate = immediate
        self._answered: set[str] = set()
        self._last: ext.DetailedTask | None = None

    def __repr__(self) -> str:
        what = "immediate result" if self.task is None else self.task.task_id
        return f"<ExtensionTaskHandle {what}>"

    @property
    def task_id(self) -> str | None:
        """The task's id (``None``: no task, the result came at once)."""
        return None if self.task is None else self.task.task_id

    async def status(self) -> ext.DetailedTask | None:
        """``tasks/get`` (``None`` when there is no task)."""
        if self.task is None:
            return None
        self._last = await self._calls.get(self.task.task_id)
        return self._last

    async def update(self, responses: Mapping[str, Any]) -> None:
        """Send answers of your own to the task's input requests (wire form, by key)."""
        if self.task is None:
            raise ClientError("There is no task to update: the result came at once")
        await self._calls.update(self.task.task_id, responses)
        self._answered.update(responses)

    async def cancel(self) -> None:
        """Ask the server to cancel the task (a no-op when there is none)."""
        if self.task is not None:
            await self._calls.cancel(self.task.task_id)

    async def wait(
        self, *, poll_interval: float | None = None, answer_inputs: bool = True
    ) -> ext.DetailedTask | None:
        """Poll until the task ends (answering its input requests with the client's handlers
        unless ``answer_inputs`` is false); the terminal task (``None``: no task)."""
        if self.task is None:
            return None
        suggested = self.task.poll_interval_ms
        while True:
            task = await self.status()
            assert task is not None
            if task.status in ext.TERMINAL_STATUSES:
                return task
            if task.status == "input_required" and answer_inputs:
                await self._calls.answer(task, self._answered)
                continue
            if task.poll_interval_ms is not None:
                suggested = task.poll_interval_ms
            delay = (
                poll_interval
                if poll_interval is not None
                else DEFAULT_POLL_INTERVAL
                if suggested is None
                else suggested / 1000
            )
            await trio.sleep(max(delay, MIN_POLL_INTERVAL))

    async def result(self, *, poll_interval: float | None = None) -> CallToolResult:
        """What the call returns once the task ends (see the module docstring)."""
        if self.immediate is not None:
            return self.immediate
        task = await self.wait(poll_interval=poll_interval)
        assert task is not None
        return outcome(task)


def outcome(task: ext.DetailedTask) -> CallToolResult:
    """The call's result from a terminal ``task``: its result, or its error raised."""
    if task.status == "completed":
        return msgspec.convert(task.result or {}, CallToolResult)
    if task.status == "failed":
        error = task.error or {}
        code, message = error.get("code"), error.get("message")
        raise McpError.from_wire(
            code if isinstance(code, int) else -32603,
            message if isinstance(message, str) else "The task failed",
            error.get("data"),
        )
    if task.status == "cancelled":
        raise TaskCancelled(f"Task {task.task_id} was cancelled")
    raise ValueError(f"Task {task.task_id} has not ended ({task.status})")
