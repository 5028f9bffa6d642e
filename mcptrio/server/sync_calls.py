"""Sync calls: a plain ``def`` handler run off the event loop, on a bounded pool of threads.

A sync handler (a ``def`` tool, resource, prompt or completer; a generator collected into a
list) may block: it runs in a worker thread so that the event loop keeps answering. The hop to
a thread and back is the cost of every such call, and ``trio.to_thread.run_sync`` pays it in
full each time: a thread woken for the one call, a limiter token, a wake-up of the event loop
for the one result. :class:`SyncWorkers` pays it once per batch instead:

- **Calls go into one queue** that a few long-lived worker threads take from. A thread that
  finishes a call takes the next one without sleeping, so a burst of calls wakes few threads.
- **Results come back in batches.** A worker appends its result to the finished list and wakes
  the event loop (``TrioToken.run_sync_soon``) only when the list was empty: the loop then
  reschedules every waiting caller whose call finished meanwhile, in one go.
- **The bound.** At most ``threads`` threads (:data:`DEFAULT_SYNC_THREADS` unless the pool was
  opened with another figure), each started only when more calls are waiting than there are
  threads. A call beyond the bound waits in the queue, as it would for a limiter's token.

The rules a caller keeps:

- **Cancellation.** A call still in the queue when its request is cancelled is taken out and
  never runs. One already running cannot be interrupted: the request waits for it to finish and
  its result is dropped (the request's next checkpoint raises ``Cancelled``).
- **Context variables.** The function runs in a copy of the caller's context, as with
  ``trio.to_thread.run_sync``: what the request set (the context the logging bridge reads) is
  visible, and what the function sets stays in its copy.
- **Exceptions** the function raises are raised in the caller.
- **Back to Trio.** Each worker thread is itself a ``trio.to_thread.run_sync`` call of a task in
  the pool's nursery, so ``trio.from_thread.run`` and ``run_sync`` work in a handler without a
  token. They run in that task, with the handler's context variables: not under the request's
  cancel scope.
- **Lifetime.** :func:`open_sync_workers` opens the pool for an ``async with`` block (a
  server's serving lifetime opens one, see :func:`~.task_calls.open_serving`); one pool serves
  the whole Trio run, and a block opened while one is open shares it. Leaving the block that
  opened it lets every worker finish the call it is in and waits for the threads to end: no
  thread outlives it. Outside any such block :func:`run_sync_call` is
  ``trio.to_thread.run_sync``.
"""

from __future__ import annotations

import contextvars
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from queue import SimpleQueue
from typing import Any, Final, TypeVar

import outcome
import trio

from ..runtime.nurseries import open_unwrapping_nursery

__all__ = ["DEFAULT_SYNC_THREADS", "SyncWorkers", "open_sync_workers", "run_sync_call"]

T = TypeVar("T")

#: The worker threads a pool may start unless told otherwise: Trio's own default bound on
#: threads (``trio.to_thread.current_default_thread_limiter()``), so that as many blocking
#: calls run at once as before; a pool starts only the threads its calls need.
DEFAULT_SYNC_THREADS: Final = 40


class _Call:
    """One function call handed to the workers, and the task waiting for its outcome."""

    __slots__ = ("context", "fn", "outcome", "started", "task", "withdrawn")

    def __init__(self, fn: Callable[[], Any], task: trio.lowlevel.Task) -> None:
        self.fn = fn
        self.context = contextvars.copy_context()
        self.task = task
        self.outcome: outcome.Outcome[Any] | None = None
        self.started = False
        self.withdrawn = False


