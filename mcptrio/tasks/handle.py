"""A task seen from its requestor: :class:`TaskHandle`, to poll, await and cancel it.

Either side may be the requestor in 2025-11-25 (a client's ``tools/call``, a server's
``sampling/createMessage`` or ``elicitation/create``), so the handle is shared; it reaches the
receiver through a :class:`TaskBackend`: :class:`CoreTaskBackend` speaks the 2025-11-25 core
methods (``tasks/get``, ``tasks/result``, ``tasks/cancel``); the 2026-07-28 tasks extension has
a backend of its own behind the same handle. :meth:`TaskHandle.result` returns exactly the
result the original request would have returned, and raises the
:class:`~mcptrio.protocol.errors.McpError` it would have raised.

:func:`task_augmented` makes a request task-augmented (``params.task``) with a type whose answer
decodes as :class:`CreateTaskResult`; :func:`payload_request` makes the ``tasks/result`` request
whose answer decodes as the original request's result type.
"""

from __future__ import annotations

import types
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Generic, Protocol, TypeVar, cast

import trio

from ..protocol.base import Request, Result
from ..protocol.errors import InvalidRequest
from ..protocol.types import (
    CancelTaskRequest,
    CreateTaskResult,
    GetTaskPayloadRequest,
    GetTaskRequest,
    Task,
    TaskMetadata,
)
from ..protocol.types.tasks import MODEL_IMMEDIATE_RESPONSE_META_KEY

__all__ = [
    "CoreTaskBackend",
    "TaskBackend",
    "TaskHandle",
    "payload_request",
    "task_augmented",
]

ResultT = TypeVar("ResultT", bound=Result)
ResultT_co = TypeVar("ResultT_co", bound=Result, covariant=True)
#: The statuses a task never leaves.
TERMINAL = frozenset({"completed", "failed", "cancelled"})
#: How long :meth:`TaskHandle.wait` sleeps between polls when the task suggests nothing (s).
DEFAULT_POLL_INTERVAL = 1.0


_PAYLOAD_TYPES: dict[type[Result], type[GetTaskPayloadRequest]] = {}
_AUGMENTED_TYPES: dict[type[Request[Any]], type[Request[Any]]] = {}


def _subclass(base: type[Any], result_type: type[Result]) -> type[Any]:
    """``base`` with ``RESULT = result_type`` (the answer decodes as that type)."""

    def body(ns: dict[str, Any]) -> None:
        ns["RESULT"] = result_type

    name = f"{base.__name__}[{result_type.__name__}]"
    return types.new_class(name, (base,), {"kw_only": True}, body)


def task_augmented(request: Request[Any], ttl_ms: int | None = None) -> Request[CreateTaskResult]:
    """``request`` with ``params.task`` (``ttl_ms``: the TTL asked for), of a type whose answer
    is the :class:`CreateTaskResult` a receiver answers a task-augmented request with."""
    base = type(request)
    cls = _AUGMENTED_TYPES.get(base)
    if cls is None:
        cls = _AUGMENTED_TYPES[base] = _subclass(base, CreateTaskResult)
    fields = {f: getattr(request, f) for f in request.__struct_fields__}
    fields["task"] = TaskMetadata(ttl=ttl_ms)
    return cast("Request[CreateTaskResult]", cls(**fields))


def payload_request(result_type: type[ResultT], task_id: str) -> Request[ResultT]:
    """A ``tasks/result`` request whose answer decodes as ``result_type`` (the original
    request's result type, as the spec has it)."""
    cls = _PAYLOAD_TYPES.get(result_type)
    if cls is None:
        cls = _PAYLOAD_TYPES[result_type] = _subclass(GetTaskPayloadRequest, result_type)
    return cast("Request[ResultT]", cls(task_id=task_id))


class TaskBackend(Protocol):
    """How a :class:`TaskHandle` reaches the receiver of its task (one per era)."""

    async def get(self, task_id: str) -> Task:
        """The task's current state."""
        ...

    async def result(self, task_id: str, result_type: type[ResultT]) -> ResultT:
        """Wait until the task ends; its result (or raise its error)."""
        ...

    async def cancel(self, task_id: str) -> Task:
        """Cancel the task; its state afterwards (``cancelled``)."""
        ...

    async def update(self, task_id: str, input_responses: Mapping[str, Any]) -> None:
        """Answer what the task asked for (the 2026-07-28 extension's ``tasks/update``)."""
        ...


