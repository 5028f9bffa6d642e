"""The live Streamable HTTP sessions of one endpoint, and the nursery they run in.

A session outlives any one HTTP request, so it cannot run in the task of the POST that created
it. The registry owns a nursery (opened by :meth:`SessionRegistry.run`, which the app's ``run``
calls), and each session's tasks run there (``Session.close`` ends it)::

    SessionRegistry.run()            sessions' nursery
    ├── reaper                       closes sessions idle past session_idle_timeout
    ├── session <id>                 while something runs in it: its nursery, request actors...
    ├── (session <id>, dormant)      no task at all
    └── shared session               the stateless era's one session: Session.run, for life

A handshake-era session is started *dormant* (``Session.start_dormant``): between requests it
holds no task, nursery or frame, only its objects. Its nursery is opened, in a task of the
registry's nursery, by the first task it needs (a request whose handler waits, a notifier, a
subscription, a live SSE answer's writer), and let go of once nothing runs in it (see
``runtime/on_demand_nursery.py``). A request answered at once in its POST's task, and a GET
stream (written by its own connection's task), need none.

A session ends when it is deleted, expires, or the registry stops (which closes every session
still live); then its id is forgotten (404 from then on) and so are its stored events, unless
it is kept in a shared store for another worker to adopt.

With ``max_sessions_per_client`` set, the sessions of each client address are counted too, so
that one client cannot take every one of ``max_sessions`` (sessions are cheap to open and live
until they idle out).
"""

from __future__ import annotations

import logging
import math
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass, field

import trio

from ....runtime.session import Session, SessionFactory
from ....stores.errors import StoreUnavailable
from ....stores.event_store import EventStore
from .departure_watch import DepartureWatch
from .http_session import HttpSession
from .security import HttpSecurity, Principal, may_use

__all__ = ["EndpointNotRunning", "SessionLimitReached", "SessionRegistry"]

log = logging.getLogger("mcptrio.http")


class SessionLimitReached(Exception):
    """``max_sessions`` sessions are live (or the client's ``max_sessions_per_client``); no new
    one can start now."""


class EndpointNotRunning(Exception):
    """The endpoint's ``run`` has not been started (or has stopped): no session can live."""


class _StartedOnce:
    """Hands ``started()`` on to a task status, then lets go of it.

    ``nursery.start`` gives its task a status that refers to a temporary nursery; a session
    keeps the status it was given for its whole life, and with it that nursery. This stand-in is
    all the session keeps.
    """

    __slots__ = ("_status",)

    def __init__(self, status: trio.TaskStatus[None]) -> None:
        self._status: trio.TaskStatus[None] | None = status

    def started(self, value: None = None) -> None:
        status, self._status = self._status, None
        if status is None:
            raise RuntimeError("called 'started' twice on the same task status")
        status.started(value)


def new_session_id(instance: str | None = None) -> str:
    """128 random bits, as 32 hex digits (visible ASCII, as the spec requires); after
    ``"<instance>."`` when several workers share the endpoint, so that the id names its owner
    (see :mod:`mcptrio.stores.session_directory`)."""
    token = secrets.token_hex(16)
    return f"{instance}.{token}" if instance else token


def _no_others() -> int:
    return 0


