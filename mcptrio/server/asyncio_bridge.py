"""The bridge between a Trio server and the asyncio handlers it runs (see
:mod:`.asyncio_handlers` for how a handler is marked, and ``docs/explanation/asyncio-bridge.md``
for why the bridge is a loop in a thread).

Theory of operation:

- **The loop.** :func:`serve_asyncio_loop` creates an asyncio event loop and runs it in a
  thread of its own (a Trio worker thread with a limiter of its own, so it never takes a place
  from the plain ``def`` handlers), until it is cancelled; then it cancels and finishes whatever
  tasks are left on the loop, as ``asyncio.run`` does, and closes it.
- **A call.** :meth:`AsyncioLoop.run` makes the handler's coroutine in the request's task and
  hands it to the loop as an asyncio task (``call_soon_threadsafe``), created in a copy of the
  request's ``contextvars`` context; the Trio side sleeps until the task's done-callback wakes it
  through the Trio token. Its value is returned and its exception raised as they are, so a marked
  handler's errors become tool errors (or JSON-RPC errors) exactly as a Trio handler's do.
- **Cancellation, Trio to asyncio.** When the request is cancelled (``notifications/cancelled``,
  its timeout, the session or the server ending) the asyncio task is cancelled: it sees
  ``asyncio.CancelledError`` at its current ``await``, and the Trio side waits, shielded, until
  it has finished, so nothing of the request outlives it. A task that swallows the cancellation
  keeps the request waiting, as a thread does.
- **The context, asyncio to Trio.** A handler that asks for the ``Context`` gets an
  :class:`~.asyncio_context.AsyncioContext`: each coroutine method it awaits runs as a Trio task
  in a nursery the call opens (:class:`TrioCalls`), under a cancel scope of its own, and its
  outcome settles an asyncio future. Cancelling the awaiting asyncio task cancels that scope;
  cancelling the request cancels the nursery, and the asyncio side sees ``CancelledError``.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import outcome
import trio

from ..runtime.nurseries import open_unwrapping_nursery
from .asyncio_context import AsyncioContext
from .asyncio_handlers import AsyncioLoopSlot
from .handler_context import HandlerContext

#: A coroutine method of the request's context, run in Trio for the asyncio side.
TrioMethod = Callable[..., Awaitable[Any]]

__all__ = ["AsyncioLoop", "TrioCalls", "call_on_asyncio", "open_asyncio_loop", "serve_asyncio_loop"]


async def call_on_asyncio(
    ctx: HandlerContext, fn: Callable[..., Any], args: tuple[Any, ...], values: dict[str, Any]
) -> Any:
    """Call the marked handler ``fn`` on the asyncio loop of ``ctx``'s server (a loop of its own
    for this call when the server is not being served); ``ctx``, wherever it was injected, is
    replaced by its :class:`AsyncioContext`."""
    slot = getattr(ctx.server, "asyncio_loop", None)
    loop = await slot.loop() if isinstance(slot, AsyncioLoopSlot) else None
    if loop is not None:
        return await loop.run(ctx, fn, args, values)
    async with open_asyncio_loop() as own:
        return await own.run(ctx, fn, args, values)


async def serve_asyncio_loop(*, task_status: trio.TaskStatus[AsyncioLoop]) -> None:
    """Run an asyncio event loop in a thread until cancelled; reports it as an
    :class:`AsyncioLoop`."""
    token = trio.lowlevel.current_trio_token()
    made: list[AsyncioLoop] = []
    running = trio.Event()

    def started(loop: asyncio.AbstractEventLoop) -> None:
        made.append(AsyncioLoop(loop, token))
        running.set()

    async with open_unwrapping_nursery() as nursery:
        nursery.start_soon(
            functools.partial(
                trio.to_thread.run_sync,
                _run_until_stopped,
                token,
                started,
                limiter=trio.CapacityLimiter(1),
                thread_name="mcptrio asyncio loop",
            )
        )
        await running.wait()
        loop = made[0].loop
        task_status.started(made[0])
        try:
            await trio.sleep_forever()
        finally:
            loop.call_soon_threadsafe(loop.stop)


@asynccontextmanager
async def open_asyncio_loop() -> AsyncIterator[AsyncioLoop]:
    """An asyncio loop in a thread for the ``async with`` block."""
    async with open_unwrapping_nursery() as nursery:
        loop: AsyncioLoop = await nursery.start(serve_asyncio_loop)
        try:
            yield loop
        finally:
            nursery.cancel_scope.cancel()


def _run_until_stopped(
    token: trio.lowlevel.TrioToken, started: Callable[[asyncio.AbstractEventLoop], object]
) -> None:
    """The loop's thread: make the loop here (what the thread's event loop policy makes, as
    ``asyncio.run`` would, even where a library such as trio-asyncio replaced the policy for
    Trio's thread), call ``started`` in Trio once it runs, run until stopped, then end what is
    left as ``asyncio.run`` does and close it."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        loop.call_soon(token.run_sync_soon, started, loop)
        loop.run_forever()
        left = asyncio.all_tasks(loop)
        for task in left:
            task.cancel()
        if left:
            loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        asyncio.set_event_loop(None)
        loop.close()


