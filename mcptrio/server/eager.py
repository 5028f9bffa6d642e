"""Which requests a server answers at once, in the task that decoded them.

A request normally runs in a request actor: a task of its own, under its own cancel scope, so
that a handler that waits never holds up the session's reader. Handing a request to an actor
and its answer back costs two task switches (what they cost is in
``docs/explanation/eager-answers.md``). A handler that cannot wait has nothing to gain from
them: nothing can cancel it (a
cancellation is only seen at a checkpoint, and it has none) and it holds up the reader no longer
than the actor's turn would. So a request whose whole path provably never suspends is answered
eagerly, where it was decoded (like asyncio's eager tasks, Python 3.12), and its answer sent
from there.

What "provably" means here, checked once at registration:

- **The user's function** is an ``async def`` whose own code has no ``await``, ``async for``
  or ``async with`` (looked for in its bytecode: only those can suspend a coroutine), and takes
  no :class:`~.context.Context` (so it cannot reach anything that waits). A plain ``def`` runs
  in a worker thread, which is a wait.
- **The server's path to it** has no wait of its own: no middleware is installed, and the
  method is ``tools/call`` of a registered tool that is never a task (``task="forbidden"``,
  the default) called without a task, or ``resources/read`` of a static resource (fixed
  contents, or a function as above). Forwarded, mounted and gateway items wait on their
  upstream and are never eager; nor are templates, prompts and everything else.

An eager handler runs in a fresh copy of the session's context (as a new task would), so what
it sets there is seen by no one else. See docs/explanation/eager-answers.md.
"""

from __future__ import annotations

import dis
import inspect
import types
from collections.abc import Callable
from typing import Any

__all__ = ["JudgedCode", "never_suspends"]

# The instructions with which a coroutine can give up control (Python 3.11 to 3.14): awaiting
# (GET_AWAITABLE, then SEND and YIELD_VALUE), async iteration and async context managers.
_SUSPENDING = frozenset(
    name
    for name in (
        "GET_AWAITABLE",
        "SEND",
        "YIELD_VALUE",
        "GET_AITER",
        "GET_ANEXT",
        "END_ASYNC_FOR",
        "BEFORE_ASYNC_WITH",
    )
    if name in dis.opmap
)


def never_suspends(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` is an ``async def`` function whose coroutine always ends at its first
    step: no instruction of its own can suspend it (a function it calls without awaiting cannot
    either). Anything else (a callable object, a ``functools.partial``) is taken to suspend; a
    wrapper that is itself an ``async def`` is judged by its own code."""
    return JudgedCode.of(fn) is not None


class JudgedCode:
    """The code of a function found never to suspend, and the function it was read from: the
    judgement holds while the function still runs that code (a hot reloader may swap it)."""

    __slots__ = ("code", "function")

    def __init__(self, function: types.FunctionType) -> None:
        self.function = function
        self.code = function.__code__

    @classmethod
    def of(cls, fn: Callable[..., Any]) -> JudgedCode | None:
        """``fn``'s code if it never suspends (see :func:`never_suspends`), else ``None``."""
        if isinstance(fn, types.MethodType):
            fn = fn.__func__
        if type(fn) is not types.FunctionType:
            return None
        code = fn.__code__
        if not code.co_flags & inspect.CO_COROUTINE:
            return None
        if any(instruction.opname in _SUSPENDING for instruction in dis.get_instructions(code)):
            return None
        return cls(fn)

    @property
    def holds(self) -> bool:
        """Whether the function still runs the code that was judged."""
        return self.function.__code__ is self.code
