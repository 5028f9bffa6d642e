"""A handler's wait that only cancellation ends, with events a test waits on at both ends."""

from __future__ import annotations

from typing import NoReturn

import trio

__all__ = ["Waiter"]


class Waiter:
    """``entered`` is set when :meth:`wait_until_cancelled` starts waiting, ``cancelled`` when
    the wait is cancelled."""

    def __init__(self) -> None:
        self.entered = trio.Event()
        self.cancelled = trio.Event()

    async def wait_until_cancelled(self) -> NoReturn:
        """Wait until cancelled (``trio.Cancelled`` goes on, as always)."""
        self.entered.set()
        try:
            await trio.sleep_forever()
        finally:
            self.cancelled.set()
