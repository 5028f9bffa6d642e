"""How the HTTP client transports run their POSTs: each in a task, a bounded number at once.

``send`` must not wait for a response (a slow one would hold up the session's writer), so both
HTTP client transports POST every outgoing frame from a task of their own nursery (but for a
request whose own task carries it, see :meth:`PostScheduler.hold_nowait`), under two rules:

- backpressure: at most ``max_concurrent_posts`` POSTs run at once, and
  :meth:`PostScheduler.schedule` waits for a free slot beyond that
  (:meth:`PostScheduler.schedule_nowait`, the session's direct path, declines instead);
- ordering: POSTs run concurrently, so frames sent back to back may reach the server in either
  order, as with any HTTP client. One ordering matters to servers and is kept: every frame
  scheduled after ``notifications/initialized`` waits until that notification's POST has been
  answered (a server may refuse the requests of a session it has not seen initialized).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import trio

from .messages import OutgoingInfo

__all__ = ["PostFrame", "PostScheduler"]

#: POSTs one outgoing frame and delivers (or fails) what its response brings.
PostFrame = Callable[[bytes, OutgoingInfo], Awaitable[None]]


class PostScheduler:
    """Runs ``post`` for each scheduled frame in ``nursery``, under the rules above."""

    __slots__ = ("_gate", "_nursery", "_post", "_slots")

    def __init__(
        self, nursery: trio.Nursery, post: PostFrame, *, max_concurrent_posts: int
    ) -> None:
        self._nursery = nursery
        self._post = post
        self._slots = trio.Semaphore(max_concurrent_posts)
        #: Set once the latest ``notifications/initialized`` POST was answered.
        self._gate: trio.Event | None = None

    async def schedule(self, data: bytes, info: OutgoingInfo) -> None:
        """Start the POST of ``data`` (described by ``info``); waits only for a free slot.

        Nothing checkpoints after the task is started, so what the caller does right after
        this returns happens before the POST begins.
        """
        await self._slots.acquire()
        if self._nursery.cancel_scope.cancel_called:
            # The transport closed while this waited (even a free slot checkpoints): its nursery
            # takes no more tasks, and the session's writer ends on this error.
            self._slots.release()
            raise trio.ClosedResourceError("The transport is closed")
        self._start(data, info)

    def schedule_nowait(self, data: bytes, info: OutgoingInfo) -> bool:
        """:meth:`schedule` without waiting or checkpointing: ``False`` when no slot is free
        (or the transport closed), and nothing was started."""
        if self._nursery.cancel_scope.cancel_called:
            return False
        try:
            self._slots.acquire_nowait()
        except trio.WouldBlock:
            return False
        self._start(data, info)
        return True

    def hold_nowait(self) -> bool:
        """Take a slot for a POST its caller runs itself, without waiting or checkpointing:
        ``False`` when none is free, the transport closed, or the frames scheduled so far wait
        for ``notifications/initialized`` (a POST run now would overtake them). The caller
        gives the slot back with :meth:`release`."""
        gate = self._gate
        if self._nursery.cancel_scope.cancel_called or (gate is not None and not gate.is_set()):
            return False
        try:
            self._slots.acquire_nowait()
        except trio.WouldBlock:
            return False
        return True

    def release(self) -> None:
        """Give back a slot taken with :meth:`hold_nowait`."""
        self._slots.release()

    def _start(self, data: bytes, info: OutgoingInfo) -> None:
        wait_for = self._gate
        opens_gate: trio.Event | None = None
        if info.method == "notifications/initialized":
            opens_gate = self._gate = trio.Event()
        self._nursery.start_soon(self._run, data, info, wait_for, opens_gate)

    async def _run(
        self,
        data: bytes,
        info: OutgoingInfo,
        wait_for: trio.Event | None,
        opens_gate: trio.Event | None,
    ) -> None:
        try:
            if wait_for is not None and not wait_for.is_set():
                await wait_for.wait()
            await self._post(data, info)
        finally:
            self._slots.release()
            if opens_gate is not None:
                opens_gate.set()
