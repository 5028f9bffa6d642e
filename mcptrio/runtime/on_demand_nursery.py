"""Where a dormant session's tasks run: :class:`OnDemandNursery`, open only while they do.

A session started with ``await nursery.start(session.run)`` keeps a task for its whole life, and
its tasks (request actors, its writer, the actors its owner starts) run in the nursery that task
opens. A session whose every frame is handed in by a task of its own (a Streamable HTTP POST)
needs no such task between requests, and a server holds many thousands of those sessions idle:
each task, nursery and waiting frame is memory that every idle session would keep. Such a
session is started *dormant* (:meth:`Session.start_dormant
<mcptrio.runtime.session.Session.start_dormant>`), and its tasks run in an
:class:`OnDemandNursery`::

    host nursery (the owner's: an HTTP endpoint's session registry)
    └── host task                     opened by the first task started while dormant
        └── the session's nursery     request actors, writer, actors ...
            └── ...

- **Waking.** :meth:`OnDemandNursery.start_soon` while no nursery is open queues the task and
  starts a host task in the host nursery; the host task opens the session's nursery and starts
  what was queued there, each in a copy of the context of the task that asked for it (as
  ``trio.Nursery.start_soon`` would have: a request actor sees its POST's context).
- **Going dormant.** The host task looks at its nursery every ``linger`` seconds (doubling, up
  to ``max_linger``, while tasks still run); the first time it finds it empty, it lets go of it
  and ends. The next task started wakes the session again. A session with no task running keeps
  this object and nothing of Trio's.
- **Ending.** :meth:`OnDemandNursery.cancel` (the session ends) cancels what runs; once no host
  task is left (one is started if none runs), the last one awaits ``ended()``, once. A host task
  that fails, or is cancelled from outside (its host stops), ends the session the same way, and
  its error propagates into the host nursery, as a session's own task would.

Structured concurrency holds: every task runs in the session's nursery, and that nursery in a
task of the host's, which the owner can see and cancel.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import trio

__all__ = ["LINGER", "MAX_LINGER", "OnDemandNursery", "TaskStarter"]

#: Seconds an awake session's nursery stays open with nothing in it before it is let go of: a
#: busy session does not open a nursery per request.
LINGER = 1.0
#: The longest wait between two looks at a nursery whose tasks run on.
MAX_LINGER = 30.0

_Queued = tuple[contextvars.Context, Callable[..., Awaitable[object]], tuple[Any, ...]]


class TaskStarter(Protocol):
    """Where a session starts its tasks: its own ``trio.Nursery``, or an
    :class:`OnDemandNursery`."""

    def start_soon(self, async_fn: Callable[..., Awaitable[object]], *args: Any) -> None: ...


class OnDemandNursery:
    """A session's nursery, open in a task of ``host`` only while tasks run in it; see the
    module docstring. ``ended()`` is awaited once, when the session has ended."""

    # A server holds one per idle session: no per-instance dictionary.
    __slots__ = (
        "_cancelled",
        "_done",
        "_ended",
        "_host",
        "_hosts",
        "_nursery",
        "_opening",
        "_queued",
        "linger",
        "max_linger",
    )

    def __init__(
        self,
        host: trio.Nursery,
        ended: Callable[[], Awaitable[None]],
        *,
        linger: float = LINGER,
        max_linger: float = MAX_LINGER,
    ) -> None:
        self._host = host
        self._ended = ended
        self.linger = linger
        self.max_linger = max_linger
        # The session's nursery while a host task holds it open.
        self._nursery: trio.Nursery | None = None
        # Tasks asked for while no nursery was open, for the host task being started.
        self._queued: list[_Queued] | None = None
        # Whether a host task is started and has not opened its nursery yet.
        self._opening = False
        # Host tasks alive: at most two, one letting go of its nursery as the next opens.
        self._hosts = 0
        self._cancelled = False
        self._done = False

    @property
    def awake(self) -> bool:
        """Whether a host task runs for the session now (it holds a task and a nursery)."""
        return self._hosts > 0

    def start_soon(self, async_fn: Callable[..., Awaitable[object]], *args: Any) -> None:
        """Start ``async_fn(*args)`` in the session's nursery, waking the session if it is
        dormant; the task runs in a copy of the calling task's context either way. Raises
        ``RuntimeError`` once the session has ended."""
        nursery = self._nursery
        if nursery is not None:
            nursery.start_soon(async_fn, *args)
            return
        if self._done:
            raise RuntimeError("the session has ended: no task can start in it")
        queued = self._queued
        if queued is None:
            queued = self._queued = []
        queued.append((contextvars.copy_context(), async_fn, args))
        if not self._opening:
            self._start_host()

    def cancel(self) -> None:
        """The session ends: cancel its tasks; ``ended()`` follows in a host task. Idempotent."""
        if self._cancelled:
            return
        self._cancelled = True
        nursery = self._nursery
        if nursery is not None:
            nursery.cancel_scope.cancel()
        elif self._hosts == 0 and not self._done:
            self._start_host()
        # Else a host task is opening (it cancels its nursery once open) or letting go of an
        # empty one (it ends the session as it leaves).

    def _start_host(self) -> None:
        self._opening = True
        self._hosts += 1
        self._host.start_soon(self._host_task)

    async def _host_task(self) -> None:
        nursery: trio.Nursery | None = None
        failed = False
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                self._opening = False
                queued, self._queued = self._queued, None
                if queued is not None:
                    for context, async_fn, args in queued:
                        # start_soon gives the new task a copy of the current context: here,
                        # the one the task was asked for in.
                        context.run(nursery.start_soon, async_fn, *args)
                if self._cancelled:
                    nursery.cancel_scope.cancel()
                period = self.linger
                while True:
                    await trio.sleep(period)
                    if not nursery.child_tasks:
                        # Let go of the nursery in the step that found it empty: with no
                        # checkpoint before the block exits, no task can be started in it
                        # meanwhile, and the next one opens a nursery of its own.
                        self._nursery = None
                        break
                    period = min(period * 2, self.max_linger)
        except BaseException:
            failed = True
            raise
        finally:
            if self._nursery is nursery:
                self._nursery = None
            self._hosts -= 1
            if failed and not self._cancelled:
                # An error, or the host stopping: the session ends, as its own task's would
                # (here, or in the host task that holds its nursery now, if one does).
                self._cancelled = True
                if self._nursery is not None:
                    self._nursery.cancel_scope.cancel()
            if self._cancelled and self._hosts == 0 and not self._done:
                self._done = True
                self._queued = None
                await self._ended()
