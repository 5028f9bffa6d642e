"""The task supervisor: every task is an actor in a nursery the *server's serving* owns.

::

    Server.open_lifespan()                 (every serve_* enters it; so does open_client)
    └── TaskSupervisor.running()          the task nursery: lives as long as the serving
        ├── sweeper                       drops expired records now and then
        ├── task actor                    one per task: its own CancelScope, deadline = TTL
        │   └── the work (a tool call...)
        ├── cancel watcher                one per task, for a store that does not tell of
        │                                 changes itself: a cancel written to the store by
        │                                 any worker cancels the actor's scope (an
        │                                 ObservableTaskStore calls the supervisor instead)
        └── ...

A task is not owned by the request that created it (that request is answered at once with the
task) nor by the session it came on (a session may end; the task goes on and its record stays
readable until its TTL). What ends a task:

- its work returning (``completed``; ``failed`` for a tool result with ``isError``) or raising
  (``failed``: an :class:`~mcptrio.protocol.errors.McpError` is kept as the JSON-RPC error
  ``tasks/result`` answers; any other exception is kept as -32603 and logged);
- ``tasks/cancel`` (:meth:`TaskSupervisor.cancel`): the record is ``cancelled`` in the store
  before the answer, and the actor is cancelled at its next checkpoint, through the in-process
  fast path when it runs here, through the store's change notification otherwise;
- its TTL: the actor's scope has the TTL as its deadline, and the store drops the record then;
- the serving ending (:meth:`TaskSupervisor.running` exits): every actor is cancelled and its
  record written ``cancelled`` ("The server shut down"), so no record is left ``working``.

Every record lives in a :class:`~mcptrio.stores.task_store.TaskStore`; nothing about a task is
kept only here except its cancel scope. Limits (:class:`TaskLimits`): unfinished tasks per owner
(:class:`~mcptrio.protocol.errors.InvalidRequest` past it, checked atomically by the store),
the default and the largest TTL, the suggested poll interval.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any

import msgspec
import trio

from ..protocol import codec
from ..protocol.base import Result
from ..protocol.errors import InternalError, InvalidParams, InvalidRequest, McpError
from ..protocol.types.tasks import TaskStatus
from ..runtime.nurseries import open_unwrapping_nursery
from ..stores.errors import StoreUnavailable
from ..stores.task_store import (
    InvalidTaskCursor,
    MemoryTaskStore,
    ObservableTaskStore,
    TaskLimitReached,
    TaskPage,
    TaskRecord,
    TaskStore,
    TaskStoreFull,
    now_iso,
)

__all__ = [
    "RunningTask",
    "StatusListener",
    "TaskLimits",
    "TaskSupervisor",
    "TaskWork",
    "TasksNotServing",
]

log = logging.getLogger("mcptrio.tasks")

#: The work of a task: ``async (running_task) -> result``; what it returns (or raises) is the
#: task's outcome.
TaskWork = Callable[["RunningTask"], Awaitable[Result]]
#: Called with the record after each status change of a task (for ``notifications/tasks/status``
#: or the 2026-07-28 ``notifications/tasks``); must not block for long.
StatusListener = Callable[[TaskRecord], Awaitable[None]]

#: How long a write to the store may take while a task is being wound down (shielded).
_WIND_DOWN_TIMEOUT = 5.0
#: Seconds a cancel watcher waits before it watches again a shared store that failed.
_REWATCH_DELAY = 1.0


@contextmanager
def _store_failure_logged(what: str) -> Iterator[None]:
    """Log a shared store's failure instead of letting it end the task nursery."""
    try:
        yield
    except StoreUnavailable as exc:
        log.error("%s: %s", what, exc)


