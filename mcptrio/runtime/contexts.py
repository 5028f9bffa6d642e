"""Whether a handler rebound a context variable: :class:`ContextSnapshot`.

Trio runs a task's every step in that task's context, so what a handler sets in a context
variable stays set in the task that ran it. A request actor is reused from one request to the
next (see :mod:`.lifecycle`), so after each request it asks a snapshot taken when it started
whether anything was rebound; if so, the actor ends after answering, and the next request never
sees it.
"""

from __future__ import annotations

import contextvars

__all__ = ["ContextSnapshot"]

_ABSENT = object()


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
        for var, value in self._bindings:  # noqa: SIM110 - no generator object per request
            if get(var, _ABSENT) is not value:
                return False
        return True
