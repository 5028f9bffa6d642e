"""Nurseries whose single error surfaces unwrapped at a public context manager's edge.

Trio nurseries are strict: anything raised inside them leaves as an ``ExceptionGroup``. A user
of ``open_client`` expects ``except RequestTimeout`` to work, so public context managers open
their nursery here, and a group holding exactly one exception is replaced by that exception.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio

__all__ = ["open_unwrapping_nursery"]


@asynccontextmanager
async def open_unwrapping_nursery() -> AsyncIterator[trio.Nursery]:
    """``trio.open_nursery()``, raising a lone error as itself rather than in a group."""
    try:
        async with trio.open_nursery() as nursery:
            yield nursery
    except BaseExceptionGroup as group:
        leaves = _leaves(group)
        if len(leaves) == 1:
            raise leaves[0] from None
        raise


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    found: list[BaseException] = []
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            found.extend(_leaves(exc))
        else:
            found.append(exc)
    return found
