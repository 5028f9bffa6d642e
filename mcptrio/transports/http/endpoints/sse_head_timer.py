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
order, and the dict keeps it). When nothing is armed it stays awake one more delay, then ends:
a busy session arms again within that time, so its POSTs do not pay a task each, and an idle
session keeps no timer task (which would keep a dormant session awake: see
``runtime/on_demand_nursery.py``). The next stream armed starts it again, through
``start_task`` (the session's ``start_actor``); a POST answered before it would be armed never
starts it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import trio

from ....protocol.errors import ConnectionClosed
from .sse_stream import OutboundStream

__all__ = ["SseHeadTimer"]


class SseHeadTimer:
    """Fires ``on_activity`` of streams still unanswered ``delay`` seconds after being armed."""

    __slots__ = ("_armed", "_start_task", "delay", "running")

    def __init__(
        self, delay: float, start_task: Callable[[Callable[[], Awaitable[None]]], object]
    ) -> None:
        self.delay = delay
        self._start_task = start_task
        # Insertion-ordered, so the first one is the next due.
        self._armed: dict[OutboundStream, float] = {}
        #: Whether :meth:`run` is started and has not ended.
        self.running = False

    def arm(self, stream: OutboundStream) -> None:
        """Start ``stream``'s response in ``delay`` s unless its hook is cleared before
        (nothing, once the session has ended: its streams end with it)."""
        if not self.running:
            try:
                self._start_task(self.run)
            except ConnectionClosed:
                return
            self.running = True
        self._armed[stream] = trio.current_time() + self.delay

    def disarm(self, stream: OutboundStream) -> None:
        """``stream``'s POST no longer needs the timer (it is answered, or streaming)."""
        self._armed.pop(stream, None)

    async def run(self) -> None:
        """Fire streams as they fall due; end once nothing has been armed for one more delay
        (or when cancelled, with the session)."""
        armed = self._armed
        try:
            while True:
                if not armed:
                    await trio.sleep(self.delay)
                    if armed:
                        continue
                    # No checkpoint between this look and clearing ``running``: a stream armed
                    # after it finds the timer stopped, and its owner starts it again.
                    return
                stream, due = next(iter(armed.items()))
                if stream.on_activity is None:
                    del armed[stream]
                    continue
                if trio.current_time() < due:
                    await trio.sleep_until(due)
                    continue
                del armed[stream]
                stream.fire_activity()
        finally:
            self.running = False