class SyncWorkers:
    """A bounded pool of worker threads running sync calls for one Trio run (see the module)."""

    def __init__(self, threads: int, nursery: trio.Nursery) -> None:
        if threads < 1:
            raise ValueError(f"a sync worker pool needs at least 1 thread, not {threads}")
        #: The most threads this pool starts.
        self.threads = threads
        self._nursery = nursery
        self._token = trio.lowlevel.current_trio_token()
        self._limiter = trio.CapacityLimiter(threads)
        self._calls: SimpleQueue[_Call | None] = SimpleQueue()
        # Guards ``_finished``, ``_wake_pending`` and each call's started/withdrawn pair.
        self._lock = threading.Lock()
        self._finished: deque[_Call] = deque()
        self._wake_pending = False
        self._started = 0
        # Calls handed over and not yet delivered (read and written in the Trio thread only).
        self._outstanding = 0
        self._closed = False

    async def run(self, fn: Callable[[], T]) -> T:
        """``fn()`` in a worker thread; its value, or its exception raised here."""
        if self._closed:
            return await trio.to_thread.run_sync(fn)
        call = _Call(fn, trio.lowlevel.current_task())
        self._outstanding += 1
        if self._outstanding > self._started and self._started < self.threads:
            self._started += 1
            self._nursery.start_soon(self._keep_thread)
        self._calls.put(call)

        def withdraw(raise_cancel: trio.lowlevel.RaiseCancelT) -> trio.lowlevel.Abort:
            with self._lock:
                if call.started:
                    return trio.lowlevel.Abort.FAILED
                call.withdrawn = True
            self._outstanding -= 1
            return trio.lowlevel.Abort.SUCCEEDED

        result: T = await trio.lowlevel.wait_task_rescheduled(withdraw)
        return result

    def close(self) -> None:
        """Let every worker end once the calls in the queue are done; new calls go to
        ``trio.to_thread.run_sync``."""
        self._closed = True
        for _ in range(self._started):
            self._calls.put(None)

    async def _keep_thread(self) -> None:
        await trio.to_thread.run_sync(self._work, limiter=self._limiter, thread_name="mcptrio sync")

    def _work(self) -> None:
        """A worker thread: run calls until the pool closes."""
        take = self._calls.get
        lock = self._lock
        finished = self._finished
        while (call := take()) is not None:
            with lock:
                if call.withdrawn:
                    continue
                call.started = True
            call.outcome = outcome.capture(call.context.run, call.fn)
            with lock:
                finished.append(call)
                wake = not self._wake_pending
                self._wake_pending = True
            if wake:
                self._token.run_sync_soon(self._deliver)

    def _deliver(self) -> None:
        """In the Trio thread: reschedule every caller whose call has finished."""
        with self._lock:
            batch = list(self._finished)
            self._finished.clear()
            self._wake_pending = False
        self._outstanding -= len(batch)
        reschedule = trio.lowlevel.reschedule
        for call in batch:
            assert call.outcome is not None
            reschedule(call.task, call.outcome)


_CURRENT: trio.lowlevel.RunVar[SyncWorkers | None] = trio.lowlevel.RunVar(
    "mcptrio_sync_workers", default=None
)


@asynccontextmanager
async def open_sync_workers(threads: int = DEFAULT_SYNC_THREADS) -> AsyncIterator[SyncWorkers]:
    """The Trio run's pool of sync workers for the ``async with`` block: opened with at most
    ``threads`` threads, or the one open already (whatever its bound). Leaving the block that
    opened it waits for its threads to end (see the module)."""
    current = _CURRENT.get()
    if current is not None:
        yield current
        return
    async with open_unwrapping_nursery() as nursery:
        workers = SyncWorkers(threads, nursery)
        _CURRENT.set(workers)
        try:
            yield workers
        finally:
            _CURRENT.set(None)
            workers.close()


async def run_sync_call(fn: Callable[[], T]) -> T:
    """``fn()`` off the event loop: on the run's open pool (:func:`open_sync_workers`), else in
    ``trio.to_thread.run_sync``."""
    workers = _CURRENT.get()
    if workers is None:
        return await trio.to_thread.run_sync(fn)
    return await workers.run(fn)
