"""Running a coroutine, within the current task, with each of its steps in a given context.

Trio runs a task's every step in that task's context. A handler that runs in a task other than
its own (an HTTP POST's, or a request actor reused from one request to the next) must not leak
what it sets in context variables into that task's later work: :class:`InContext` runs it in a
context of its own instead.
"""

from __future__ import annotations

import contextvars
from collections.abc import Coroutine, Generator
from typing import Any, Generic, TypeVar

__all__ = ["InContext"]

T = TypeVar("T")


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
