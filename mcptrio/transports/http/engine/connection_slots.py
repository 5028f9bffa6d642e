"""The built-in server's connection slots: who may hold one, and who gives one up.

A server has ``max_connections`` slots, and at most ``max_connections_per_client`` of them per
client address when that is set. Holding a slot costs a socket and a task; what matters is that
one client cannot hold them all while doing nothing, and that a client turned away is told so.

Theory of operation
-------------------
A connection is **waiting** while it waits on its client for a request: before and during a
request head (a new or keep-alive connection), or while it carries a stream the handler
declared it may cut (a Streamable HTTP GET stream, which the client reopens, with
``Last-Event-ID`` if it wants what it missed; a POST stream that only waits on the server and
that its client can take up again, such as a ``tasks/result`` long poll or a stateless-era
listen stream). Every other moment it is **busy**: a request is being read, handled or
answered.

When a client connects and no slot is free, the connection that has been waiting longest is
**evicted**: its scope is cancelled and it is closed at once, with no response and no lingering
(an idle keep-alive connection may be closed at any time, RFC 9112 section 9.6; a client still
sending its head after everyone else has been served is the one to turn away). A client at its
own limit evicts its own oldest waiting connection instead. So an attacker who opens sockets and
sends nothing, or re-opens them each time a timeout closes them, or holds GET streams, cannot
starve a client that sends a request: that client is busy from its first bytes on and is never
chosen, and it always finds a slot to take from a waiting connection.

When every slot is busy (or the client's are) there is nothing to evict: the new connection is
answered **503** with ``Retry-After`` and closed, never left waiting in the listen backlog. At
most :data:`MAX_REFUSING` such answers are written at once; past that, further connections are
closed without one.

An evicted connection keeps its slot until its task has ended (a moment), and admission counts
slots being given back, so no more than ``max_connections`` connections are ever served at once.

A server that stops gracefully **drains** its slots (:meth:`ConnectionSlots.drain`): every
connection waiting on a stream is evicted at once (its client reopens it elsewhere); while
draining, no response offers keep-alive, so a busy connection ends once its request is answered.
A connection waiting for a request head (an idle keep-alive one, or one just accepted) is *not*
closed under its client: a request may be on its way, and a client that sees the connection end
after writing it cannot tell whether it ran. Such a connection serves the request that comes
(answered with ``Connection: close``), or ends at its own deadline (``keep_alive_timeout``),
which a client that expires idle connections sooner never races (see
``docs/explanation/calls-run-once.md``).
"""

from __future__ import annotations

from typing import Protocol

import trio

__all__ = ["MAX_REFUSING", "ConnectionSlots", "Evictable"]

#: How many 503 answers to connections past the limit are written at once.
MAX_REFUSING = 64


class Evictable(Protocol):
    """A connection, as the slots see it."""

    def evict(self) -> None:
        """Close at once: the slot is needed (the connection's task then releases it)."""
        ...


class ConnectionSlots:
    """The slots of one server; see the module docstring. Not thread-safe (trio only)."""

    __slots__ = (
        "_between_requests",
        "_by_client",
        "_evicted",
        "_per_client",
        "_waiting",
        "active",
        "draining",
        "evictions",
        "limit",
        "refusals",
        "refusing",
        "stopping",
    )

    def __init__(self, limit: int, per_client: int | None = None) -> None:
        if limit < 1:
            raise ValueError("max_connections must be at least 1")
        if per_client is not None and per_client < 1:
            raise ValueError("max_connections_per_client must be at least 1 (or None)")
        self.limit = limit
        self._per_client = per_client
        #: Connections holding a slot (evicted ones included until they have ended).
        self.active = 0
        # Connections per client address (only counted when there is a per-client limit).
        self._by_client: dict[str, int] = {}
        # The waiting connections, oldest first (a dict keeps insertion order), with their
        # client address.
        self._waiting: dict[Evictable, str | None] = {}
        # Those of them waiting for a request head (not on a stream): a drain leaves them be.
        self._between_requests: set[Evictable] = set()
        # Connections told to go that have not released their slot yet, with their client.
        self._evicted: dict[Evictable, str | None] = {}
        #: 503 answers being written now.
        self.refusing = 0
        #: Connections evicted, and connections refused, since the server started.
        self.evictions = 0
        self.refusals = 0
        #: Whether the server is stopping (see :meth:`drain`).
        self.draining = False
        #: Set by :meth:`drain`: what a connection that outlives its request (a WebSocket)
        #: waits on to end.
        self.stopping = trio.Event()

    def admit(self, client: str | None) -> bool:
        """Take a slot for a new connection from ``client``, evicting a waiting one if need be;
        ``False`` if none can be had (answer 503). A ``True`` must be paired with
        :meth:`release` when the connection ends."""
        per_client = self._per_client
        if per_client is not None and client is not None:
            held = self._by_client.get(client, 0) - self._evicted_of(client)
            if held >= per_client and not self._evict_oldest(client):
                self.refusals += 1
                return False
        if self.active - len(self._evicted) >= self.limit and not self._evict_oldest(None):
            self.refusals += 1
            return False
        self.active += 1
        if per_client is not None and client is not None:
            self._by_client[client] = self._by_client.get(client, 0) + 1
        return True

    def release(self, connection: Evictable | None, client: str | None) -> None:
        """``connection`` has ended (or never started: ``None``): its slot is free."""
        if connection is not None:
            self._waiting.pop(connection, None)
            self._between_requests.discard(connection)
            self._evicted.pop(connection, None)
        self.active -= 1
        if self._per_client is not None and client is not None:
            left = self._by_client[client] - 1
            if left:
                self._by_client[client] = left
            else:
                del self._by_client[client]

    def waiting(
        self, connection: Evictable, client: str | None, *, for_request: bool = False
    ) -> None:
        """``connection`` waits on its client (see the module docstring): it may be evicted.
        Waiting on a stream (not ``for_request``), it is evicted at once when draining."""
        self._waiting[connection] = client
        if for_request:
            self._between_requests.add(connection)
        elif self.draining:
            self._evict(connection)

    def drain(self) -> None:
        """The server stops: evict every connection waiting on a stream now, and every stream
        that waits later; the others end once their request is answered (without keep-alive)
        or at their own deadline (see the module docstring)."""
        self.draining = True
        self.stopping.set()
        for connection in list(self._waiting):
            if connection not in self._between_requests:
                self._evict(connection)

    def busy(self, connection: Evictable) -> None:
        """``connection`` is serving a request: it keeps its slot."""
        self._waiting.pop(connection, None)
        self._between_requests.discard(connection)

    def _evict_oldest(self, client: str | None) -> bool:
        """Evict the longest-waiting connection (of ``client`` only, if given)."""
        waiting = self._waiting
        victim: Evictable | None = None
        if client is None:
            victim = next(iter(waiting), None)
        else:
            victim = next((c for c, owner in waiting.items() if owner == client), None)
        if victim is None:
            return False
        self._evict(victim)
        return True

    def _evict(self, victim: Evictable) -> None:
        self._between_requests.discard(victim)
        self._evicted[victim] = self._waiting.pop(victim)
        self.evictions += 1
        victim.evict()

    def _evicted_of(self, client: str) -> int:
        if not self._evicted:
            return 0
        return sum(1 for owner in self._evicted.values() if owner == client)