@dataclass(eq=False)
class SessionRegistry:
    """Live sessions by id; see the module docstring.

    ``make_transport`` makes the transport of a new session (given its id and principal);
    ``count_others`` counts the sessions that live elsewhere but share ``max_sessions``.
    """

    factory: SessionFactory
    security: HttpSecurity
    _: KW_ONLY
    event_store: EventStore | None
    make_transport: Callable[[str, Principal | None], HttpSession]
    count_others: Callable[[], int] = _no_others
    #: The instance name that starts this worker's session ids (several workers), if any.
    id_prefix: str | None = None
    #: Whether sessions are kept in a shared store (a worker that stops leaves them there).
    keeps_sessions: bool = False
    #: Called with each session :meth:`end` ends.
    on_ended: Callable[[HttpSession], None] | None = None
    sessions: dict[str, HttpSession] = field(default_factory=dict)
    _nursery: trio.Nursery | None = field(default=None, init=False)
    _shared: HttpSession | None = field(default=None, init=False)
    _shared_lock: trio.Lock = field(default_factory=trio.Lock, init=False)
    # With a per-client limit: each session's client address, and the sessions per address.
    _client_of: dict[str, str] = field(default_factory=dict, init=False)
    _per_client: dict[str, int] = field(default_factory=dict, init=False)
    #: Watches the connections of slow JSON answers (see departure_watch), for every session.
    departure_watch: DepartureWatch = field(default_factory=DepartureWatch, init=False)
    # What every dormant session awaits once it has ended: bound once, in __post_init__ (a
    # bound method made per session would be memory each dormant session keeps).
    _on_dormant_end: Callable[[Session], Awaitable[None]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._on_dormant_end = self._dormant_session_ended

    @property
    def running(self) -> bool:
        return self._nursery is not None

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Host sessions until cancelled; on the way out every session ends."""
        if self._nursery is not None:
            raise RuntimeError("this endpoint is already running")
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                nursery.start_soon(self._reap)
                nursery.start_soon(self.departure_watch.run)
                task_status.started()
                try:
                    await trio.sleep_forever()
                finally:
                    # Stopping: a dormant session has no task here to cancel, so each session
                    # is closed, and ends in a task of this (cancelled) nursery, as one that
                    # was running does.
                    for transport in list(self.sessions.values()):
                        transport.close()
        finally:
            self._nursery = None

    def live_count(self) -> int:
        return len(self.sessions) + self.count_others()

    def check_capacity(self) -> None:
        if self.live_count() >= self.security.max_sessions:
            raise SessionLimitReached

    async def create(self, principal: Principal | None, client: str | None = None) -> HttpSession:
        """A new session for ``client`` (its address, when known); raises
        :class:`SessionLimitReached` or :class:`EndpointNotRunning`."""
        nursery = self._nursery
        if nursery is None:
            raise EndpointNotRunning
        self.check_capacity()
        per_client = self.security.max_sessions_per_client
        if per_client is not None and client is not None:
            if self._per_client.get(client, 0) >= per_client:
                raise SessionLimitReached
        else:
            client = None
        session_id = new_session_id(self.id_prefix)
        if client is not None:
            self._client_of[session_id] = client
            self._per_client[client] = self._per_client.get(client, 0) + 1
        transport = self._transport(session_id, principal)
        self.sessions[session_id] = transport
        self._start_dormant(nursery, transport)
        return transport

    async def adopt(
        self,
        session_id: str,
        principal: Principal | None,
        restore: Callable[[Session], None],
    ) -> HttpSession:
        """Take up session ``session_id``, whose worker is gone, for ``principal``: a session
        that runs here from now on, given its state by ``restore`` before anything reaches it
        (see :mod:`.session_keeping`). Raises as :meth:`create` does, and what ``restore``
        raises (the session is ended then)."""
        nursery = self._nursery
        if nursery is None:
            raise EndpointNotRunning
        self.check_capacity()
        transport = self._transport(session_id, principal)
        self._start_dormant(nursery, transport)
        session = transport.session
        assert session is not None
        try:
            restore(session)
        except BaseException:
            transport.close()
            raise
        # Found by requests only now that it has its state.
        self.sessions[session_id] = transport
        return transport

    def _transport(self, session_id: str, principal: Principal | None) -> HttpSession:
        transport = self.make_transport(session_id, principal)
        session = transport.session = self.factory.session(transport)
        # A POST waiting for an in-flight slot outlives its client (disconnection is not
        # cancellation here), holding nothing of it: bounded (see departure_watch).
        session.max_waiting = session.max_in_flight
        return transport

    def end(self, transport: HttpSession) -> None:
        """End a session for good (its client deleted it, or it idled out): unlike a session
        ended by the endpoint stopping, no other worker takes it up."""
        transport.close()
        self.sessions.pop(transport.session_id, None)
        if self.on_ended is not None:
            self.on_ended(transport)

    def _forget_client(self, session_id: str) -> None:
        client = self._client_of.pop(session_id, None)
        if client is not None:
            left = self._per_client[client] - 1
            if left:
                self._per_client[client] = left
            else:
                del self._per_client[client]

    @property
    def shared(self) -> HttpSession | None:
        """The session :meth:`shared_session` started, if any (it may have ended since)."""
        return self._shared

    async def shared_session(self, make_transport: Callable[[], HttpSession]) -> HttpSession:
        """The one session the stateless era's requests run on, started on first use.

        It never shakes hands: its connection reads each request at the revision the request
        names. It has no id, is not counted against ``max_sessions`` and is never reaped; it
        ends with the endpoint.
        """
        shared = self._shared
        if shared is not None and not shared.is_ended:
            return shared
        async with self._shared_lock:
            shared = self._shared
            if shared is not None and not shared.is_ended:
                return shared
            nursery = self._nursery
            if nursery is None:
                raise EndpointNotRunning
            transport = make_transport()
            transport.session = self.factory.session(transport)
            await nursery.start(self._run_session, transport)
            self._shared = transport
            return transport

    def lookup(self, session_id: bytes, principal: Principal | None) -> HttpSession | None:
        """The live session ``session_id`` if ``principal`` may use it (else ``None``: 404).

        A session bound to a principal answers only that principal; to anyone else it does not
        exist, so that ids cannot be probed.
        """
        try:
            key = session_id.decode("ascii")
        except UnicodeDecodeError:
            return None
        transport = self.sessions.get(key)
        if transport is None or transport.is_ended:
            return None
        owner = transport.principal
        return transport if owner is None or may_use(principal, owner) else None

    def _start_dormant(self, nursery: trio.Nursery, transport: HttpSession) -> None:
        session = transport.session
        assert session is not None
        session.start_dormant(nursery, then=self._on_dormant_end)

    async def _run_session(
        self, transport: HttpSession, *, task_status: trio.TaskStatus[None]
    ) -> None:
        session = transport.session
        assert session is not None
        started = _StartedOnce(task_status)
        del task_status
        try:
            await session.run(task_status=started)
        finally:
            await self._session_ended(transport)

    async def _dormant_session_ended(self, session: Session) -> None:
        transport = session.transport
        assert isinstance(transport, HttpSession)
        await self._session_ended(transport)

    async def _session_ended(self, transport: HttpSession) -> None:
        """Forget a session that has ended, and its events (in the task that ended it)."""
        # Cancelled from outside (not closed: deleted, reaped, broken): the endpoint stops.
        stopping = trio.current_effective_deadline() == -math.inf
        if self.sessions.get(transport.session_id) is transport:
            del self.sessions[transport.session_id]
        self._forget_client(transport.session_id)
        with trio.CancelScope(shield=True):
            # The session closes its transport as it ends; this covers a cancel before it ran.
            await transport.aclose()
            # A session kept in the shared store outlives this worker's stop: another
            # worker takes it up, and its client may resume its streams there.
            kept = stopping and self.keeps_sessions
            if self.event_store is not None and not kept:
                try:
                    await self.event_store.forget_session(transport.session_id)
                except StoreUnavailable as exc:
                    # A shared store that is away (or closing, as the worker stops) keeps
                    # the session's events until their TTL: nothing is served from them.
                    log.info(
                        "session %s: its events stay until they expire (%s)",
                        transport.session_id,
                        exc,
                    )
        log.debug("session %s ended", transport.session_id)

    async def _reap(self) -> None:
        timeout = self.security.session_idle_timeout
        period = max(min(timeout / 4, 30.0), 0.01)
        while True:
            await trio.sleep(period)
            deadline = trio.current_time() - timeout
            for transport in list(self.sessions.values()):
                if transport.exchanges == 0 and transport.last_activity < deadline:
                    log.info("session %s idle for %.0f s: closing", transport.session_id, timeout)
                    self.end(transport)
