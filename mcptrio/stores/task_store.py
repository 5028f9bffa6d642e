"""The task store: where the state of every task lives, so that any worker can answer for it.

A task (2025-11-25 core, and the 2026-07-28 extension) is a record that outlives the request
that made it: its status, its timestamps, its TTL and, once it ends, its outcome. The records
are plain values (:class:`TaskRecord`, a frozen msgspec struct whose outcome is JSON bytes) and
the store is an interface (:class:`TaskStore`), so that a store another process can read (Redis)
slots in behind the same methods: nothing in a record is a live object of this process.

What the store decides, atomically, so that two workers cannot disagree:

- **Creation under limits.** :meth:`TaskStore.create` refuses a task past the owner's limit of
  unfinished tasks (:class:`TaskLimitReached`) or past the store's own bounds
  (:class:`TaskStoreFull`).
- **Transitions.** :meth:`TaskStore.transition` moves a task along the lifecycle the spec
  allows (``working`` <-> ``input_required`` -> ``completed`` / ``failed`` / ``cancelled``) and
  never out of a terminal status: it returns the record as it is afterwards, and a caller that
  asked for ``cancelled`` and finds ``completed`` knows it came too late. Cancellation is such a
  transition: a cancel written by one worker is seen by the worker running the task through
  :meth:`TaskStore.wait_for_change`.
- **Expiry.** A record is gone once its TTL has passed since its creation (the spec lets a
  receiver delete a task then, whatever its status). The store measures TTLs on its own clock;
  ``ttl_ms=None`` (unlimited) is allowed by the store, and bounded by whoever creates tasks.

:class:`MemoryTaskStore` keeps the records in this process, bounded in number (``max_tasks``)
and in bytes (``max_bytes``, the outcomes and input requests it holds); past either, finished
records closest to their expiry are evicted first, and only when none is left is a creation
refused. Its clock is Trio's (``trio.current_time``), so tests drive expiry with
``autojump_clock``; its wake-ups are Trio events, the in-process fast path a shared store
replaces with its own notifications.
"""

from __future__ import annotations

import base64
import datetime
import heapq
import itertools
from collections.abc import Callable
from typing import Protocol, runtime_checkable

import msgspec
import trio

from ..protocol.types.tasks import Task, TaskStatus

__all__ = [
    "TERMINAL",
    "ChangeListener",
    "InvalidTaskCursor",
    "MemoryTaskStore",
    "ObservableTaskStore",
    "TaskLimitReached",
    "TaskPage",
    "TaskRecord",
    "TaskStore",
    "TaskStoreFull",
    "now_iso",
]

#: The statuses a task never leaves.
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})


class TaskRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One task as the store keeps it: plain values only, so any process can read it.

    ``owner`` is the context the task is bound to (``"principal:<subject>"`` or
    ``"session:<id>"``, see :mod:`mcptrio.tasks`): only requests of the same owner see it.
    ``method`` is the request the task runs (``"tools/call"``...), which tells how to read
    ``result``. Timestamps are ISO 8601 (UTC) strings, as the wire has them. ``version`` counts
    the writes to the record (the store sets it). Once the task is terminal, exactly one of
    ``result`` (the JSON of the original request's result) and ``error`` (the JSON of the
    JSON-RPC error object) is set, except for a task cancelled before it produced either.
    ``input_requests`` holds what a task waiting for input asks (JSON, by key), and
    ``input_responses`` the answers received so far (JSON, by key), for a requestor that
    answers through the store from any worker (the 2026-07-28 extension's ``tasks/update``).
    A :meth:`TaskStore.transition` writes every one of these fields: one it is not given is
    cleared.
    """

    task_id: str
    owner: str
    method: str
    status: TaskStatus
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    poll_interval_ms: int | None = None
    status_message: str | None = None
    version: int = 0
    result: bytes | None = None
    error: bytes | None = None
    input_requests: bytes | None = None
    input_responses: bytes | None = None

    @property
    def terminal(self) -> bool:
        """Whether the task has ended (``completed``, ``failed`` or ``cancelled``)."""
        return self.status in TERMINAL

    def to_task(self) -> Task:
        """The record as the 2025-11-25 wire's :class:`~mcptrio.protocol.types.Task`."""
        return Task(
            task_id=self.task_id,
            status=self.status,
            created_at=self.created_at,
            last_updated_at=self.last_updated_at,
            ttl=self.ttl_ms,
            status_message=self.status_message,
            poll_interval=self.poll_interval_ms,
        )

    def size(self) -> int:
        """The bytes this record holds beyond its fixed fields (what ``max_bytes`` bounds)."""
        return (
            len(self.result or b"")
            + len(self.error or b"")
            + len(self.input_requests or b"")
            + len(self.input_responses or b"")
        )


class TaskPage(msgspec.Struct, frozen=True):
    """One page of an owner's tasks, oldest first; ``next_cursor`` is ``None`` on the last."""

    records: list[TaskRecord]
    next_cursor: str | None


class TaskLimitReached(Exception):
    """The owner already has as many unfinished tasks as it may."""


class TaskStoreFull(Exception):
    """The store is at its bound (records or bytes) and nothing finished is left to evict."""


class InvalidTaskCursor(ValueError):
    """A ``tasks/list`` cursor this store did not make (or one for another owner)."""


class TaskStore(Protocol):
    """Keeps task records for every worker that serves them (see the module docstring)."""

    async def create(
        self, record: TaskRecord, *, max_unfinished_per_owner: int | None = None
    ) -> TaskRecord:
        """Add ``record`` (new id, status ``working``), expiring ``ttl_ms`` from now; returns
        it as stored. :class:`TaskLimitReached` if ``record.owner`` already has
        ``max_unfinished_per_owner`` unfinished tasks; :class:`TaskStoreFull` past the store's
        bounds."""
        ...

    async def get(self, task_id: str) -> TaskRecord | None:
        """The record, or ``None`` when there is none (never was, expired, deleted)."""
        ...

    async def transition(
        self,
        task_id: str,
        status: TaskStatus,
        *,
        status_message: str | None = None,
        result: bytes | None = None,
        error: bytes | None = None,
        input_requests: bytes | None = None,
        input_responses: bytes | None = None,
    ) -> TaskRecord | None:
        """Move the task to ``status`` (with the message, and the outcome when terminal),
        unless it is terminal already; returns the record as it is afterwards (``None`` if
        there is none). ``TaskStoreFull`` if the outcome does not fit even after evictions."""
        ...

    async def wait_for_change(self, task_id: str, version: int) -> TaskRecord | None:
        """Wait until the record's version is no longer ``version``; returns it (``None`` once
        it is gone). Returns at once if it has changed already. Cancel to stop waiting."""
        ...

    async def list(self, owner: str, cursor: str | None, limit: int) -> TaskPage:
        """Up to ``limit`` of ``owner``'s tasks, oldest first, after ``cursor`` (from an earlier
        page); :class:`InvalidTaskCursor` for a cursor it did not make."""
        ...

    async def delete(self, task_id: str) -> None:
        """Forget the task (nothing happens if there is none)."""
        ...

    async def purge_expired(self) -> int:
        """Drop every record past its TTL now; returns how many."""
        ...


#: ``listener(task_id, record)``: a record changed (``record`` is ``None`` once it is gone).
ChangeListener = Callable[[str, "TaskRecord | None"], None]


@runtime_checkable
class ObservableTaskStore(TaskStore, Protocol):
    """A :class:`TaskStore` that tells this process of every change as it happens (one whose
    every writer is in this process, such as :class:`MemoryTaskStore`, or a shared one with a
    subscription of its own). The supervisor then needs no watcher task per task."""

    def subscribe(self, listener: ChangeListener) -> Callable[[], None]:
        """Call ``listener`` after every change; returns the function that unsubscribes."""
        ...


class _Slot:
    __slots__ = ("deadline", "record", "seq")

    def __init__(self, record: TaskRecord, seq: int, deadline: float | None) -> None:
        self.record = record
        self.seq = seq
        self.deadline = deadline


class MemoryTaskStore:
    """A :class:`TaskStore` in this process's memory, bounded in records and bytes.

    ``max_tasks`` bounds the records held, ``max_bytes`` the outcome and input-request bytes
    they hold. Past either, finished records are evicted, those closest to expiry first; a
    creation that still does not fit raises :class:`TaskStoreFull`, and so does an outcome
    larger than ``max_bytes`` by itself. Expired records are dropped by every call (and by
    :meth:`purge_expired`, which the task supervisor calls now and then).
    """

    def __init__(
        self,
        *,
        max_tasks: int = 10_000,
        max_bytes: int = 64 << 20,
        clock: Callable[[], float] = trio.current_time,
    ) -> None:
        if max_tasks < 1 or max_bytes < 1:
            raise ValueError("max_tasks and max_bytes must be at least 1")
        self.max_tasks = max_tasks
        self.max_bytes = max_bytes
        self._clock = clock
        self._slots: dict[str, _Slot] = {}
        # Per owner, its task ids in creation order (a dict keeps the order and deletes in O(1)).
        self._owners: dict[str, dict[str, None]] = {}
        self._unfinished: dict[str, int] = {}
        self._expiry: list[tuple[float, int, str]] = []
        # The finished records, nearest expiry first (unlimited last): what eviction takes. An
        # entry whose record is gone is skipped when it comes up.
        self._finished: list[tuple[float, int, str]] = []
        self._seq = itertools.count(1)
        self._bytes = 0
        self._changed: dict[str, trio.Event] = {}
        self._subscribers: list[ChangeListener] = []

    # ------------------------------------------------------------------ reading

    def __len__(self) -> int:
        """How many records are held (expired ones dropped first)."""
        self._expire()
        return len(self._slots)

    @property
    def bytes_held(self) -> int:
        """The outcome and input-request bytes held."""
        return self._bytes

    async def get(self, task_id: str) -> TaskRecord | None:
        self._expire()
        slot = self._slots.get(task_id)
        return None if slot is None else slot.record

    async def list(self, owner: str, cursor: str | None, limit: int) -> TaskPage:
        self._expire()
        after = 0 if cursor is None else _read_cursor(cursor, owner)
        ids = self._owners.get(owner, {})
        records: list[TaskRecord] = []
        last_seq = 0
        more = False
        for task_id in ids:
            slot = self._slots[task_id]
            if slot.seq <= after:
                continue
            if len(records) == limit:
                more = True
                break
            records.append(slot.record)
            last_seq = slot.seq
        return TaskPage(records, _make_cursor(owner, last_seq) if more else None)

    async def wait_for_change(self, task_id: str, version: int) -> TaskRecord | None:
        while True:
            self._expire()
            slot = self._slots.get(task_id)
            if slot is None or slot.record.version != version:
                return None if slot is None else slot.record
            event = self._changed.get(task_id)
            if event is None:
                event = self._changed[task_id] = trio.Event()
            await event.wait()

    # ------------------------------------------------------------------ writing

    async def create(
        self, record: TaskRecord, *, max_unfinished_per_owner: int | None = None
    ) -> TaskRecord:
        self._expire()
        if record.task_id in self._slots:
            raise ValueError(f"A task with id {record.task_id!r} exists already")
        owner = record.owner
        if (
            max_unfinished_per_owner is not None
            and self._unfinished.get(owner, 0) >= max_unfinished_per_owner
        ):
            raise TaskLimitReached(
                f"At most {max_unfinished_per_owner} unfinished tasks per requestor"
            )
        self._make_room(1, record.size())
        record = msgspec.structs.replace(record, version=1)
        seq = next(self._seq)
        deadline = None if record.ttl_ms is None else self._clock() + record.ttl_ms / 1000
        self._slots[record.task_id] = _Slot(record, seq, deadline)
        self._owners.setdefault(owner, {})[record.task_id] = None
        if record.terminal:
            self._push_finished(self._slots[record.task_id])
        else:
            self._unfinished[owner] = self._unfinished.get(owner, 0) + 1
        self._bytes += record.size()
        if deadline is not None:
            heapq.heappush(self._expiry, (deadline, seq, record.task_id))
        return record

    async def transition(
        self,
        task_id: str,
        status: TaskStatus,
        *,
        status_message: str | None = None,
        result: bytes | None = None,
        error: bytes | None = None,
        input_requests: bytes | None = None,
        input_responses: bytes | None = None,
    ) -> TaskRecord | None:
        self._expire()
        slot = self._slots.get(task_id)
        if slot is None:
            return None
        old = slot.record
        if old.terminal:
            return old
        new = msgspec.structs.replace(
            old,
            status=status,
            status_message=status_message,
            last_updated_at=now_iso(),
            version=old.version + 1,
            result=result,
            error=error,
            input_requests=input_requests,
            input_responses=input_responses,
        )
        grow = new.size() - old.size()
        if grow > 0:
            self._make_room(0, grow, keep=task_id)
        slot.record = new
        self._bytes += grow
        if new.terminal:
            self._unfinished_done(old.owner)
            self._push_finished(slot)
        self._wake(task_id)
        return new

    async def delete(self, task_id: str) -> None:
        self._drop(task_id)

    async def purge_expired(self) -> int:
        return self._expire()

    # ------------------------------------------------------------------ bookkeeping

    def _expire(self) -> int:
        """Drop the records whose deadline has passed (the heap holds one entry per record with
        a TTL; an entry whose record was dropped meanwhile is skipped)."""
        heap = self._expiry
        if not heap:
            return 0
        now = self._clock()
        dropped = 0
        while heap and heap[0][0] <= now:
            _deadline, seq, task_id = heapq.heappop(heap)
            slot = self._slots.get(task_id)
            if slot is not None and slot.seq == seq:
                self._drop(task_id)
                dropped += 1
        if dropped:
            self._prune_finished()
        return dropped

    def _drop(self, task_id: str) -> None:
        slot = self._slots.pop(task_id, None)
        if slot is None:
            return
        record = slot.record
        owned = self._owners.get(record.owner)
        if owned is not None:
            owned.pop(task_id, None)
            if not owned:
                del self._owners[record.owner]
        if not record.terminal:
            self._unfinished_done(record.owner)
        self._bytes -= record.size()
        self._wake(task_id)
        self._changed.pop(task_id, None)

    def _unfinished_done(self, owner: str) -> None:
        left = self._unfinished.get(owner, 0) - 1
        if left > 0:
            self._unfinished[owner] = left
        else:
            self._unfinished.pop(owner, None)

    def _wake(self, task_id: str) -> None:
        event = self._changed.pop(task_id, None)
        if event is not None:
            event.set()
        if self._subscribers:
            slot = self._slots.get(task_id)
            record = None if slot is None else slot.record
            for listener in tuple(self._subscribers):
                listener(task_id, record)

    def subscribe(self, listener: ChangeListener) -> Callable[[], None]:
        """Call ``listener(task_id, record)`` synchronously after every change of a record
        (``record`` is ``None`` once it is gone); returns the function that unsubscribes. The
        in-process fast path of :class:`ObservableTaskStore`."""
        self._subscribers.append(listener)

        def unsubscribe() -> None:
            if listener in self._subscribers:
                self._subscribers.remove(listener)

        return unsubscribe

    def _fits(self, records: int, size: int) -> bool:
        return len(self._slots) + records <= self.max_tasks and self._bytes + size <= self.max_bytes

    def _push_finished(self, slot: _Slot) -> None:
        deadline = float("inf") if slot.deadline is None else slot.deadline
        heapq.heappush(self._finished, (deadline, slot.seq, slot.record.task_id))

    def _make_room(self, records: int, size: int, *, keep: str | None = None) -> None:
        """Evict finished records, nearest expiry first (unlimited ones last), until ``records``
        more records and ``size`` more bytes fit; :class:`TaskStoreFull` if they cannot."""
        if size > self.max_bytes:
            raise TaskStoreFull(f"{size} bytes do not fit a task store of {self.max_bytes}")
        finished = self._finished
        kept: list[tuple[float, int, str]] = []
        while not self._fits(records, size) and finished:
            entry = heapq.heappop(finished)
            slot = self._slots.get(entry[2])
            if slot is None or slot.seq != entry[1]:
                continue  # dropped meanwhile
            if entry[2] == keep:
                kept.append(entry)
                continue
            self._drop(entry[2])
        for entry in kept:
            heapq.heappush(finished, entry)
        if not self._fits(records, size):
            raise TaskStoreFull("The task store is full of unfinished tasks")
        self._prune_finished()

    def _prune_finished(self) -> None:
        """Entries of finished records dropped otherwise (expired, deleted) pile up in the
        eviction heap: rebuild it once they outnumber the records held (amortised O(1))."""
        finished = self._finished
        if len(finished) > 2 * len(self._slots) + 64:
            slots = self._slots
            self._finished = [
                e for e in finished if (s := slots.get(e[2])) is not None and s.seq == e[1]
            ]
            heapq.heapify(self._finished)


def now_iso() -> str:
    """Now (wall clock), as the ISO 8601 UTC timestamp the wire carries."""
    return (
        datetime.datetime.now(datetime.UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def _make_cursor(owner: str, seq: int) -> str:
    raw = msgspec.json.encode([owner, seq])
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _read_cursor(cursor: str, owner: str) -> int:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        cursor_owner, seq = msgspec.json.decode(raw, type=tuple[str, int])
    except (ValueError, msgspec.DecodeError) as exc:
        raise InvalidTaskCursor(f"Invalid cursor: {cursor!r}") from exc
    if cursor_owner != owner:
        raise InvalidTaskCursor(f"Invalid cursor: {cursor!r}")
    return seq
