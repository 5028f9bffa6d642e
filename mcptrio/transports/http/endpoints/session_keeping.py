"""Handshake-era sessions kept in the shared store, and taken up when their worker is gone.

With several workers (``mcptrio run --workers N --redis URL``), a session is an actor on the
worker that answered its ``initialize``, and its id names that worker (see
:mod:`mcptrio.stores.session_directory`). When that worker dies or restarts, the actor is gone;
the most used clients never initialize again after a 404, so instead another worker *adopts*
the session: same id, same negotiated state, for the same principal.

:class:`SessionKeeping` does both halves for one endpoint:

- *keeping*: a session's snapshot (what :class:`SessionSnapshotter` makes of it: revision,
  client info and capabilities, log level, subscriptions) is written to its record
  (:mod:`mcptrio.stores.session_records`) after its ``initialize`` and after each request that
  may change it, by one writer task, in the background; the records of the live sessions are
  refreshed every :attr:`SessionKeeping.refresh_period` seconds and live
  ``session_idle_timeout`` seconds past that. A session its client deletes, or that idles out,
  takes its record with it; one ended by this worker stopping leaves it for another;
- *adopting* (:meth:`SessionKeeping.route`): a request naming a session whose owner is not alive
  is served by the worker that holds the record's claim, or, when that one is gone too, by this
  worker, which claims it (a compare-and-set: one worker wins, the others forward to it),
  starts a fresh session with that id and restores the snapshot into it before anything reaches
  it. A session bound to a principal is adopted only for that principal (subject and issuer);
  for anyone else, and for an id never issued (no record), the answer is 404 as before.

Nothing in flight is carried over: a request that was running on the dead worker is never run
again (its client saw its connection drop: the outcome is unknown to it), and a resumed stream
replays only what the event store kept.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import partial
from typing import Final, Protocol

import trio

from ....runtime.session import Session
from ....stores.errors import StoreUnavailable
from ....stores.session_directory import SessionDirectory
from ....stores.session_records import SessionRecord, SessionRecords
from .envelope_peek import Peek
from .http_session import HttpSession
from .security import Principal
from .session_registry import SessionRegistry

__all__ = ["SessionKeeper", "SessionKeeping", "SessionSnapshotter"]

log = logging.getLogger("mcptrio.http.sessions")

#: The longest time between two refreshes of the live sessions' records, in seconds.
MAX_REFRESH_PERIOD: Final = 60.0
#: Seconds to wait before writing again after the store failed.
_RETRY_AFTER: Final = 1.0
#: Reads of a record before giving up on a session claimed and released under it meanwhile.
_CLAIM_ROUNDS: Final = 3


class SessionSnapshotter(Protocol):
    """Makes a session's state into bytes and back (the server layer's
    :class:`~mcptrio.server.session_snapshot.SessionSnapshots`)."""

    @property
    def saved_after(self) -> frozenset[str]:
        """The methods after which a session's snapshot may have changed."""
        ...

    def export(self, session: Session) -> bytes | None:
        """The snapshot of ``session`` (``None`` before its handshake completed)."""
        ...

    def restore(self, session: Session, snapshot: bytes) -> None:
        """Put ``snapshot`` into ``session`` (running, nothing read yet); ``ValueError`` if it
        cannot be taken."""
        ...


@dataclass(frozen=True, slots=True)
class SessionKeeper:
    """What an endpoint keeps its sessions with: the store of their records and the server's
    snapshots (``McpHttpApp(session_keeper=...)``; :mod:`mcptrio.server.scale_out` makes one)."""

    records: SessionRecords
    snapshots: SessionSnapshotter


def _bound_to(record: SessionRecord, principal: Principal | None) -> bool:
    """Whether ``principal`` may take up the session of ``record`` (as ``may_use`` says, with
    the issuer too when the record names one)."""
    if record.subject is None:
        return True
    if principal is None or principal.subject != record.subject:
        return False
    return record.issuer is None or getattr(principal, "issuer", None) == record.issuer


