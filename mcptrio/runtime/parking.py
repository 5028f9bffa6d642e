"""A place where one task waits until another wakes it: the runtime's only hand-off primitive.

The hot path of a call hands work from one task to another several times: the reader wakes the
request actor it gives a request to, and the caller waiting for an answer; a transport's pipe
wakes its receiver. Each hand-off has exactly one waiter, and the data travels on the objects
the two tasks share, so a :class:`trio.Event` (a set of waiters, a parking lot, made once per
wait because it cannot be cleared) or a memory channel does more than is needed: replacing an
outgoing request's ``trio.Event`` with a parked caller saved 5.3k instructions per in-memory
call.

:class:`ParkingSpot` is Trio's own low-level pair, ``wait_task_rescheduled`` and
``reschedule``, given a name and the rules that go with it (and, on the hot path, its trap
yielded directly: see ``_wait`` below):

- **One task at a time.** A second task parking on a spot that is taken gets
  ``trio.BusyResourceError``.
- **Waking is sure.** :meth:`ParkingSpot.wake` is synchronous and never fails; a woken task runs
  at its next turn, even if it is cancelled meanwhile (the cancellation then reaches it at its
  next checkpoint). So a hand-off is never lost between ``wake`` and the waiter's turn.
- **Cancellation.** :meth:`ParkingSpot.park` is a checkpoint. A parked task that is cancelled
  stops waiting at once: the spot is free again, :meth:`ParkingSpot.cancelled` runs (before any
  other task runs, so a subclass can withdraw the waiter from wherever it was offered), and
  ``trio.Cancelled`` is raised in the task. A later ``wake`` finds no one and returns ``False``.
"""

from __future__ import annotations

import types
from collections.abc import Awaitable, Generator
from typing import Any

import trio

__all__ = ["ParkingSpot"]

# Bound once: looking them up through ``trio.lowlevel`` on every park and wake cost about 1k
# instructions per in-memory call (four parks and six wakes).
_current_task = trio.lowlevel.current_task
_reschedule = trio.lowlevel.reschedule
_wait_task_rescheduled = trio.lowlevel.wait_task_rescheduled

# Trio's ``wait_task_rescheduled`` is a coroutine that makes a trap object (an attrs class),
# yields it, and unwraps the ``outcome.Value(None)`` that ``reschedule`` made for it: five
# objects per wait, none of which a spot needs. A spot yields the trap it made once (Trio only
# reads its ``abort_func``) and is woken with a sentinel; only what Trio itself sends (the
# outcome of a cancellation) is unwrapped. Measured 2026-11-29: 16.7 -> 12.8 us per round trip
# of two tasks parking in turn, 4 us of an in-memory call's 80. With a Trio that has moved its
# trap type, Trio's own functions are used.
_Trap: Any
try:
    from trio._core._traps import WaitTaskRescheduled as _Trap
except ImportError:  # pragma: no cover - a Trio that moved its traps
    _Trap = None

#: What :meth:`ParkingSpot.wake` sends the parked task (an outcome is what Trio sends).
_WOKEN: Any = object()


@types.coroutine
def _wait(trap: object) -> Generator[object, Any, object]:
    sent = yield trap
    if sent is _WOKEN:
        return None
    return sent.unwrap()


class ParkingSpot:
    """Where one task waits until another wakes it; see the module docstring."""

    __slots__ = ("_task", "_trap")

    def __init__(self) -> None:
        self._task: trio.lowlevel.Task | None = None
        # Made at the first park: an outgoing request answered at once (in its caller's task)
        # never parks, and its trap would be a third of its spot's cost.
        self._trap: Any = None

    @property
    def occupied(self) -> bool:
        """Whether a task is parked here now."""
        return self._task is not None

    def park(self) -> Awaitable[object]:
        """Park the calling task until :meth:`wake`: ``await spot.park()``.

        The task is taken as parked when this is called, so await it at once. (A plain method
        returning Trio's own awaitable, not an ``async def``: no coroutine of its own per wait.)
        """
        if self._task is not None:
            raise trio.BusyResourceError("another task is parked here")
        self._task = _current_task()
        if _Trap is None:  # pragma: no cover - a Trio that moved its traps
            return _wait_task_rescheduled(self._abort)
        trap = self._trap
        if trap is None:
            trap = self._trap = _Trap(self._abort)
        return _wait(trap)

    def wake(self) -> bool:
        """Wake the parked task, if any; whether there was one."""
        task = self._task
        if task is None:
            return False
        self._task = None
        if _Trap is None:  # pragma: no cover - a Trio that moved its traps
            _reschedule(task)
        else:
            _reschedule(task, _WOKEN)
        return True

    def cancelled(self) -> None:
        """Called when the parked task's wait is cancelled, before anything else runs."""

    def _abort(self, _raise_cancel: Any) -> trio.lowlevel.Abort:
        self._task = None
        self.cancelled()
        return trio.lowlevel.Abort.SUCCEEDED