@dataclass(frozen=True, kw_only=True)
class TaskLimits:
    """The bounds of a :class:`TaskSupervisor` (the spec asks receivers to document them).

    ``max_unfinished_per_owner``: tasks one requestor (principal, else session, else client
    address) may have
    working or waiting for input at once. ``default_ttl_ms``: the TTL of a task whose request
    named none. ``max_ttl_ms``: the largest TTL granted (a larger request is lowered to it;
    ``None`` grants any, unlimited included). ``min_ttl_ms``: the smallest (a task that expired
    before its requestor could poll it once would be of no use). ``poll_interval_ms``: the
    ``pollInterval`` suggested to requestors. ``page_size``: tasks per ``tasks/list`` page.
    ``sweep_interval``: seconds between purges of expired records.
    """

    max_unfinished_per_owner: int = 64
    default_ttl_ms: int = 60 * 60 * 1000
    max_ttl_ms: int | None = 24 * 60 * 60 * 1000
    min_ttl_ms: int = 1000
    poll_interval_ms: int = 1000
    page_size: int = 100
    sweep_interval: float = 30.0

    def ttl_for(self, requested: int | None) -> int | None:
        """The TTL granted for a request that asked for ``requested`` ms (``None``: none)."""
        ttl = self.default_ttl_ms if requested is None else max(int(requested), self.min_ttl_ms)
        if self.max_ttl_ms is not None:
            ttl = min(ttl, self.max_ttl_ms)
        return ttl


class TasksNotServing(InternalError, default_message="Tasks are not being served"):
    """A task was asked for while no serving runs the task nursery (the server is not being
    served by a ``serve_*`` method, nor inside ``async with server.open_lifespan():``)."""


class RunningTask:
    """What a task's work knows of its task, and how it reports its status.

    ``cancel_scope`` is the task's own scope (``tasks/cancel`` and the TTL cancel it).
    """

    __slots__ = ("_asking", "_supervisor", "cancel_scope", "method", "owner", "task_id")

    def __init__(
        self, supervisor: TaskSupervisor, record: TaskRecord, scope: trio.CancelScope
    ) -> None:
        self._supervisor = supervisor
        self.task_id = record.task_id
        self.owner = record.owner
        self.method = record.method
        self.cancel_scope = scope
        self._asking = 0

    async def set_status(
        self,
        status: TaskStatus,
        message: str | None = None,
        *,
        input_requests: bytes | None = None,
    ) -> TaskRecord | None:
        """Move the task to ``working`` or ``input_required`` (with a ``statusMessage``, and the
        JSON of what it asks for, by key: the 2026-07-28 extension shows it on ``tasks/get``);
        returns the record as it is then (``None`` once it is gone). A terminal task stays as
        it is."""
        if status not in ("working", "input_required"):
            raise ValueError("A task's work ends it by returning or raising, not by set_status")
        return await self._supervisor._transition(
            self.task_id, status, status_message=message, input_requests=input_requests
        )

    @asynccontextmanager
    async def waiting_for_input(self, message: str | None = None) -> AsyncIterator[None]:
        """``input_required`` for the ``async with`` block (asks may overlap: the task goes back
        to ``working`` when the last one is answered)."""
        self._asking += 1
        if self._asking == 1:
            await self.set_status("input_required", message)
        try:
            yield
        finally:
            self._asking -= 1
            if self._asking == 0:
                with trio.CancelScope(shield=True), trio.move_on_after(_WIND_DOWN_TIMEOUT):
                    await self.set_status("working")


