"""The tasks extension of the stateless era (``io.modelcontextprotocol/tasks``, SEP-2663).

In 2026-07-28 tasks left the core protocol (where 2025-11-25 had them, :mod:`.types.tasks`) for
an extension with its own wire shapes. The rules, all in this module:

- **negotiation is per request**: a client declares the extension in the
  ``clientCapabilities.extensions`` of each request's ``_meta``; the server declares it in its
  capabilities (``server/discover``). :func:`declares` reads a declaration.
- the server alone decides whether a ``tools/call`` (the only supported method) becomes a task,
  and answers :class:`CreateTaskResult` (``resultType: "task"``, a flat ``Result & Task``) only
  to a request that declared the extension. A request it can serve only as a task, from a
  client that did not declare it, is answered :func:`required_error` (-32021 naming the
  extension); so are ``tasks/*`` and a ``subscriptions/listen`` asking for task notifications.
- ``tasks/get`` answers the status-specific :class:`DetailedTask` (``inputRequests`` while
  ``input_required``, ``result`` once ``completed``, ``error`` once ``failed``);
  ``tasks/update`` brings ``inputResponses`` and ``tasks/cancel`` asks for cancellation: both
  are answered an empty acknowledgement (``resultType: "complete"``), eventually consistent.
- ``notifications/tasks`` (:class:`TaskStatusNotification`) carries the whole detailed task, on
  a ``subscriptions/listen`` stream that asked for the task's id.
- on Streamable HTTP ``Mcp-Name`` carries ``params.taskId`` of the three ``tasks/*`` requests
  (:mod:`.http_headers`).
- gone from the 2025-11-25 design: ``tasks/result``, ``tasks/list``, the ``task`` request
  param, ``execution.taskSupport`` and the related-task ``_meta``; ``ttl`` / ``pollInterval``
  are ``ttlMs`` / ``pollIntervalMs``.

The methods share their names with the 2025-11-25 ones; :func:`~.methods.spec_at` picks the
extension's in a revision that has extensions.
"""

from __future__ import annotations

from typing import Any, Final, Literal, TypeAlias

from .base import Notification, Request, Result, WireStruct
from .declared import extension_declared
from .errors import MissingRequiredClientCapability
from .types.input_required import InputRequest

__all__ = [
    "EXTENSION_ID",
    "RESULT_TASK",
    "TERMINAL_STATUSES",
    "CancelTaskRequest",
    "CancelTaskResult",
    "CreateTaskResult",
    "DetailedTask",
    "GetTaskRequest",
    "GetTaskResult",
    "Task",
    "TaskStatus",
    "TaskStatusNotification",
    "UpdateTaskRequest",
    "UpdateTaskResult",
    "declares",
    "required_capabilities",
    "required_error",
]

#: The extension's identifier, under ``capabilities.extensions``.
EXTENSION_ID: Final = "io.modelcontextprotocol/tasks"
#: ``resultType`` of a :class:`CreateTaskResult` (reserved for this extension).
RESULT_TASK: Final = "task"

TaskStatus: TypeAlias = Literal["working", "input_required", "completed", "failed", "cancelled"]
#: The statuses a task never leaves.
TERMINAL_STATUSES: Final[frozenset[str]] = frozenset({"completed", "failed", "cancelled"})


class Task(WireStruct, kw_only=True):
    """A task's state: ISO 8601 ``createdAt`` / ``lastUpdatedAt``; ``ttlMs`` is required and
    nullable (``None``: unlimited); ``pollIntervalMs`` a suggested polling delay."""

    task_id: str
    status: TaskStatus
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    status_message: str | None = None
    poll_interval_ms: int | None = None


class DetailedTask(Task, kw_only=True):
    """A task with what its status carries: ``inputRequests`` (``input_required``), ``result``
    (``completed``: what the request would have returned) or ``error`` (``failed``: a
    JSON-RPC error object). Used by ``tasks/get`` and ``notifications/tasks``."""

    input_requests: dict[str, InputRequest] | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


