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
"""

from __future__ import annotations

from typing import Any

import trio

__all__ = ["others_runnable"]

_RUN_CONTEXT: Any
try:
    from trio._core._run import GLOBAL_RUN_CONTEXT as _RUN_CONTEXT
except ImportError:  # pragma: no cover - a Trio that moved its run state
    _RUN_CONTEXT = None


def others_runnable() -> bool:
    """Whether a task other than the calling one is ready to run (call from inside Trio)."""
    try:
        # Attribute reads, not getattr() with a default: this runs twice in every in-memory
        # call, and the two builtin calls cost as much again.
        return bool(_RUN_CONTEXT.runner.runq)
    except AttributeError:
        return trio.lowlevel.current_statistics().tasks_runnable > 0
