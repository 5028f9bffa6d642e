"""The deadlines of the built-in server's waits on its clients, kept lazily: :class:`WaitTimer`.

Every wait on a client (a request head, the next request on a keep-alive connection, a piece of
a body) has a deadline. Set on the connection's cancel scope before each wait and cleared after
it, that costs two trio deadline updates per request, and the clearing one lies between the
request's bytes arriving and its answer being written. Here a wait costs two attribute writes
instead: the connection records when its current wait must end (``wait_deadline``, ``inf`` when
it is not waiting), and one task per server, the timer, wakes at the earliest deadline it was
told of and cancels the scope of each connection still waiting past its own.

Theory of operation
-------------------
A connection has at most one live entry in the timer's heap (its time is the connection's
``timer_at``), never later than the deadline of the wait it is in. When a wait starts with a
deadline earlier than the connection's entry (or it has none), a new entry is pushed, and the
old one, if any, goes stale. When an entry comes due:

- stale (its time is not its connection's ``timer_at``), or its connection has ended: dropped;
- the connection is waiting and its deadline has passed: its scope is cancelled;
- it is waiting with a later deadline (it has waited again since): the entry moves there;
- it is not waiting: dropped (its next wait pushes one).

So a keep-alive connection answering request after request touches the heap about once per
timeout period, not once per request. Stale entries, and those of ended connections, are dropped
when they come due, or all at once when they outnumber the live ones (so the heap never holds
more than about twice as many entries as there are waiting connections, plus a small constant,
whatever order of waits a client forces).
"""

from __future__ import annotations

import heapq
import itertools
import math
from typing import Protocol

import trio

__all__ = ["TimedWaiter", "WaitTimer"]

# Below this many dead entries the heap is not compacted: dropping them as they come due costs
# less than rebuilding it.
_COMPACT_MIN = 64


class TimedWaiter(Protocol):
    """A connection, as the timer sees it."""

    #: When the connection's current wait must end (``inf``: it is not waiting).
    wait_deadline: float
    #: The time of its live heap entry (``inf``: none).
    timer_at: float

    def wait_expired(self) -> None:
        """The current wait is past its deadline: stop it (cancel the connection's scope)."""
        ...


class WaitTimer:
    """The timer of one server's connections; see the module docstring. Trio only."""

    __slots__ = ("_counter", "_heap", "_live", "_scope")

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, TimedWaiter]] = []
        # Ties in time are broken by push order: connections are not comparable.
        self._counter = itertools.count()
        # Live entries: connections whose ``timer_at`` is finite (the rest of the heap is dead).
        self._live = 0
        # The scope of the timer task's sleep, whose deadline is the heap's earliest entry.
        self._scope: trio.CancelScope | None = None

    def __len__(self) -> int:
        return len(self._heap)

    def waiting(self, waiter: TimedWaiter, deadline: float) -> None:
        """``waiter`` starts a wait that must end by ``deadline``."""
        waiter.wait_deadline = deadline
        if deadline < waiter.timer_at:
            if waiter.timer_at == math.inf:
                self._live += 1
            waiter.timer_at = deadline
            heap = self._heap
            heapq.heappush(heap, (deadline, next(self._counter), waiter))
            if len(heap) > 2 * self._live + _COMPACT_MIN:
                self._compact()
            scope = self._scope
            if scope is not None and deadline < scope.deadline:
                scope.deadline = deadline

    def ended(self, waiter: TimedWaiter) -> None:
        """``waiter`` has ended: none of its entries will act any more."""
        waiter.wait_deadline = math.inf
        if waiter.timer_at != math.inf:
            waiter.timer_at = math.inf
            self._live -= 1

    def _compact(self) -> None:
        """Drop every dead entry (stale, or of an ended connection) at once."""
        heap = self._heap
        heap[:] = [entry for entry in heap if entry[2].timer_at == entry[0]]
        heapq.heapify(heap)

    def expire(self, now: float) -> None:
        """Act on every entry due by ``now`` (see the module docstring)."""
        heap = self._heap
        while heap and heap[0][0] <= now:
            when, _, waiter = heapq.heappop(heap)
            if waiter.timer_at != when:
                continue  # stale, or its connection has ended
            deadline = waiter.wait_deadline
            if deadline != math.inf and deadline > now:
                waiter.timer_at = deadline
                heapq.heappush(heap, (deadline, next(self._counter), waiter))
                continue
            waiter.timer_at = math.inf
            self._live -= 1
            if deadline <= now:
                waiter.wait_expired()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Expire the waits as they come due, until cancelled."""
        task_status.started()
        try:
            while True:
                heap = self._heap
                self._scope = trio.CancelScope(deadline=heap[0][0] if heap else math.inf)
                with self._scope:
                    await trio.sleep_forever()
                self.expire(trio.current_time())
        finally:
            self._scope = None
