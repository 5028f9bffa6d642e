"""Keeping a handler's context variables to its own request, in a task that is not its own.

Trio runs a task's every step in that task's context, so what a handler sets in a context
variable stays set in the task that ran it. A request that had a task of its own would take that
with it when the task ended; two kinds of task outlive one request instead, and each keeps the
next request from seeing what a handler set in its own way:

- a task that serves others after the request (an HTTP POST answered in its connection's task):
  :class:`InContext` runs the handler with each of its steps in a context of its own;
- a request actor, reused from one request to the next: running every request under
  :class:`InContext` would cost a step through it on every await of every handler, so the actor
  runs in its own context and, after each request, asks a :class:`ContextSnapshot` taken when it
  started whether anything was rebound; if so, the actor ends after answering.
"""

from __future__ import annotations

import contextvars
from collections.abc import Coroutine, Generator
from typing import Any, Generic, TypeVar

__all__ = ["ContextSnapshot", "InContext"]

T = TypeVar("T")

_ABSENT = object()


class InContext(Generic[T]):
    """Awaits a coroutine with each of its steps run in ``context``, within the current task."""

    __slots__ = ("_context", "_coro")

    def __init__(self, coro: Coroutine[Any, Any, T], context: contextvars.Context) -> None:
        self._coro = coro
        self._context = context

    def __await__(self) -> Generator[Any, Any, T]:
        run = self._context.run
        send = self._coro.send
        throw = self._coro.throw
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                yielded = run(send, value) if error is None else run(throw, error)
            except StopIteration as stop:
                result: T = stop.value
                return result
            try:
                value = yield yielded
                error = None
            except BaseException as exc:  # handed on to the coroutine, which decides
                value, error = None, exc


class ContextSnapshot:
    """What the current context binds now, to tell later whether anything was rebound."""

    __slots__ = ("_bindings",)

    def __init__(self) -> None:
        self._bindings = tuple(contextvars.copy_context().items())

    def unchanged(self) -> bool:
        """Whether the current context binds exactly what it did: the same variables, each to
        the very same object (identity, never ``==``, which may raise, or call two different
        objects equal)."""
        current = contextvars.copy_context()
        if len(current) != len(self._bindings):
            return False
        get = current.get
        # A plain loop: no generator object per request.
        for var, value in self._bindings:  # noqa: SIM110
            if get(var, _ABSENT) is not value:
                return False
        return True