_TASK_FIELDS: Final = Task.__struct_fields__
_DETAILED_FIELDS: Final = DetailedTask.__struct_fields__


def _fields(source: Any, names: tuple[str, ...]) -> dict[str, Any]:
    """The ``names`` fields of ``source``, to build a flat task type from a task or back."""
    return {name: getattr(source, name) for name in names}


class _TaskResult(Result, kw_only=True):
    """A result that is a task, flat (``Result & Task``), as :class:`CreateTaskResult` and
    :class:`GetTaskResult` are in the schema.

    The fields repeat :class:`Task`'s because a msgspec struct takes fields from one line of
    bases only (``Result`` brings ``_meta`` and ``resultType``); :class:`TaskStatusNotification`
    repeats them once more for the same reason. A test checks that each has Task's fields.
    """

    task_id: str
    status: TaskStatus
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    status_message: str | None = None
    poll_interval_ms: int | None = None


class CreateTaskResult(_TaskResult, kw_only=True):
    """The answer to a ``tools/call`` the server runs as a task (``resultType: "task"``)."""

    @classmethod
    def of(cls, task: Task) -> CreateTaskResult:
        """The result announcing ``task`` (its plain fields only: no result, error or asks)."""
        return cls(**_fields(task, _TASK_FIELDS))

    @property
    def task(self) -> Task:
        return Task(**_fields(self, _TASK_FIELDS))


class GetTaskResult(_TaskResult, kw_only=True):
    """The answer to ``tasks/get``: the :class:`DetailedTask` (``resultType: "complete"``)."""

    input_requests: dict[str, InputRequest] | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None

    @classmethod
    def of(cls, task: DetailedTask) -> GetTaskResult:
        return cls(**_fields(task, _DETAILED_FIELDS))

    @property
    def task(self) -> DetailedTask:
        return DetailedTask(**_fields(self, _DETAILED_FIELDS))


class GetTaskRequest(Request[GetTaskResult], kw_only=True):
    """``tasks/get``: the task's current state (a pure, idempotent read)."""

    METHOD = "tasks/get"

    task_id: str


class UpdateTaskResult(Result, kw_only=True):
    """The empty acknowledgement of ``tasks/update``."""


class UpdateTaskRequest(Request[UpdateTaskResult], kw_only=True):
    """``tasks/update``: answers to some of the task's outstanding ``inputRequests``, by key
    (unknown or already answered keys are ignored)."""

    METHOD = "tasks/update"

    task_id: str
    input_responses: dict[str, Any]


class CancelTaskResult(Result, kw_only=True):
    """The empty acknowledgement of ``tasks/cancel``."""


class CancelTaskRequest(Request[CancelTaskResult], kw_only=True):
    """``tasks/cancel``: ask for the task to be cancelled (cooperative)."""

    METHOD = "tasks/cancel"

    task_id: str


class TaskStatusNotification(Notification, kw_only=True):
    """``notifications/tasks``: a task's whole :class:`DetailedTask`, on a listen stream."""

    METHOD = "notifications/tasks"

    task_id: str
    status: TaskStatus
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    status_message: str | None = None
    poll_interval_ms: int | None = None
    input_requests: dict[str, InputRequest] | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None

    @classmethod
    def of(cls, task: DetailedTask, **extra: Any) -> TaskStatusNotification:
        return cls(**_fields(task, _DETAILED_FIELDS), **extra)

    @property
    def task(self) -> DetailedTask:
        return DetailedTask(**_fields(self, _DETAILED_FIELDS))


def declares(capabilities: Any) -> bool:
    """Whether ``capabilities`` (a client's or a server's, typed or as a dict) declare the
    extension."""
    return extension_declared(capabilities, EXTENSION_ID)


def required_capabilities() -> dict[str, Any]:
    """The ``requiredCapabilities`` that name the extension."""
    return {"extensions": {EXTENSION_ID: {}}}


def required_error(message: str) -> MissingRequiredClientCapability:
    """-32021 for a request that needs the extension its ``_meta`` did not declare."""
    return MissingRequiredClientCapability(
        message, {"requiredCapabilities": required_capabilities()}
    )