class TaskSupervisor:
    """Runs tasks as actors in the serving's task nursery, their records in ``store``.

    Enter :meth:`running` for as long as tasks may run (a :class:`~mcptrio.Server` does this
    in ``open_lifespan``, so every ``serve_*`` method does). The request handlers use
    :meth:`create`, :meth:`get`, :meth:`wait_terminal`, :meth:`list` and :meth:`cancel`; each
    takes the requestor's ``owner`` (see :func:`mcptrio.tasks.owner_of`) and answers as if a
    task of another owner did not exist.
    """

    def __init__(self, store: TaskStore | None = None, limits: TaskLimits | None = None) -> None:
        #: Where the records live (in memory unless told otherwise).
        self.store: TaskStore = MemoryTaskStore() if store is None else store
        self.limits = TaskLimits() if limits is None else limits
        self._nursery: trio.Nursery | None = None
        self._closing = False
        self._live: dict[str, RunningTask] = {}
        self._listeners: dict[str, StatusListener] = {}
        # Whether the store tells us of changes itself (no watcher task per task then).
        self._observed = False

    # ------------------------------------------------------------------ lifetime

    @property
    def serving(self) -> bool:
        """Whether the task nursery is open (tasks can be created)."""
        return self._nursery is not None and not self._closing

    @property
    def live_count(self) -> int:
        """How many task actors run in this process now."""
        return len(self._live)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[TaskSupervisor]:
        """Open the task nursery for the ``async with`` block, unless it is open already (then
        share it: whoever opened it closes it). On the way out every running task is cancelled
        and its record written ``cancelled``; the block's own exception propagates as it is."""
        if self._nursery is not None:
            yield self
            return
        stop_observing: Callable[[], None] | None = None
        if isinstance(self.store, ObservableTaskStore):
            # The in-process fast path: one listener instead of a watcher task per task.
            stop_observing = self.store.subscribe(self._record_changed)
        self._observed = stop_observing is not None
        try:
            async with open_unwrapping_nursery() as nursery:
                self._nursery = nursery
                self._closing = False
                nursery.start_soon(self._sweep)
                try:
                    yield self
                finally:
                    # The actors never raise: what leaves the nursery is the block's own error.
                    self._closing = True
                    nursery.cancel_scope.cancel()
        finally:
            self._nursery = None
            self._closing = False
            if stop_observing is not None:
                stop_observing()

    def _record_changed(self, task_id: str, record: TaskRecord | None) -> None:
        """A record changed in an observable store: an ended or vanished record whose actor
        runs here is cancelled (a cancel written elsewhere, an expiry)."""
        if record is None or record.terminal:
            live = self._live.get(task_id)
            if live is not None:
                live.cancel_scope.cancel()

    async def _sweep(self) -> None:
        while True:
            await trio.sleep(self.limits.sweep_interval)
            try:
                await self.store.purge_expired()
            except Exception:
                log.exception("purging expired tasks failed")

    # ------------------------------------------------------------------ creating

    async def create(
        self,
        owner: str,
        method: str,
        work: TaskWork,
        *,
        ttl_ms: int | None = None,
        on_status: StatusListener | None = None,
        error_result_fails: bool = True,
    ) -> TaskRecord:
        """Create a task for ``owner`` running ``work`` and return its record (``working``),
        once the record is in the store and the actor has started.

        ``ttl_ms`` is what the request asked for (bounded by :class:`TaskLimits`).
        ``error_result_fails``: a result with ``isError: true`` ends the task ``failed`` (2025-11-25
        says so of tool calls); ``False`` ends it ``completed`` with that result.
        :class:`~mcptrio.protocol.errors.InvalidRequest` past the owner's limit,
        :class:`TasksNotServing` when the task nursery is not open.
        """
        nursery = self._nursery
        if nursery is None or self._closing:
            raise TasksNotServing(
                "Tasks need the server to be served: run it with a serve_* method, or inside"
                " `async with server.open_lifespan():`"
            )
        now = now_iso()
        record = TaskRecord(
            task_id=secrets.token_urlsafe(24),
            owner=owner,
            method=method,
            status="working",
            created_at=now,
            last_updated_at=now,
            ttl_ms=self.limits.ttl_for(ttl_ms),
            poll_interval_ms=self.limits.poll_interval_ms,
        )
        try:
            record = await self.store.create(
                record, max_unfinished_per_owner=self.limits.max_unfinished_per_owner
            )
        except TaskLimitReached as exc:
            raise InvalidRequest(
                f"Too many unfinished tasks: {exc}; wait for one to finish or cancel one",
                data={"maxUnfinishedTasks": self.limits.max_unfinished_per_owner},
            ) from None
        except TaskStoreFull as exc:
            # The server's capacity, not a fault of its own: the client may try again later.
            raise InvalidRequest(
                f"The task store is full ({exc}): try again when some tasks have finished",
                data={"taskStoreFull": True},
            ) from None
        # Registered before the actor runs, so that a cancel arriving first finds its scope
        # (a scope cancelled before it is entered cancels at once). start_soon is enough (no
        # start and its hand-back): a spawned task always runs up to its first checkpoint, so
        # the actor's finally writes the record even if the nursery is cancelled before it runs.
        scope = trio.CancelScope()
        if record.ttl_ms is not None:
            scope.deadline = trio.current_time() + record.ttl_ms / 1000
        running = self._live[record.task_id] = RunningTask(self, record, scope)
        if on_status is not None:
            self._listeners[record.task_id] = on_status
        nursery.start_soon(self._actor, record, work, running, error_result_fails)
        return record

    async def _actor(
        self, record: TaskRecord, work: TaskWork, running: RunningTask, error_result_fails: bool
    ) -> None:
        scope = running.cancel_scope
        task_id = record.task_id
        watch = trio.CancelScope()
        if not self._observed:
            assert self._nursery is not None
            self._nursery.start_soon(self._watch_cancel, record, scope, watch)
        status: TaskStatus | None = None
        result = error = None
        message: str | None = None
        try:
            with scope:
                try:
                    value = await work(running)
                except McpError as exc:
                    status, message = "failed", exc.message
                    error = _encode_error(exc)
                except Exception as exc:
                    log.exception("task %s (%s) failed", task_id, record.method)
                    status, message = "failed", f"{type(exc).__name__}: {exc}"
                    error = _encode_error(InternalError(f"The task failed: {message}"))
                else:
                    failed = error_result_fails and getattr(value, "is_error", False) is True
                    status = "failed" if failed else "completed"
                    result = codec.encode(value)
        finally:
            watch.cancel()
            del self._live[task_id]
            with (
                trio.CancelScope(shield=True),
                trio.move_on_after(_WIND_DOWN_TIMEOUT),
                _store_failure_logged(f"the outcome of task {task_id} was not written"),
            ):
                if status is None:
                    # Cancelled: by its own scope (tasks/cancel, its TTL) or from outside (the
                    # serving ending), which leaves the scope uncaught.
                    if not scope.cancelled_caught:
                        message = "The server shut down"
                    elif trio.current_time() >= scope.deadline:
                        message = "The task's TTL expired"
                    else:
                        message = "The task was cancelled"
                    await self._transition(task_id, "cancelled", status_message=message)
                else:
                    await self._finish(task_id, status, message, result, error)
            self._listeners.pop(task_id, None)

    async def _finish(
        self,
        task_id: str,
        status: TaskStatus,
        message: str | None,
        result: bytes | None,
        error: bytes | None,
    ) -> None:
        try:
            await self._transition(
                task_id, status, status_message=message, result=result, error=error
            )
        except TaskStoreFull as exc:
            problem = InternalError(f"The task's outcome cannot be kept: {exc}")
            await self._transition(
                task_id, "failed", status_message=problem.message, error=_encode_error(problem)
            )

    async def _watch_cancel(
        self, record: TaskRecord, scope: trio.CancelScope, watch: trio.CancelScope
    ) -> None:
        """Cancel the actor when its record ends or goes without the actor ending it (a cancel
        written by another worker, an expiry)."""
        with watch:
            version = record.version
            while True:
                try:
                    current = await self.store.wait_for_change(record.task_id, version)
                except StoreUnavailable as exc:
                    # A shared store that is away: the task goes on, and is watched again
                    # once the store is back (its TTL still ends it).
                    log.warning("task %s not watched for a while: %s", record.task_id, exc)
                    await trio.sleep(_REWATCH_DELAY)
                    continue
                if current is None or current.terminal:
                    scope.cancel()
                    return
                version = current.version

    # ------------------------------------------------------------------ status

    async def _transition(
        self, task_id: str, status: TaskStatus, **fields: Any
    ) -> TaskRecord | None:
        """Write a status change to the store and tell the task's listener when it changed."""
        after = await self.store.transition(task_id, status, **fields)
        # A terminal record stays as it was: then the status asked for is not the one it has.
        if after is not None and after.status == status:
            await self._tell(after)
        return after

    async def _tell(self, record: TaskRecord) -> None:
        listener = self._listeners.get(record.task_id)
        if listener is None:
            return
        try:
            await listener(record)
        except McpError as exc:
            # The session that created the task may have ended: the record still tells.
            log.debug("status of task %s not delivered: %s", record.task_id, exc)
        except Exception:
            log.exception("status listener of task %s failed", record.task_id)

    # ------------------------------------------------------------------ requests

    async def get(self, owner: str, task_id: str) -> TaskRecord:
        """The task's record; :class:`InvalidParams` (-32602) for an unknown or expired task,
        or one of another owner."""
        record = await self.store.get(task_id)
        if record is None or record.owner != owner:
            raise InvalidParams(f"Failed to retrieve task: Task not found: {task_id}")
        return record

    async def wait_terminal(self, owner: str, task_id: str) -> TaskRecord:
        """Wait until the task is terminal and return its record (``tasks/result``).
        :class:`InvalidParams` if it does not exist or expires meanwhile."""
        record = await self.get(owner, task_id)
        while not record.terminal:
            current = await self.store.wait_for_change(task_id, record.version)
            if current is None:
                raise InvalidParams(f"Failed to retrieve task: Task has expired: {task_id}")
            record = current
        return record

    async def list(self, owner: str, cursor: str | None) -> TaskPage:
        """One page of ``owner``'s tasks; :class:`InvalidParams` for a bad cursor."""
        try:
            return await self.store.list(owner, cursor, self.limits.page_size)
        except InvalidTaskCursor as exc:
            raise InvalidParams(str(exc)) from None

    async def cancel(
        self, owner: str, task_id: str, message: str = "The task was cancelled by request."
    ) -> TaskRecord:
        """Cancel the task (``tasks/cancel``): its record is ``cancelled`` when this returns,
        and its actor is cancelled at its next checkpoint. :class:`InvalidParams` if it is
        unknown or already terminal."""
        record = await self.get(owner, task_id)
        if record.terminal:
            raise InvalidParams(f"Cannot cancel task: already in terminal status '{record.status}'")
        after = await self._transition(task_id, "cancelled", status_message=message)
        if after is None:
            raise InvalidParams(f"Failed to retrieve task: Task has expired: {task_id}")
        if after.status != "cancelled":
            raise InvalidParams(f"Cannot cancel task: already in terminal status '{after.status}'")
        live = self._live.get(task_id)
        if live is not None:
            live.cancel_scope.cancel()
        return after


def outcome(record: TaskRecord, result_type: type[Result]) -> Result:
    """The outcome of a terminal task as its original request would have answered: the result
    decoded as ``result_type``, or the JSON-RPC error raised as its :class:`McpError`."""
    if record.result is not None:
        return codec.decode_body(msgspec.Raw(record.result), result_type)
    if record.error is not None:
        raise codec.decode_error(msgspec.Raw(record.error))
    raise InvalidRequest(
        f"The task was {record.status} before it produced a result"
        + (f": {record.status_message}" if record.status_message else "")
    )


def _encode_error(error: McpError) -> bytes:
    return codec.encode(codec.ErrorObject(error.code, error.message, error.data))
