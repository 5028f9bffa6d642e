"""A server's lifespan: shared resources opened before it serves and closed after it stops.

A lifespan is a function of the server returning an async context manager (an
``@asynccontextmanager`` function, or a bare async generator function, which is wrapped in one)::

    @asynccontextmanager
    async def lifespan(server: mcptrio.Server) -> AsyncIterator[Database]:
        async with open_database() as db:
            yield db

    server = mcptrio.Server("notes", lifespan=lifespan)

    @server.tool
    async def count(ctx: mcptrio.Context) -> int:
        return await ctx.lifespan.count()

What it yields is ``ctx.lifespan`` in every handler (and ``call.context.lifespan`` in
middleware). The rules:

- **Where it runs.** Every ``serve_*``/``run_*`` entry point enters the lifespan in its own
  task before it serves (before it reports readiness through ``task_status``), and leaves it
  after it stops, once the sessions it served have ended. So the lifespan may open a nursery of
  its own, and a task it starts there lives exactly as long as the serving.
- **Once, shared.** An entry point that starts while the lifespan is already open (entered by
  another, or by ``async with server.open_lifespan()``) shares it and does not enter it again.
  The lifespan is left by whoever entered it: to serve several transports at once, wrap them
  all in ``async with server.open_lifespan():``, so that none of them ends it for the others.
  A handler that runs after the lifespan ended (an entry point that shared it outlived its
  owner) gets a ``RuntimeError`` from ``ctx.lifespan`` saying so.
- **Failure.** An exception while the lifespan starts stops the entry point before it serves,
  as :class:`LifespanError` (the original is its ``__cause__``). An exception on the way out
  propagates from the entry point as it is. Cancellation passes through untouched.
- **None.** With no lifespan, ``ctx.lifespan`` is ``None`` and entering one costs nothing.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Generic, TypeVar

from ..protocol.errors import LocalError

__all__ = ["Lifespan", "LifespanError", "LifespanRunner"]

S = TypeVar("S")
#: ``lifespan(server)`` returns an async context manager whose value handlers reach.
Lifespan = Callable[[S], AbstractAsyncContextManager[Any]]


class LifespanError(LocalError, default_message="The server's lifespan failed to start"):
    """The server's lifespan raised while it started: nothing was served.

    The lifespan's own exception is the ``__cause__``.
    """


_IDLE = object()
_ENDED = object()


class LifespanRunner(Generic[S]):
    """The lifespan of one server (of type ``S``): entered once, shared by every entry point
    meanwhile."""

    __slots__ = ("_factory", "_generation", "_users", "_value", "owner")

    def __init__(self, factory: Callable[[S], Any] | None, owner: str) -> None:
        if factory is not None and not callable(factory):
            raise TypeError(f"lifespan must be a function of the server, not {factory!r}")
        if factory is not None and inspect.isasyncgenfunction(factory):
            factory = asynccontextmanager(factory)
        self._factory: Lifespan[S] | None = factory
        #: Who this is the lifespan of (for messages): ``"server 'notes'"``.
        self.owner = owner
        # Entry points inside the current opening (the one that entered it included), and
        # which opening that is: one that shares an opening that has since ended leaves the
        # count of the next opening alone.
        self._users = 0
        self._generation = 0
        self._value: Any = _IDLE

    @property
    def defined(self) -> bool:
        """Whether the server has a lifespan at all."""
        return self._factory is not None

    @property
    def value(self) -> Any:
        """What the lifespan yielded; ``None`` when there is no lifespan."""
        value = self._value
        if value is _IDLE or value is _ENDED:
            if self._factory is None:
                return None
            if value is _ENDED:
                raise RuntimeError(
                    f"The lifespan of {self.owner} has ended: the entry point that entered it"
                    " stopped while this one still served (wrap entry points that run together"
                    " in `async with server.open_lifespan():`)"
                )
            raise RuntimeError(
                f"The lifespan of {self.owner} is not running: serve it with a serve_*/run_*"
                " method, or inside `async with server.open_lifespan():`"
            )
        return value

    @asynccontextmanager
    async def running(self, server: S) -> AsyncIterator[Any]:
        """Enter the lifespan unless it is open already; yields its value (see the module
        docstring)."""
        if self._factory is None:
            yield None
            return
        if self._users:
            # Open already: share it; whoever entered it leaves it.
            self._users += 1
            generation = self._generation
            try:
                yield self._value
            finally:
                if self._generation == generation and self._users:
                    self._users -= 1
            return
        async with contextlib.AsyncExitStack() as stack:
            try:
                value = await stack.enter_async_context(self._factory(server))
            except Exception as exc:
                raise LifespanError(
                    f"The lifespan of {self.owner} failed to start: {type(exc).__name__}: {exc}"
                ) from exc
            self._value = value
            self._users = 1
            try:
                yield value
            finally:
                self._users = 0
                self._generation += 1
                self._value = _ENDED
