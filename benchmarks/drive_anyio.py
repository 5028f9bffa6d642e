"""What the SDK and FastMCP workers share: anyio's primitives over asyncio, and the server env.

Both libraries run under ``anyio.run`` with its default backend (asyncio, no uvloop), which is
also what their own ``run()`` uses for a stdio server.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, cast

import anyio
import anyio.to_thread

from . import REPO_ROOT
from .harness import Backend


async def _read_line() -> str:
    return await anyio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)


BACKEND = Backend(
    name="asyncio",
    # anyio's task group and cancel scope have the shape the harness uses (start_soon,
    # cancelled_caught), without subclassing the typing ABCs it names them by.
    open_nursery=cast(Any, anyio.create_task_group),
    sleep=anyio.sleep,
    move_on_after=cast(Any, anyio.move_on_after),
    read_line=_read_line,
)


def run(main: Callable[[], object]) -> None:
    anyio.run(main)  # type: ignore[arg-type]


def server_env() -> dict[str, str]:
    """The stdio server's environment: the SDK's stdio client passes on only an allow-list."""
    pythonpath = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH")) if p)
    return {"PYTHONPATH": pythonpath}
