"""A place where one task waits until another wakes it: the runtime's one hand-off primitive.

A call hands work from one task to another several times: a transport's pipe wakes its receiver,
the reader wakes the request actor it gives a request to, and the caller waiting for an answer.
Each hand-off has exactly one waiter, and the data travels on the objects the two tasks share,
so a :class:`trio.Event` (a set of waiters, made once per wait because it cannot be cleared) or
a memory channel does more than is needed.

:class:`ParkingSpot` is Trio's public low-level pair, :func:`trio.lowlevel.wait_task_rescheduled`
and :func:`trio.lowlevel.reschedule`, given a name and the rules that go with it:

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

from typing import Any

import trio

__all__ = ["ParkingSpot"]


class ParkingSpot:
    """Where one task waits until another wakes it; see the module docstring."""

    __slots__ = ("_task",)

    def __init__(self) -> None:
        self._task: trio.lowlevel.Task | None = None

    @property
    def occupied(self) -> bool:
        """Whether a task is parked here now."""
        return self._task is not None

    async def park(self) -> None:
        """Park the calling task until :meth:`wake` (or until it is cancelled)."""
        if self._task is not None:
            raise trio.BusyResourceError("another task is parked here")
        self._task = trio.lowlevel.current_task()
        await trio.lowlevel.wait_task_rescheduled(self._abort)

    def wake(self) -> bool:
        """Wake the parked task, if any; whether there was one."""
        task = self._task
        if task is None:
            return False
        self._task = None
        trio.lowlevel.reschedule(task)
        return True

    def cancelled(self) -> None:
        """Called when the parked task's wait is cancelled, before anything else runs."""

    def _abort(self, _raise_cancel: Any) -> trio.lowlevel.Abort:
        self._task = None
        self.cancelled()
        return trio.lowlevel.Abort.SUCCEEDED
