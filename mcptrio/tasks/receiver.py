"""The receiver's side of 2025-11-25 tasks: creating a task for a request, and ``tasks/*``.

:class:`TaskReceiver` is what a server (for ``tools/call``) and a client (for
``sampling/createMessage`` and ``elicitation/create``) answer with: :meth:`TaskReceiver.start`
turns a task-augmented request into a task and its :class:`CreateTaskResult`, and
:meth:`~TaskReceiver.get`, :meth:`~TaskReceiver.result`, :meth:`~TaskReceiver.list` and
:meth:`~TaskReceiver.cancel` answer the four ``tasks/*`` requests, each for the requestor's
``owner`` (:func:`owner_of`): a task of another owner is answered as an unknown one.

Status changes go to the requestor as ``notifications/tasks/status`` on the session that
created the task, while it runs (they are optional, and requestors must poll anyway).
``tasks/result`` answers with exactly the original request's result or error, its ``_meta``
carrying ``io.modelcontextprotocol/related-task``.
"""

from __future__ import annotations

import secrets
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

from ..protocol.base import RequestId, Result
from ..protocol.types import (
    CallToolResult,
    CancelTaskRequest,
    CancelTaskResult,
    CreateMessageResult,
    CreateTaskResult,
    ElicitResult,
    GetTaskPayloadRequest,
    GetTaskRequest,
    GetTaskResult,
    ListTasksRequest,
    ListTasksResult,
    TaskMetadata,
    TaskStatusNotification,
)
from ..protocol.types.tasks import RELATED_TASK_META_KEY
from ..runtime.context import RequestContext
from ..runtime.session import Session
from ..stores.task_store import TaskRecord
from .context import TaskRequestContext
from .supervisor import RunningTask, TaskSupervisor, outcome

__all__ = ["RESULT_TYPES", "TaskReceiver", "owner_of", "related_task_meta"]

#: What ``tasks/result`` decodes a task's result as, by the method the task runs.
RESULT_TYPES: dict[str, type[Result]] = {
    "tools/call": CallToolResult,
    "sampling/createMessage": CreateMessageResult,
    "elicitation/create": ElicitResult,
}

_session_keys: weakref.WeakKeyDictionary[Session, str] = weakref.WeakKeyDictionary()


def owner_of(principal: Any, session: Session) -> str:
    """The context a requestor's tasks are bound to: its principal when the server has an
    authenticator (``"principal:<subject>"``, across its sessions), else its session
    (``"session:<random>"``: the session is the only context there is)."""
    subject = getattr(principal, "subject", None)
    if isinstance(subject, str):
        return f"principal:{subject}"
    key = _session_keys.get(session)
    if key is None:
        key = _session_keys[session] = f"session:{secrets.token_urlsafe(16)}"
    return key


def related_task_meta(task_id: str, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """``meta`` (copied) with ``io.modelcontextprotocol/related-task`` naming ``task_id``."""
    out = dict(meta) if meta else {}
    out[RELATED_TASK_META_KEY] = {"taskId": task_id}
    return out


#: The work of a task-augmented request: given the task's request context, the result.
RequestWork = Callable[[TaskRequestContext], Awaitable[Result]]


class TaskReceiver:
    """Creates tasks for task-augmented requests and answers ``tasks/*`` (module docstring)."""

    def __init__(self, supervisor: TaskSupervisor) -> None:
        self.supervisor = supervisor
        # The tasks/result request waiting for each task, by task id: what the task asks its
        # requestor meanwhile is related to it (so that HTTP sends it on that stream).
        self._result_waiters: dict[str, tuple[Session, RequestId]] = {}

    def result_stream(self, task_id: str, session: Session) -> RequestId | None:
        """The id of a ``tasks/result`` request waiting for ``task_id`` on ``session``, if any
        (one on another session of the same principal relates to nothing on this one)."""
        waiter = self._result_waiters.get(task_id)
        return waiter[1] if waiter is not None and waiter[0] is session else None

    async def start(
        self, rctx: RequestContext, task: TaskMetadata, owner: str, work: RequestWork
    ) -> CreateTaskResult:
        """Run ``work`` as a task for the request of ``rctx``; its :class:`CreateTaskResult`."""
        session = rctx.session

        async def run(running: RunningTask) -> Result:
            return await work(TaskRequestContext(rctx, running, self))

        async def on_status(record: TaskRecord) -> None:
            if not session.closed.is_set():
                await session.notify(TaskStatusNotification.from_task(record.to_task()))

        record = await self.supervisor.create(
            owner, rctx.request.METHOD, run, ttl_ms=task.ttl, on_status=on_status
        )
        return CreateTaskResult(task=record.to_task())

    async def get(self, owner: str, request: GetTaskRequest) -> GetTaskResult:
        record = await self.supervisor.get(owner, request.task_id)
        return GetTaskResult.from_task(record.to_task())

    async def result(
        self, rctx: RequestContext, owner: str, request: GetTaskPayloadRequest
    ) -> Result:
        """Wait for the task to end, then answer what its request would have: the result with
        the related-task ``_meta``, or the error (its ``data`` unchanged)."""
        task_id = request.task_id
        record = await self.supervisor.get(owner, task_id)
        if not record.terminal:
            waiter = (rctx.session, rctx.request_id)
            self._result_waiters[task_id] = waiter
            try:
                record = await self.supervisor.wait_terminal(owner, task_id)
            finally:
                if self._result_waiters.get(task_id) == waiter:
                    del self._result_waiters[task_id]
        result_type = RESULT_TYPES.get(record.method, Result)
        result = outcome(record, result_type)
        meta = result.meta if isinstance(result.meta, dict) else None
        result.meta = related_task_meta(task_id, meta)
        return result

    async def list(self, owner: str, request: ListTasksRequest) -> ListTasksResult:
        cursor = request.cursor if isinstance(request.cursor, str) else None
        page = await self.supervisor.list(owner, cursor)
        return ListTasksResult(
            tasks=[record.to_task() for record in page.records], next_cursor=page.next_cursor
        )

    async def cancel(self, owner: str, request: CancelTaskRequest) -> CancelTaskResult:
        record = await self.supervisor.cancel(owner, request.task_id)
        return CancelTaskResult.from_task(record.to_task())
