"""Outgoing requests still waiting for their answer.

Each outgoing request has one :class:`PendingRequest`. The session's reader completes it when
the answer arrives, or fails it when the connection ends; progress notifications for its token
push its deadline back, but never past its hard maximum.

The waiting caller parks on the request itself (a :class:`~mcptrio.runtime.parking.
ParkingSpot`, no ``trio.Event``): one request has one waiter, and the answer is handed over with
the wake-up.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypedDict

import trio

from ..protocol.base import Result
from ..protocol.errors import McpError
from .parking import ParkingSpot

if TYPE_CHECKING:
    from .outbox import Outbox
    from .transport import Outgoing

__all__ = ["PendingRequest", "ProgressCallback", "RequestOptions"]

#: ``on_progress(progress, total, message)``; may be sync or async.
ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None] | None]


class RequestOptions(TypedDict, total=False):
    """The keywords of an outgoing request that a caller may pass on unchanged, declared once:
    ``timeout`` (restarted by each progress notification), ``max_total_timeout`` (a hard limit
    progress does not push back) and ``on_progress`` (see :meth:`Session.request
    <mcptrio.runtime.session.Session.request>`)."""

    timeout: float | None
    max_total_timeout: float | None
    on_progress: ProgressCallback | None


class PendingRequest(ParkingSpot):
    """The caller's side of one outgoing request."""

    __slots__ = (
        "_done",
        "error",
        "gave_up",
        "hard_deadline",
        "on_progress",
        "result",
        "scope",
        "timeout",
    )

    def __init__(
        self,
        timeout: float | None,
        max_total_timeout: float | None,
        on_progress: ProgressCallback | None,
    ) -> None:
        super().__init__()
        self._done = False
        #: Whether the caller stopped waiting (cancelled, or its deadline passed) before the
        #: answer came.
        self.gave_up = False
        self.result: Result | None = None
        self.error: McpError | None = None
        self.timeout = timeout
        self.on_progress = on_progress
        self.hard_deadline = math.inf
        # Most calls have no deadline: they skip the cancel scope altogether.
        self.scope: trio.CancelScope | None = None
        if timeout is not None or max_total_timeout is not None:
            now = trio.current_time()
            if max_total_timeout is not None:
                self.hard_deadline = now + max_total_timeout
            deadline = math.inf if timeout is None else now + timeout
            self.scope = trio.CancelScope(deadline=min(deadline, self.hard_deadline))

    def succeed(self, result: Result) -> None:
        self.result = result
        self._finish()

    def fail(self, error: McpError) -> None:
        if not self._done:
            self.error = error
            self._finish()

    def _finish(self) -> None:
        self._done = True
        self.wake()

    def cancelled(self) -> None:
        self.gave_up = True

    def progressed(self) -> None:
        """Progress arrived: restart the timeout, up to the hard maximum."""
        if self.timeout is not None and self.scope is not None:
            self.scope.deadline = min(trio.current_time() + self.timeout, self.hard_deadline)

    async def send_and_wait(self, outbox: Outbox, request: Outgoing) -> Any:
        """Send ``request`` through ``outbox`` and wait for the answer, both within the
        request's deadline (the caller handles expiry)."""
        scope = self.scope
        if scope is None:
            await self._send_and_park(outbox, request)
        else:
            with scope:
                await self._send_and_park(outbox, request)
        if self.error is not None:
            raise self.error
        return self.result

    async def _send_and_park(self, outbox: Outbox, request: Outgoing) -> None:
        # Cancelled (or timed out) while parked, the caller stops waiting: an answer arriving
        # later wakes no one.
        if await outbox.exchange(request):
            # The exchange checkpointed, and it usually delivered the answer as well.
            if not self._done:
                await self.park()
            return
        if not outbox.put_nowait(request):
            await outbox.put(request)
        if self._done:
            # Answered while it was handed over (the peer answered in this task): still a
            # checkpoint. The cancel check comes first: the answer is in hand, and a deadline
            # that passes during the schedule point need not take it away.
            await trio.lowlevel.checkpoint_if_cancelled()
            await trio.lowlevel.cancel_shielded_checkpoint()
        else:
            await self.park()

    @property
    def answered(self) -> bool:
        return self._done

    @property
    def timed_out(self) -> bool:
        # Even if answered: an answer that came at once, in the caller's own task, is not
        # returned past a deadline the caller's checkpoint found gone (a call with timeout=0
        # times out however the request is answered).
        return self.scope is not None and self.scope.cancelled_caught
