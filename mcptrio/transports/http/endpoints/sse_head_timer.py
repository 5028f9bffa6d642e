"""Starts the SSE response of a POST whose answer is slow.

A POST answered in SSE mode goes out as one whole ``text/event-stream`` body when its messages
are all there within a short delay, and as a live stream otherwise, so that a slow request gets
its head (and its 2025-11-25 priming event) soon. The POST's own task waits on its stream
(``Session.deliver`` handed the request to its lifecycle), so something else notices that the
delay has passed: one :class:`SseHeadTimer` per session does, for all of that session's POSTs.

Arming costs a dict insertion and disarming (the POST is done) a deletion: a finished POST's
stream is let go at once, not held until its delay has passed (in JSON mode that is a second's
worth of streams, thousands, kept alive for the garbage collector to walk). The timer's task
sleeps until the oldest armed stream is due (all delays are equal, so arrival order is deadline
order, and the dict keeps it). When nothing is armed it stays awake one more delay before it
waits to be woken: a busy session arms again within that time, so its POSTs do not pay a task
switch each to wake an idle timer.
"""

from __future__ import annotations

import trio

from .sse_stream import OutboundStream

__all__ = ["SseHeadTimer"]


class SseHeadTimer:
    """Fires ``on_activity`` of streams still unanswered ``delay`` seconds after being armed."""

    __slots__ = ("_armed", "_idle", "delay", "running")

    def __init__(self, delay: float) -> None:
        self.delay = delay
        # Insertion-ordered, so the first one is the next due.
        self._armed: dict[OutboundStream, float] = {}
        self._idle: trio.Event | None = None
        #: Whether :meth:`run` has been started (by whoever owns the timer).
        self.running = False

    def arm(self, stream: OutboundStream) -> None:
        """Start ``stream``'s response in ``delay`` s unless its hook is cleared before."""
        self._armed[stream] = trio.current_time() + self.delay
        idle = self._idle
        if idle is not None:
            self._idle = None
            idle.set()

    def disarm(self, stream: OutboundStream) -> None:
        """``stream``'s POST no longer needs the timer (it is answered, or streaming)."""
        self._armed.pop(stream, None)

    async def run(self) -> None:
        """Fire streams as they fall due, until cancelled (with the session)."""
        armed = self._armed
        while True:
            if not armed:
                await trio.sleep(self.delay)
                if armed:
                    continue
                idle = self._idle = trio.Event()
                await idle.wait()
                continue
            stream, due = next(iter(armed.items()))
            if stream.on_activity is None:
                del armed[stream]
                continue
            if trio.current_time() < due:
                await trio.sleep_until(due)
                continue
            del armed[stream]
            stream.fire_activity()