#: Sends a request and returns its result (a client's ``request``, a session's ``request``).
Send = Callable[[Request[Any]], Awaitable[Any]]


class CoreTaskBackend:
    """2025-11-25 core tasks: ``tasks/get``, ``tasks/result`` and ``tasks/cancel``, sent with
    ``send`` (input the task needs is asked for by the receiver's own requests, which the
    requestor's handlers answer: there is nothing to update)."""

    def __init__(self, send: Send) -> None:
        self._send = send

    async def get(self, task_id: str) -> Task:
        return (await self._send(GetTaskRequest(task_id=task_id))).task  # type: ignore[no-any-return]

    async def result(self, task_id: str, result_type: type[ResultT]) -> ResultT:
        return await self._send(payload_request(result_type, task_id))  # type: ignore[no-any-return]

    async def cancel(self, task_id: str) -> Task:
        return (await self._send(CancelTaskRequest(task_id=task_id))).task  # type: ignore[no-any-return]

    async def update(self, task_id: str, input_responses: Mapping[str, Any]) -> None:
        raise InvalidRequest(
            "Core tasks (the handshake era's) take no updates: the receiver asks for input with"
            " its own requests (elicitation, sampling), which this client's handlers answer"
        )


class TaskHandle(Generic[ResultT_co]):
    """A task the peer runs for one of our requests: poll it, wait for it, cancel it.

    :attr:`task` is the task as last heard of (from the creation, :meth:`status`,
    :meth:`wait` or :meth:`cancel`); :attr:`immediate_response` is the text the server
    offered to show the model meanwhile (``None`` if none).
    """

    __slots__ = ("_backend", "_result_type", "immediate_response", "task")

    def __init__(
        self,
        backend: TaskBackend,
        task: Task,
        result_type: type[ResultT_co],
        *,
        immediate_response: str | None = None,
    ) -> None:
        self._backend = backend
        self._result_type = result_type
        self.task = task
        self.immediate_response = immediate_response

    @classmethod
    def created(
        cls, backend: TaskBackend, created: CreateTaskResult, result_type: type[ResultT]
    ) -> TaskHandle[ResultT]:
        """The handle of the task a :class:`CreateTaskResult` announces."""
        meta = created.meta if isinstance(created.meta, dict) else {}
        immediate = meta.get(MODEL_IMMEDIATE_RESPONSE_META_KEY)
        return TaskHandle(
            backend,
            created.task,
            result_type,
            immediate_response=immediate if isinstance(immediate, str) else None,
        )

    @property
    def task_id(self) -> str:
        return self.task.task_id

    @property
    def done(self) -> bool:
        """Whether the task was terminal when last heard of."""
        return self.task.status in TERMINAL

    async def status(self) -> Task:
        """Ask for the task's state now (``tasks/get``)."""
        self.task = await self._backend.get(self.task_id)
        return self.task

    async def wait(self, *, poll_interval: float | None = None) -> Task:
        """Poll until the task is terminal (or needs input) and return it. Sleeps the
        ``pollInterval`` the receiver suggests between polls, unless ``poll_interval``
        (seconds) says otherwise. Wrap it in ``trio.fail_after`` to bound the wait."""
        task = self.task
        while True:
            if task.status in TERMINAL or task.status == "input_required":
                return task
            if poll_interval is not None:
                delay = poll_interval
            elif task.poll_interval is not None:
                delay = task.poll_interval / 1000
            else:
                delay = DEFAULT_POLL_INTERVAL
            await trio.sleep(delay)
            task = await self.status()

    async def result(self) -> ResultT_co:
        """Wait for the task to end and return its result: exactly what the original request
        would have returned (a tool error comes back as a result with ``is_error``); the
        :class:`~mcptrio.protocol.errors.McpError` it would have raised is raised."""
        return await self._backend.result(self.task_id, self._result_type)

    async def cancel(self) -> Task:
        """Cancel the task (``tasks/cancel``); -32602 (``InvalidParams``) if it has ended."""
        self.task = await self._backend.cancel(self.task_id)
        return self.task

    async def update(self, input_responses: Mapping[str, Any]) -> None:
        """Answer what the task asked for (2026-07-28 extension only)."""
        await self._backend.update(self.task_id, input_responses)

    def __repr__(self) -> str:
        return f"<TaskHandle {self.task_id} {self.task.status}>"
