"""What the mcptrio and floor workers share: Trio's primitives for the harness, and ``trio.run``.

The counterpart of ``drive_anyio.py`` (the SDK's and FastMCP's): neither imports a library.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import trio

from .harness import Backend


async def _read_line() -> str:
    return await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)


BACKEND = Backend(
    name="trio",
    open_nursery=trio.open_nursery,
    sleep=trio.sleep,
    move_on_after=trio.move_on_after,
    read_line=_read_line,
)


def run(main: Callable[[], object]) -> None:
    trio.run(main)  # type: ignore[arg-type]
