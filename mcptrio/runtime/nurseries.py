"""Nurseries whose single error surfaces unwrapped at a public context manager's edge.

Trio nurseries are strict: anything raised inside them leaves as an ``ExceptionGroup``. A user
of ``open_client`` expects ``except RequestTimeout`` to work, so public context managers open
their nursery here, and a group holding exactly one exception is replaced by that exception.

An object that runs background tasks and can be closed from inside the block that uses it (a
client transport, which ``open_client(transport)`` closes on its way out) must not run those
tasks in the nursery around that block: cancelling them would cancel the rest of the block too.
:func:`run_task_nursery` gives it a nursery of its own, hosted in a task of the outer one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio

__all__ = ["open_unwrapping_nursery", "run_task_nursery"]


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


async def run_task_nursery(
    *, task_status: trio.TaskStatus[trio.Nursery] = trio.TASK_STATUS_IGNORED
) -> None:
    """Open a nursery, hand it over through ``task_status``, and keep it open until cancelled.

    ``tasks = await nursery.start(run_task_nursery)`` makes a nursery whose
    ``tasks.cancel_scope.cancel()`` stops the tasks started in it (and this host task) without
    touching the caller's scope. A task crashing in it crashes this host, so the error still
    reaches ``nursery`` and cancels its block, as it would have directly.
    """
    async with trio.open_nursery() as tasks:
        task_status.started(tasks)
        await trio.sleep_forever()


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    found: list[BaseException] = []
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            found.extend(_leaves(exc))
        else:
            found.append(exc)
    return found