class SessionKeeping:
    """Keeps ``registry``'s sessions in ``keeper``'s records and adopts orphans (module
    docstring); ``directory`` says which workers are alive. With ``adopt`` false the records
    are neither written nor read: a gone worker's sessions are 404. :meth:`run` must run."""

    def __init__(
        self,
        keeper: SessionKeeper,
        registry: SessionRegistry,
        directory: SessionDirectory,
        *,
        adopt: bool = True,
    ) -> None:
        self.records = keeper.records
        self.snapshots = keeper.snapshots
        self.registry = registry
        self.directory = directory
        self.adopt = adopt
        #: Seconds a record lives past its last write or refresh.
        self.ttl = registry.security.session_idle_timeout
        self.refresh_period = min(self.ttl / 4, MAX_REFRESH_PERIOD)
        self._methods = frozenset({"initialize", *keeper.snapshots.saved_after})
        self._dirty: dict[str, HttpSession] = {}
        self._ended: set[str] = set()
        self._wake = trio.Event()
        self._adopting: dict[str, trio.Event] = {}
        #: Sessions this worker has adopted since it started.
        self.adopted = 0
        if adopt:
            registry.keeps_sessions = True
            registry.on_ended = self.ended

    @property
    def instance(self) -> str:
        return self.directory.instance

    # ------------------------------------------------------------------ keeping

    def state_changed(self, transport: HttpSession, routing: Peek) -> None:
        """A POST of ``transport`` was answered: write its record if it may have changed."""
        message = routing.message
        if routing.batch or (message is not None and message.method in self._methods):
            self._dirty[transport.session_id] = transport
            self._wake.set()

    def ended(self, transport: HttpSession) -> None:
        """``transport``'s session ended for good: its record goes."""
        self._dirty.pop(transport.session_id, None)
        self._ended.add(transport.session_id)
        self._wake.set()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Write, refresh and delete records until cancelled."""
        task_status.started()
        if not self.adopt:
            await trio.sleep_forever()
        next_refresh = trio.current_time() + self.refresh_period
        while True:
            with trio.move_on_at(next_refresh):
                await self._wake.wait()
            self._wake = trio.Event()
            try:
                await self._write()
                if trio.current_time() >= next_refresh:
                    await self.records.refresh(list(self.registry.sessions), self.ttl)
                    next_refresh = trio.current_time() + self.refresh_period
            except StoreUnavailable as exc:
                log.warning("session records not written now (%s); trying again", exc)
                await trio.sleep(_RETRY_AFTER)
                self._wake.set()

    async def _write(self) -> None:
        while self._ended:
            session_id = self._ended.pop()
            try:
                await self.records.forget(session_id, self.instance)
            except StoreUnavailable:
                self._ended.add(session_id)
                raise
        while self._dirty:
            session_id, transport = self._dirty.popitem()
            try:
                await self._save(transport)
            except StoreUnavailable:
                self._dirty.setdefault(session_id, transport)
                raise

    async def _save(self, transport: HttpSession) -> None:
        session = transport.session
        if session is None or transport.is_ended:
            return
        snapshot = self.snapshots.export(session)
        if snapshot is None:
            return
        principal = transport.principal
        record = SessionRecord(
            snapshot,
            self.instance,
            None if principal is None else principal.subject,
            None if principal is None else getattr(principal, "issuer", None),
        )
        if not await self.records.save(transport.session_id, record, self.ttl):
            # Another worker adopted it while this one could not reach the store: the
            # client is served there now, and this copy would only diverge.
            log.warning(
                "session %s was adopted by another worker: ending it here", transport.session_id
            )
            transport.close()
            if self.registry.sessions.get(transport.session_id) is transport:
                del self.registry.sessions[transport.session_id]

    # ------------------------------------------------------------------ adopting

    async def route(self, session_id: str, owner: str, principal: Principal | None) -> str | None:
        """The worker to forward a request for ``session_id`` (whose id names ``owner``, not
        this worker) to, or ``None`` to serve it here: adopted, or answered 404. Raises
        :class:`~mcptrio.stores.errors.StoreUnavailable` when the store fails, and what
        :meth:`SessionRegistry.adopt` raises."""
        if not self.adopt:
            return owner
        registry = self.registry
        if session_id in registry.sessions:
            return None
        if await self.directory.is_alive(owner):
            return owner
        for _ in range(_CLAIM_ROUNDS):
            adopting = self._adopting.get(session_id)
            if adopting is not None:
                await adopting.wait()
                if session_id in registry.sessions:
                    return None
                continue
            record = await self.records.load(session_id)
            if record is None or not _bound_to(record, principal):
                return None
            holder = record.owner
            if holder != self.instance:
                if holder != owner and await self.directory.is_alive(holder):
                    return holder
                if not await self.records.claim(session_id, holder, self.instance, self.ttl):
                    continue  # Another worker claimed it first: read who.
            if session_id in registry.sessions:
                return None
            if session_id in self._adopting:
                # Another request of this worker began adopting it while this one read the
                # record (which then named this worker): wait for that adoption, above.
                continue
            await self._take_up(session_id, record, principal)
            return None
        return None

    async def _take_up(
        self, session_id: str, record: SessionRecord, principal: Principal | None
    ) -> None:
        done = self._adopting[session_id] = trio.Event()
        try:
            bound = principal if record.subject is not None else None
            restore = partial(self.snapshots.restore, snapshot=record.state)
            try:
                await self.registry.adopt(session_id, bound, restore)
            except ValueError as exc:
                log.warning("session %s cannot be adopted: %s", session_id, exc)
                return
            self.adopted += 1
            log.info("adopted session %s (its worker %s is gone)", session_id, record.owner)
        finally:
            del self._adopting[session_id]
            done.set()
