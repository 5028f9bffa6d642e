"""Handlers written against asyncio: how one is marked, and the server's asyncio loop.

A tool, resource, resource template, prompt or completer whose ``async def`` awaits an
asyncio-only library (aiohttp, aiosqlite, asyncpg, a vendor SDK) is marked with
:func:`asyncio_handler`; :mod:`.handler` then runs it on an asyncio event loop instead of in the
request's Trio task, through :mod:`.asyncio_bridge`. An ``async def`` that is not marked runs in
Trio as always: nothing is detected, nothing is paid, and asyncio is not even imported.

Each :class:`~mcptrio.Server` has one :class:`AsyncioLoopSlot`. The slot is open while the
server is served (it is part of :meth:`~mcptrio.Server.open_lifespan`, outside the task
nursery, so the loop outlives every request and task that may use it); the loop and its thread
start in the slot's nursery at the first call of a marked handler, and stop when serving ends.
A call made while the server is not being served (a handler called directly, a context that is
not a server's) gets a loop of its own for that call.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import trio

from ..runtime.nurseries import open_unwrapping_nursery

if TYPE_CHECKING:
    from .asyncio_bridge import AsyncioLoop

__all__ = ["AsyncioLoopSlot", "asyncio_handler", "marked_for_asyncio"]

F = TypeVar("F", bound=Callable[..., Any])

#: The attribute :func:`asyncio_handler` sets on the function it marks.
_MARK = "__mcptrio_runs_on__"


def asyncio_handler(fn: F) -> F:
    """Mark an ``async def`` handler to run on the server's asyncio event loop (see the module
    docstring); returns the function itself. Put it under the registering decorator::

        @server.tool
        @mcptrio.asyncio_handler
        async def fetch(url: str) -> str:
            async with aiohttp.ClientSession() as http, http.get(url) as response:
                return await response.text()

    A ``Context`` parameter receives a view of the request's context whose coroutine methods
    (``report_progress``, ``log``, ``elicit``, ``sample``...) are awaited from asyncio. Raises
    ``TypeError`` for anything but an ``async def`` function.
    """
    target = getattr(fn, "__func__", fn)
    if not inspect.iscoroutinefunction(target):
        raise TypeError(
            f"mcptrio.asyncio_handler marks an async def function; {fn!r} is not one"
            " (a plain def already runs in a worker thread, where any library may block)"
        )
    setattr(target, _MARK, "asyncio")
    return fn


def marked_for_asyncio(fn: Callable[..., Any]) -> bool:
    """Whether :func:`asyncio_handler` marked ``fn`` (or the function it is a bound method of)."""
    return getattr(fn, _MARK, None) == "asyncio"


class AsyncioLoopSlot:
    """Where a server's asyncio loop lives: a nursery open while the server is served, in which
    the loop starts at its first use (:meth:`loop`) and which stops it when serving ends."""

    def __init__(self) -> None:
        self._nursery: trio.Nursery | None = None
        self._loop: AsyncioLoop | None = None
        self._starting = trio.Lock()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Keep the slot open for the ``async with`` block, unless it is open already (then
        share it: whoever opened it closes it). On the way out the loop, if it started, is
        stopped: its thread ends once the tasks it still has are cancelled and finished."""
        if self._nursery is not None:
            yield
            return
        try:
            async with open_unwrapping_nursery() as nursery:
                self._nursery = nursery
                try:
                    yield
                finally:
                    nursery.cancel_scope.cancel()
        finally:
            self._nursery = None
            self._loop = None

    async def loop(self) -> AsyncioLoop | None:
        """The running loop, started now if it has not been; ``None`` when the slot is not open
        (the server is not being served)."""
        if self._loop is not None:
            return self._loop
        async with self._starting:
            nursery = self._nursery
            if self._loop is None and nursery is not None:
                from .asyncio_bridge import serve_asyncio_loop

                self._loop = await nursery.start(serve_asyncio_loop)
        return self._loop