class AsyncioLoop:
    """A running asyncio loop and the Trio run it answers to."""

    def __init__(self, loop: asyncio.AbstractEventLoop, token: trio.lowlevel.TrioToken) -> None:
        self.loop = loop
        self.token = token

    async def run(
        self,
        ctx: HandlerContext,
        fn: Callable[..., Coroutine[Any, Any, Any]],
        args: tuple[Any, ...],
        values: dict[str, Any],
    ) -> Any:
        """``await fn(*args, **values)`` on the loop (see the module docstring); ``ctx`` is
        replaced by its asyncio view wherever it is among the values."""
        if not (any(arg is ctx for arg in args) or any(v is ctx for v in values.values())):
            return await self._run_task(fn(*args, **values))
        async with open_unwrapping_nursery() as nursery:
            calls = TrioCalls(nursery, self)
            view = AsyncioContext(ctx, calls.call)
            args = tuple(view if arg is ctx else arg for arg in args)
            values = {name: view if v is ctx else v for name, v in values.items()}
            try:
                return await self._run_task(fn(*args, **values))
            finally:
                calls.close()

    async def _run_task(self, coro: Coroutine[Any, Any, Any]) -> Any:
        loop = self.loop
        token = self.token
        done = trio.Event()
        tasks: list[asyncio.Task[Any]] = []
        context = contextvars.copy_context()

        def wake(_: object) -> None:
            token.run_sync_soon(done.set)

        def start() -> None:
            task = loop.create_task(coro, context=context)
            tasks.append(task)
            task.add_done_callback(wake)

        loop.call_soon_threadsafe(start)
        try:
            await done.wait()
        except BaseException:
            # Scheduled after ``start``, and the loop runs its callbacks in order: the task
            # exists when this runs.
            loop.call_soon_threadsafe(lambda: tasks[0].cancel())
            with trio.CancelScope(shield=True):
                await done.wait()
            raise
        try:
            return tasks[0].result()
        except asyncio.CancelledError:
            name = getattr(coro, "__qualname__", repr(coro))
            raise RuntimeError(
                f"{name}() was cancelled on the asyncio side (the request was not)"
            ) from None


class TrioCalls:
    """The Trio side of one asyncio handler's context: its awaited coroutine methods run here,
    as tasks of ``nursery``, until :meth:`close`."""

    def __init__(self, nursery: trio.Nursery, loop: AsyncioLoop) -> None:
        self._nursery: trio.Nursery | None = nursery
        self._loop = loop

    def close(self) -> None:
        """Refuse later calls (a task the handler left behind on the loop may still try)."""
        self._nursery = None

    async def call(
        self, method: TrioMethod, args: tuple[Any, ...], kwargs: Mapping[str, Any]
    ) -> Any:
        """Awaited in the asyncio thread: run ``method(*args, **kwargs)`` in Trio, and its
        outcome here."""
        call = _TrioCall(
            functools.partial(method, *args, **kwargs), self._loop.loop.create_future()
        )
        self._loop.token.run_sync_soon(self._start, call)
        try:
            return await call.future
        except asyncio.CancelledError:
            self._loop.token.run_sync_soon(call.scope.cancel)
            raise

    def _start(self, call: _TrioCall) -> None:
        # A callback of the Trio run: it must not raise.
        if self._nursery is None:
            refused = outcome.Error(RuntimeError("the request this context belongs to has ended"))
            self._settle(call.future, refused)
            return
        self._nursery.start_soon(self._run, call)

    async def _run(self, call: _TrioCall) -> None:
        with call.scope:
            result = await outcome.acapture(call.method)
            self._settle(call.future, result)
            if isinstance(result, outcome.Error) and isinstance(result.error, trio.Cancelled):
                raise result.error  # the request's cancellation goes on in Trio too

    def _settle(self, future: asyncio.Future[Any], result: outcome.Maybe[Any]) -> None:
        self._loop.loop.call_soon_threadsafe(_settle_future, future, result)


@dataclass(slots=True)
class _TrioCall:
    """One context call from the asyncio side: the method with its arguments, the asyncio
    future its outcome settles, and the cancel scope it runs under in Trio (made here, so that
    the asyncio side can cancel it before it has started)."""

    method: Callable[[], Awaitable[Any]]
    future: asyncio.Future[Any]
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)


def _settle_future(future: asyncio.Future[Any], result: outcome.Maybe[Any]) -> None:
    """In the asyncio thread: the Trio outcome into the future (a cancellation as one)."""
    if future.done():
        return
    if isinstance(result, outcome.Value):
        future.set_result(result.value)
    elif isinstance(result.error, trio.Cancelled):
        future.cancel()
    else:
        future.set_exception(result.error)
