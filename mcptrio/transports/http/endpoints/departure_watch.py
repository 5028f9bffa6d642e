"""Watches for the client of a slow JSON answer leaving: :class:`DepartureWatch`.

A handshake-era POST answered as JSON waits in its own task for its handler's answer, and
disconnection is not cancellation in that era: the handler runs on when its client leaves. While
the POST waits, no one reads the connection, so the front end would not learn that the client
has gone until the answer is written, and the connection's slot (see
``engine/connection_slots``) would stay taken for the handler's whole run. A client could then
hold every slot with slow calls it abandoned.

So a POST still unanswered one to two ``delay`` after it was handed to its session asks the front
end to watch its connection (:meth:`HttpResponder.watch_for_departure
<mcptrio.transports.http.engine.exchange.HttpResponder.watch_for_departure>`): from then on,
the client leaving gives the slot back at once, while the handler runs on. Watching costs a
task, so the fast POSTs (nearly all) never pay for one: they cost a dict insertion and deletion.

The same goes for a POST whose request waits for an in-flight slot (its session is at
``max_in_flight``): it gives its slot back when its client leaves, and waits on, since it is not
cancelled either. What bounds how many such POSTs a client can leave behind is the session's
cap on waiting requests (``max_waiting``, as many as ``max_in_flight``; past it a POST is
answered 503 at once: see
:class:`~mcptrio.runtime.session.SessionBusy`).

One watch serves every session of an endpoint, in the sessions' nursery, so an idle session
costs nothing for it. Arming must cost a fast POST next to nothing (not even a clock read), so
the watch keeps two generations:
every ``delay`` it watches the POSTs armed before its previous tick (so each is watched between
one and two delays after it was armed) and ages the younger ones. With nothing armed it waits to
be woken by the next POST.
"""

from __future__ import annotations

import trio

from ..engine.exchange import HttpResponder

__all__ = ["DEPARTURE_WATCH_DELAY", "DepartureWatch"]

#: Seconds a JSON-mode POST may stay unanswered before its connection is watched (at most
#: twice that): as short as an SSE answer's head delay, so that a client opening POSTs it then
#: abandons faster than the watch looks cannot hold many slots (at 200 a second, 1 s held 200
#: to 400 of them). A watch costs the slow POST a task, nothing next to its 50 ms.
DEPARTURE_WATCH_DELAY = 0.05


class DepartureWatch:
    """Asks the front end to watch the connections of POSTs unanswered after ``delay`` s."""

    __slots__ = ("_due", "_idle", "_young", "delay")

    def __init__(self, delay: float = DEPARTURE_WATCH_DELAY) -> None:
        self.delay = delay
        # Armed since the last tick, and before it (dicts: insertion-ordered, O(1) removal).
        self._young: dict[HttpResponder, None] = {}
        self._due: dict[HttpResponder, None] = {}
        self._idle: trio.Event | None = None

    def arm(self, responder: HttpResponder) -> None:
        """Watch ``responder``'s connection in one to two delays, unless disarmed before."""
        self._young[responder] = None
        idle = self._idle
        if idle is not None:
            self._idle = None
            idle.set()

    def disarm(self, responder: HttpResponder) -> None:
        """``responder``'s POST is answered (or has turned into a stream, which is watched)."""
        if responder in self._young:
            del self._young[responder]
        else:
            self._due.pop(responder, None)

    async def run(self) -> None:
        """Start the watches as they fall due, until cancelled."""
        while True:
            await trio.sleep(self.delay)
            due = self._due
            self._due, self._young = self._young, {}
            for responder in due:
                responder.watch_for_departure()
            if not self._due and not self._young:
                idle = self._idle = trio.Event()
                await idle.wait()
