"""The client's own listen stream (2026-07-28): what ``subscribe()``, ``list_changes()`` and the
notification callbacks read in the stateless era.

In the handshake era a server sends list changes unasked and resource updates after
``resources/subscribe``. In the stateless era it sends them only on a ``subscriptions/listen``
stream, and only what the stream asked for. So the client keeps one listen stream of its own,
asking for exactly what is wanted now:

- the list kinds a ``list_changes()`` block, or an ``on_list_changed`` callback, wants (of those
  the server declares ``listChanged`` for);
- the URIs of the open ``subscribe()`` blocks.

Nothing wanted, no stream: a server pays for each stream it holds open, and so may the user.

:class:`ListenActor` is the actor that keeps the stream matched to the wishes. Wishes are
counted (several blocks on one URI are one wish); a block waits in :meth:`ListenActor.want`
until a stream asking for its wish is acknowledged. When the wishes change, the actor opens the
new stream, waits for its acknowledgement, and only then leaves the old one, so no notification
falls between the two (one may come on both for a moment: the streams merge such duplicates,
and "look again" twice costs a second look at most). Changes that arrive while a stream is being
opened are taken together in the next one.

A stream that fails (an error answer, no acknowledgement within ``Timeouts.listen``) fails the
wishes it was opened for. The actor then does not retry on its own: it waits until a block
asks anew (a wish added, even one already counted), so a server that refuses listen streams is
not asked again in a loop. A stream the server ends (``SubscriptionsListenResult``, for example
at shutdown), or whose transport closes, ends the ``subscribe()`` and ``list_changes()``
iterations as the end of the connection does, and the callbacks hear nothing more, until a
block asks anew.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable

import trio

from ..protocol.errors import ConnectionClosed, McpError
from ..protocol.types import SubscriptionFilter
from ..runtime.session import Session
from .listen import ListenRecord, describe, kinds_of, listen_filter, run_listen, uris_of
from .notifications import ListKind, NotificationRouter

__all__ = ["ListenActor"]

log = logging.getLogger("mcptrio.client")

_NOTHING = SubscriptionFilter()


class ListenActor:
    """Keeps the client's own listen stream matched to what is wanted (see the module docs).

    Start :meth:`run` in a nursery the client owns (the session's); wish with :meth:`want` and
    :meth:`unwant`.
    """

    def __init__(self, session: Session, router: NotificationRouter, *, timeout: float) -> None:
        self._session = session
        self._router = router
        self._timeout = timeout
        self._kinds: Counter[ListKind] = Counter()
        self._uris: Counter[str] = Counter()
        #: The stream in use (acknowledged), if any.
        self._current: ListenRecord | None = None
        #: The filter of the last stream that failed or ended: not reopened until asked anew.
        self._given_up: SubscriptionFilter | None = None
        #: Each finished attempt: the filter it asked for and its error (``None``: it worked).
        self._rounds = 0
        self._last: tuple[SubscriptionFilter, McpError | None] = (_NOTHING, None)
        self._wishes_changed = trio.lowlevel.ParkingLot()
        self._round_done = trio.lowlevel.ParkingLot()
        #: Set when the actor has stopped (the session ended): a wish can no longer be met.
        self._stopped = False

    # ---------------------------------------------------------------- wishes

    @property
    def asked(self) -> SubscriptionFilter:
        """What the stream in use asks for (an empty filter when there is none)."""
        return _NOTHING if self._current is None else self._current.asked

    async def want(
        self, kinds: Iterable[ListKind] = (), uris: Iterable[str] = ()
    ) -> SubscriptionFilter:
        """Add a wish and wait until a stream asking for it is acknowledged; return what that
        stream's server honours (it may leave out what it does not support).

        Raises the error of the stream opened for it (the server's error answer,
        :class:`~mcptrio.protocol.errors.RequestTimeout` without an acknowledgement): the wish
        is then withdrawn, as it is when the caller is cancelled while waiting.
        """
        kinds, uris = tuple(kinds), tuple(uris)
        self._kinds.update(kinds)
        self._uris.update(uris)
        self._given_up = None  # asked anew: worth another try
        self._wishes_changed.unpark_all()
        try:
            while True:
                if self._stopped:
                    raise ConnectionClosed("The connection closed: no listen stream can open")
                current = self._current
                if current is not None and _covers(current.asked, kinds, uris):
                    assert current.honoured is not None
                    return current.honoured
                seen = self._rounds
                while self._rounds == seen and not self._stopped:
                    await self._round_done.park()
                tried, error = self._last
                if error is not None and _covers(tried, kinds, uris):
                    raise error
        except BaseException:
            self.unwant(kinds, uris)
            raise

    def unwant(self, kinds: Iterable[ListKind] = (), uris: Iterable[str] = ()) -> None:
        """Withdraw a wish (never waits: the actor changes the stream in the background)."""
        self._kinds.subtract(kinds)
        self._uris.subtract(uris)
        self._kinds = +self._kinds  # drops the counts that reached zero
        self._uris = +self._uris
        self._wishes_changed.unpark_all()

    def _wanted(self) -> SubscriptionFilter:
        return listen_filter(self._kinds, self._uris)

    # ---------------------------------------------------------------- the actor

    async def run(self) -> None:
        """Open, replace and close the stream as the wishes change, until cancelled."""
        async with trio.open_nursery() as nursery:
            try:
                while True:
                    wanted = self._wanted()
                    if wanted == self.asked or wanted == self._given_up:
                        await self._wishes_changed.park()
                        continue
                    await self._switch(nursery, wanted)
            finally:
                self._stopped = True
                self._round_done.unpark_all()
                if self._current is not None:
                    self._current.close()

    async def _switch(self, nursery: trio.Nursery, wanted: SubscriptionFilter) -> None:
        old = self._current
        if wanted == _NOTHING:
            self._current = None
            if old is not None:
                old.close()
            self._finish_round(wanted, None)
            return
        record = ListenRecord(wanted, on_end=self._ended)
        nursery.start_soon(run_listen, self._session, self._router, record)
        try:
            await record.wait_acknowledged(self._timeout)
        except McpError as exc:
            log.warning("could not listen for %s: %s", describe(wanted), exc)
            self._given_up = wanted
            self._finish_round(wanted, exc)
            return
        self._current = record
        # Only now that the new stream is acknowledged is the old one left: nothing falls
        # between them.
        if old is not None:
            old.close()
        self._finish_round(wanted, None)

    def _finish_round(self, tried: SubscriptionFilter, error: McpError | None) -> None:
        self._last = (tried, error)
        self._rounds += 1
        self._round_done.unpark_all()

    def _ended(self, record: ListenRecord) -> None:
        """A stream's request ended: if it was the one in use, what it fed ends too."""
        if record is not self._current or record.ended == "client":
            return
        self._current = None
        self._given_up = record.asked
        log.info(
            "the server's listen stream for %s ended (%s)", describe(record.asked), record.ended
        )
        self._router.end_listened_streams()
        self._wishes_changed.unpark_all()


def _covers(asked: SubscriptionFilter, kinds: Iterable[ListKind], uris: Iterable[str]) -> bool:
    return kinds_of(asked).issuperset(kinds) and uris_of(asked).issuperset(uris)
