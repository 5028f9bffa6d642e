"""Whether any task other than the running one is ready to run: the test that lets a hand-off
in process skip a task switch without changing what runs before what.

In process, an answer reaches its caller by way of the client session's reader: the request
actor wakes the reader, the reader wakes the caller, and every task the handler made ready in
between (one it started, one it woke) runs its step before the caller resumes. When nothing but
the reader would run, waking the caller directly (one task switch less, a sixth of an in-memory
call) keeps that order exactly: the caller still runs after every task made ready before it.

Trio tells how many tasks are ready in :func:`trio.lowlevel.current_statistics`, which builds
a statistics record with the I/O manager's statistics and the next deadline: 21k instructions,
as much as the task switch it would save (measured 2026-11-29 with callgrind). The run queue
itself is read instead when Trio's run state has it (Trio 0.27 to 0.35 do; a test checks that
the two agree), else the statistics.

:func:`schedule_point` is here for the same reason: a call answered at once, in its caller's
task, still lets every other task run before it returns (a checkpoint's schedule point), and
Trio's own (``cancel_shielded_checkpoint``) is two coroutines and an outcome around one trap.
"""

from __future__ import annotations

import types
from collections.abc import Generator
from typing import Any

import trio

__all__ = ["others_runnable", "schedule_point"]

_RUN_CONTEXT: Any
try:
    from trio._core._run import GLOBAL_RUN_CONTEXT as _RUN_CONTEXT
except ImportError:  # pragma: no cover - a Trio that moved its run state
    _RUN_CONTEXT = None

_SCHEDULE_POINT: Any
try:
    from trio._core._traps import CancelShieldedCheckpoint as _SCHEDULE_POINT
except ImportError:  # pragma: no cover - a Trio that moved its traps
    _SCHEDULE_POINT = None


def others_runnable() -> bool:
    """Whether a task other than the calling one is ready to run (call from inside Trio)."""
    try:
        # Attribute reads, not getattr() with a default: this runs twice in every in-memory
        # call, and the two builtin calls cost as much again.
        return bool(_RUN_CONTEXT.runner.runq)
    except AttributeError:
        return trio.lowlevel.current_statistics().tasks_runnable > 0


@types.coroutine
def _yield_schedule_point() -> Generator[Any, Any, None]:
    # Trio answers this trap with outcome.Value(None), always: nothing to unwrap.
    yield _SCHEDULE_POINT


def schedule_point() -> Any:
    """``await schedule_point()``: give the scheduler a turn, in which every other ready task
    runs a step (before or after this one, in Trio's order for a batch), as
    :func:`trio.lowlevel.cancel_shielded_checkpoint` does; not a cancel point. (A plain
    function returning the awaitable, not an ``async def``: no coroutine of its own.)"""
    if _SCHEDULE_POINT is None:  # pragma: no cover - a Trio that moved its traps
        return trio.lowlevel.cancel_shielded_checkpoint()  # noqa: ASYNC105 - the caller awaits
    return _yield_schedule_point()
