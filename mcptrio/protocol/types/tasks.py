"""Tasks (2025-11-25 only, experimental core feature).

A requestor (client or server) augments a request with ``params.task`` (:class:`TaskMetadata`);
the receiver answers at once with :class:`CreateTaskResult` and the real result is fetched
later with ``tasks/result``. Everything in this module exists only in 2025-11-25:

- data: :class:`Task`, :data:`TaskStatus`, :class:`TaskMetadata`, :class:`RelatedTaskMetadata`;
- ``tasks/get`` (:class:`GetTaskRequest` -> :class:`GetTaskResult`, a result that *is* a task),
  ``tasks/result`` (:class:`GetTaskPayloadRequest` -> :class:`GetTaskPayloadResult`),
  ``tasks/list`` (:class:`ListTasksRequest` -> :class:`ListTasksResult`),
  ``tasks/cancel`` (:class:`CancelTaskRequest` -> :class:`CancelTaskResult`);
- ``notifications/tasks/status`` (:class:`TaskStatusNotification`, params = a task);
- :class:`CreateTaskResult`, the answer to a task-augmented request.

``GetTaskResult``, ``CancelTaskResult`` and ``TaskStatusNotification`` are flat
``Result & Task`` / ``NotificationParams & Task`` objects in the schema: they share the task
fields with ``_meta`` (``_TaskState``); ``from_task`` / ``task`` convert between them and
:class:`Task`.

``tasks/result`` returns exactly what the original request would have returned, so its result
has no fixed shape: :class:`GetTaskPayloadResult` only knows ``_meta``. A caller that needs the
payload decodes the raw result with the original request's ``RESULT`` type instead.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias, TypeVar

from ..base import Notification, Request, Result, WireStruct
from .common import PaginatedRequest, PaginatedResult

__all__ = [
    "MODEL_IMMEDIATE_RESPONSE_META_KEY",
    "RELATED_TASK_META_KEY",
    "CancelTaskRequest",
    "CancelTaskResult",
    "CreateTaskResult",
    "GetTaskPayloadRequest",
    "GetTaskPayloadResult",
    "GetTaskRequest",
    "GetTaskResult",
    "ListTasksRequest",
    "ListTasksResult",
    "RelatedTaskMetadata",
    "Task",
    "TaskMetadata",
    "TaskStatus",
    "TaskStatusNotification",
]

#: ``_meta`` key that ties a message to a task: ``{"taskId": ...}``.
RELATED_TASK_META_KEY = "io.modelcontextprotocol/related-task"
#: Optional ``_meta`` key of a :class:`CreateTaskResult`: a non-binding immediate answer.
MODEL_IMMEDIATE_RESPONSE_META_KEY = "io.modelcontextprotocol/model-immediate-response"

#: The state of a task. ``completed``, ``failed`` and ``cancelled`` are terminal.
TaskStatus: TypeAlias = Literal["working", "input_required", "completed", "failed", "cancelled"]

_T = TypeVar("_T", bound="_TaskState")
_N = TypeVar("_N", bound="TaskStatusNotification")


class TaskMetadata(WireStruct, kw_only=True):
    """``params.task`` of a task-augmented request: the requested ``ttl`` in milliseconds."""

    ttl: int | None = None


class RelatedTaskMetadata(WireStruct, kw_only=True):
    """The value under ``_meta["io.modelcontextprotocol/related-task"]``."""

    task_id: str


class Task(WireStruct, kw_only=True):
    """The state of a task.

    ``createdAt`` / ``lastUpdatedAt`` are ISO 8601 timestamps; ``ttl`` (ms, ``None`` for
    unlimited) is required but nullable; ``pollInterval`` is a suggested polling delay in ms.
    """

    task_id: str
    status: TaskStatus
    created_at: str
    last_updated_at: str
    ttl: int | None
    status_message: str | None = None
    poll_interval: int | None = None


_TASK_FIELDS = Task.__struct_fields__


def _task_kwargs(obj: Any) -> dict[str, Any]:
    return {name: getattr(obj, name) for name in _TASK_FIELDS}


class _TaskState(Result, kw_only=True):
    """A task's state as a result: the flat ``Result & Task`` types of the schema.

    The fields repeat :class:`Task`'s because they cannot be inherited from it: a msgspec struct
    takes fields from one line of bases only (``Result`` brings ``_meta`` and ``resultType``), and
    ``Task`` has no ``_meta`` in the schema. :class:`TaskStatusNotification` repeats them once
    more for the same reason. A test checks that each has every field of Task.
    """

    task_id: str
    status: TaskStatus
    created_at: str
    last_updated_at: str
    ttl: int | None
    status_message: str | None = None
    poll_interval: int | None = None

    @classmethod
    def from_task(cls: type[_T], task: Task, **extra: Any) -> _T:
        """Build this object from ``task`` (plus ``meta=`` etc. in ``extra``)."""
        return cls(**_task_kwargs(task), **extra)

    @property
    def task(self) -> Task:
        """The task fields of this object as a :class:`Task`."""
        return Task(**_task_kwargs(self))


class CreateTaskResult(Result, kw_only=True):
    """The immediate answer to a task-augmented request (not in the schema's result unions)."""

    task: Task


class GetTaskResult(_TaskState, kw_only=True):
    """The result of ``tasks/get``: the task's current state."""


class GetTaskRequest(Request[GetTaskResult], kw_only=True):
    """``tasks/get``: poll a task's state."""

    METHOD = "tasks/get"

    task_id: str


class GetTaskPayloadResult(Result, kw_only=True):
    """The result of ``tasks/result``: the original request's result (see module docstring)."""


class GetTaskPayloadRequest(Request[GetTaskPayloadResult], kw_only=True):
    """``tasks/result``: wait for a task to finish and get what the original request returns."""

    METHOD = "tasks/result"

    task_id: str


class ListTasksResult(PaginatedResult, kw_only=True):
    """The result of ``tasks/list``."""

    tasks: list[Task]


class ListTasksRequest(PaginatedRequest[ListTasksResult], kw_only=True):
    """``tasks/list``: list the requestor's tasks (paginated)."""

    METHOD = "tasks/list"


class CancelTaskResult(_TaskState, kw_only=True):
    """The result of ``tasks/cancel``: the task, now ``cancelled``."""


class CancelTaskRequest(Request[CancelTaskResult], kw_only=True):
    """``tasks/cancel``: cancel a task that is not yet terminal."""

    METHOD = "tasks/cancel"

    task_id: str


class TaskStatusNotification(Notification, kw_only=True):
    """``notifications/tasks/status``: a task changed state (optional; params = the task)."""

    METHOD = "notifications/tasks/status"

    task_id: str
    status: TaskStatus
    created_at: str
    last_updated_at: str
    ttl: int | None
    status_message: str | None = None
    poll_interval: int | None = None

    @classmethod
    def from_task(cls: type[_N], task: Task, **extra: Any) -> _N:
        """Build this object from ``task`` (plus ``meta=`` etc. in ``extra``)."""
        return cls(**_task_kwargs(task), **extra)

    @property
    def task(self) -> Task:
        """The task fields of this object as a :class:`Task`."""
        return Task(**_task_kwargs(self))
