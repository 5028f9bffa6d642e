"""Forwarding an HTTP exchange to the worker whose session it names, and back.

A handshake-era session is an actor on the worker that handled its ``initialize`` (its
*owner*); its id names that worker (:func:`~mcptrio.stores.session_directory.instance_of`).
Behind a load balancer that spreads requests without stickiness, a POST, GET or DELETE for the
session can land on any worker. That worker forwards the request, as it arrived, to the owner's
mailbox and writes the response back on the connection the request came in on, piece by piece
as the owner writes it: a JSON answer, or an SSE stream with its progress notifications and
server-to-client requests. The owner serves the forwarded request through its own endpoint,
exactly as a local one (:mod:`.relayed_exchange`), so every rule of the endpoint holds and no
session state is copied. ::

    client ──POST──▶ worker B (forwarder)             worker A (owner)
                     Request ──▶ mailbox:A ──▶ relay reader ──▶ endpoint ──▶ Session actor
    client ◀──────── Head/Chunk/End ◀── mailbox:B ◀── RelayedResponder ◀──┘

What can go wrong, and what the client sees:

- the owner is not in the directory (it died, or the id names no live worker): another worker
  adopts the session when sessions are kept in the store (:mod:`..endpoints.session_keeping`);
  else 404, as for any unknown session, and the client starts a new session (the spec's rule);
- the owner dies while the exchange is open: noticed within
  :data:`~mcptrio.stores.session_directory.LIVENESS_TTL` plus :data:`LIVENESS_CHECK` seconds;
  the connection is closed (the request's outcome is unknown: it is never run again), or,
  without adoption, 404 if nothing was sent yet;
- Redis is unreachable: 503 with ``Retry-After`` if nothing was sent yet, else the connection
  is closed; never a wait without a deadline;
- the client is slower than the owner: at most :data:`MAX_FRAMES` messages or
  :data:`MAX_BYTES` bytes wait for it here, past which the exchange is dropped (the owner is
  told, the connection closed; an SSE client resumes from the event store). A slow client slows
  only itself, never the mailbox every other exchange shares;
- the client leaves: the owner is told (:class:`~.messages.Gone`) and ends the exchange as its
  own front end would have (in the handshake era the request runs on: disconnection is not
  cancellation, and what it sends waits in the event store for a resuming GET);
- the owner stops gracefully (a rolling restart): once its own connections have drained,
  :meth:`SessionRelay.stop_serving` declines every request forwarded to it from then on
  (:class:`~.messages.Declined`: nothing of it ran), lets those it serves finish, leaves the
  directory, and goes on declining for :data:`LEAVING_LINGER` seconds, what forwarders sent
  while they still saw it alive. A forwarder whose request is declined waits for the owner to
  leave and serves the request again from the start (another worker adopts the session): its
  client never learns of the restart.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from functools import partial
from typing import Final

import msgspec
import trio

from ....stores.session_directory import DirectoryUnavailable, SessionDirectory, instance_of
from ..endpoints.departure_watch import DepartureWatch
from ..endpoints.responses import send_error
from ..engine.exchange import BodyTooLarge, HttpApp, HttpRequest, HttpResponder
from .inbound import MAX_BYTES, MAX_FRAMES, Inbound, InboundEnd, RelayedExchangeFailed
from .messages import (
    Chunk,
    Declined,
    End,
    Evictable,
    Gone,
    Head,
    RelayMessage,
    Request,
    decode,
    encode,
)
from .relayed_exchange import RelayedRequest, RelayedResponder

__all__ = ["MAX_BYTES", "MAX_FRAMES", "RelayedExchangeFailed", "SessionRelay"]

log = logging.getLogger("mcptrio.http.relay")

#: Seconds between checks that the workers this one waits on for answers are alive.
LIVENESS_CHECK: Final = 1.0
#: Forwarded exchanges an owner serves at once; past it the forwarder is answered 503.
MAX_SERVED: Final = 4096
#: Seconds to tell an owner that its exchange's client left (best effort).
_GONE_DEADLINE: Final = 1.0
#: Seconds a stopping owner goes on declining requests after it left the directory: longer
#: than forwarders keep a liveness answer, plus the time to post a request.
LEAVING_LINGER: Final = 2.0
#: Seconds a forwarder waits for an owner that declined its request to leave, and between two
#: looks (past the wait, its client is answered 503, the request not having run).
_DECLINED_WAIT: Final = 60.0
_DECLINED_POLL: Final = 0.05


class SessionRelay:
    """Forwards exchanges for other workers' sessions, and serves those forwarded to this one.

    ``app`` serves the forwarded requests (the same app this worker serves its own requests
    with); ``directory`` finds workers and carries the messages. :meth:`run` must be running
    (the app's ``run`` starts it).
    """

    def __init__(self, app: HttpApp, directory: SessionDirectory) -> None:
        self.app = app
        self.directory = directory
        self._inbound: dict[str, Inbound] = {}
        self._served: dict[str, RelayedResponder] = {}
        self._nursery: trio.Nursery | None = None
        # Watching a client's connection costs a task; most forwarded answers come back
        # sooner than the watch's delay, so only a slow one has its connection watched (as
        # the endpoint does for its own slow JSON answers).
        self._departure_watch = DepartureWatch()
        #: Whether a gone worker's sessions are adopted (:mod:`..endpoints.session_keeping`):
        #: then an exchange whose owner died before answering is dropped, not answered 404.
        self.adopting = False
        #: Exchanges this worker forwarded to others, and served for others (since it started).
        self.forwarded = 0
        self.served = 0
        #: Whether this worker stops: requests forwarded to it are declined (:meth:`stop_serving`).
        self.stopping = False
        self._all_served = trio.Event()

    @property
    def instance(self) -> str:
        """This worker's name in the directory (its session ids start with it)."""
        return self.directory.instance

    @property
    def serving(self) -> int:
        """Exchanges forwarded to this worker that it is serving now (a handshake-era call
        whose client left is served until it ends, as a local one is)."""
        return len(self._served)

    @property
    def forwarding(self) -> int:
        """Exchanges this worker has forwarded and is still relaying to their clients."""
        return len(self._inbound)

    def owner_elsewhere(self, session_id: bytes | str | None) -> str | None:
        """The other worker that owns ``session_id``, or ``None`` when it is this one's (or
        names no worker: then this one answers, 404)."""
        if session_id is None:
            return None
        if isinstance(session_id, bytes):
            try:
                session_id = session_id.decode("ascii")
            except UnicodeDecodeError:
                return None
        owner = instance_of(session_id)
        return owner if owner is not None and owner != self.directory.instance else None

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Be in the directory and read this worker's mailbox until cancelled."""
        async with trio.open_nursery() as nursery:
            await nursery.start(self.directory.run)
            nursery.start_soon(self._departure_watch.run)
            nursery.start_soon(self._watch_owners)
            self._nursery = nursery
            try:
                task_status.started()
                await self._read_mailbox(nursery)
            finally:
                self._nursery = None

    async def _read_mailbox(self, nursery: trio.Nursery) -> None:
        while True:
            try:
                messages = await self.directory.receive()
            except DirectoryUnavailable as exc:
                log.warning("session relay: %s; retrying", exc)
                await trio.sleep(LIVENESS_CHECK)
                continue
            for raw in messages:
                try:
                    message = decode(raw)
                except (msgspec.DecodeError, ValueError):
                    log.warning("session relay: dropped a message that is not one")
                    continue
                self._dispatch(message, nursery)

    def _dispatch(self, message: RelayMessage, nursery: trio.Nursery) -> None:
        if isinstance(message, Request):
            if self.stopping:
                nursery.start_soon(self._decline, message)
            elif len(self._served) >= MAX_SERVED or message.exchange in self._served:
                nursery.start_soon(self._refuse, message)
            else:
                responder = RelayedResponder(
                    message.exchange,
                    partial(self._post, message.reply_to),
                    partial(self.directory.is_alive, message.reply_to),
                )
                self._served[message.exchange] = responder
                self.served += 1
                nursery.start_soon(self._serve, message, responder)
        elif isinstance(message, Gone):
            served = self._served.get(message.exchange)
            if served is not None:
                served.client_gone()
        else:
            inbound = self._inbound.get(message.exchange)
            if inbound is not None:
                inbound.deliver(message)
            # Else the exchange has ended here (its client left, and the owner was told).

    async def _post(self, instance: str, message: RelayMessage) -> int:
        return await self.directory.send(instance, encode(message))

    # ------------------------------------------------------------------ the owner's side

    async def _serve(self, message: Request, responder: RelayedResponder) -> None:
        try:
            with responder.scope:
                await self.app.handle_http(RelayedRequest(message), responder)
            if not responder.responded and not responder.gone:
                await send_error(responder, 500, "The endpoint sent no response")
        except (trio.BrokenResourceError, DirectoryUnavailable):
            pass  # The forwarder or its client is gone: nobody to tell.
        except Exception:
            log.exception("forwarded request %s %s failed", message.method, message.path)
            await self._fail(responder)
        finally:
            del self._served[message.exchange]
            if self.stopping and not self._served:
                self._all_served.set()

    async def _fail(self, responder: RelayedResponder) -> None:
        """Tell the forwarder its exchange failed: 500 before the response started, else end it
        as failed (the forwarder drops the connection)."""
        if responder.gone:
            return
        try:
            if not responder.responded:
                await send_error(responder, 500, "Internal server error")
            elif responder.streaming:
                await responder.abort()
        except (trio.BrokenResourceError, DirectoryUnavailable):
            pass

    async def _refuse(self, message: Request) -> None:
        body = b'{"jsonrpc":"2.0","error":{"code":-32600,"message":"Too many forwarded requests"}}'
        head = Head(
            message.exchange,
            503,
            [(b"content-type", b"application/json"), (b"retry-after", b"1")],
            body,
            streamed=False,
        )
        with contextlib.suppress(DirectoryUnavailable):
            await self._post(message.reply_to, head)

    async def _decline(self, message: Request) -> None:
        with contextlib.suppress(DirectoryUnavailable):
            await self._post(message.reply_to, Declined(message.exchange))

    async def stop_serving(self) -> None:
        """Stop serving forwarded requests, gracefully (see the module docstring); called once
        this worker's own connections have drained, before :meth:`run` is cancelled."""
        self.stopping = True
        if self._served:
            await self._all_served.wait()
        try:
            await self.directory.leave()
        except DirectoryUnavailable as exc:
            log.warning("session relay: could not leave the directory (%s)", exc)
            return
        await trio.sleep(LEAVING_LINGER)

    # ------------------------------------------------------------------ the forwarder's side

    async def forward(
        self, owner: str, request: HttpRequest, responder: HttpResponder, body_limit: int
    ) -> HttpRequest | None:
        """Have ``owner`` serve ``request``; write its response to ``responder``. When the
        owner declined it (it stopped), returns the request to serve again, the owner gone."""
        try:
            body = await request.read_body(body_limit)
        except BodyTooLarge:
            await send_error(responder, 413, "Request body too large")
            return None
        message = Request(
            secrets.token_hex(8),
            self.directory.instance,
            request.method,
            request.path,
            request.query_string,
            request.scheme,
            list(request.headers),
            body,
            request.client,
        )
        try:
            declined = await self._forward(owner, message, responder)
        except RelayedExchangeFailed as exc:
            # Dropping the connection is how a broken stream is told to an HTTP client.
            log.info("forwarded exchange dropped: %s", exc)
            raise trio.BrokenResourceError(str(exc)) from exc
        if not declined:
            return None
        with trio.move_on_after(_DECLINED_WAIT):
            # Its liveness is a key in the store: nothing to wait on here but another look.
            while True:
                if not await self.directory.is_alive(owner):
                    return RelayedRequest(message)
                await trio.sleep(_DECLINED_POLL)
        await send_error(
            responder,
            503,
            "The worker of this session is stopping; try again",
            headers=((b"retry-after", b"1"),),
        )
        return None

    async def _forward(self, owner: str, message: Request, responder: HttpResponder) -> bool:
        """Relay ``message``'s exchange; whether ``owner`` declined it (nothing sent yet)."""
        exchange = message.exchange
        inbound = self._inbound[exchange] = Inbound(owner)
        self.forwarded += 1
        started = finished = False
        try:
            try:
                if not await self.directory.is_alive(owner):
                    finished = True
                    if self.adopting:
                        # Gone since it was routed here, before anything was sent: served
                        # again, another worker adopts the session.
                        return True
                    await send_error(responder, 404, "Session not found")
                    return False
                await self._post(owner, message)
                self._departure_watch.arm(responder)
                while True:
                    reply = await inbound.next()
                    if isinstance(reply, Declined):
                        finished = True
                        return True
                    if isinstance(reply, InboundEnd):
                        if started or reply is InboundEnd.OVERFLOWED:
                            raise RelayedExchangeFailed(reply.value)
                        if reply is InboundEnd.OWNER_GONE and self.adopting:
                            # The session lives on elsewhere; this exchange's outcome is
                            # unknown, which a dropped connection tells (never a 404).
                            raise RelayedExchangeFailed(reply.value)
                        if reply is InboundEnd.UNREACHABLE:
                            raise DirectoryUnavailable(reply.value)
                        await send_error(responder, 404, "Session not found")
                        finished = True
                        return False
                    if isinstance(reply, Head):
                        self._departure_watch.disarm(responder)
                        if reply.streamed:
                            await responder.start_stream(reply.status, reply.headers)
                            started = True
                            continue
                        await responder.send_response(reply.status, reply.headers, reply.body)
                        finished = True
                        return False
                    if isinstance(reply, Chunk):
                        await responder.send_chunk(reply.data)
                    elif isinstance(reply, End):
                        if not reply.ok:
                            finished = True
                            raise RelayedExchangeFailed("the session's worker failed the request")
                        await responder.end_stream()
                        finished = True
                        return False
                    elif isinstance(reply, Evictable):
                        responder.allow_eviction()
            except DirectoryUnavailable as exc:
                if started:
                    raise RelayedExchangeFailed(str(exc)) from exc
                log.warning("cannot forward to the worker of a session: %s", exc)
                await send_error(
                    responder,
                    503,
                    "The worker that holds this session cannot be reached now",
                    headers=((b"retry-after", b"1"),),
                )
                finished = True
                return False
        finally:
            self._departure_watch.disarm(responder)
            del self._inbound[exchange]
            if not finished:
                with (
                    trio.CancelScope(shield=True),
                    trio.move_on_after(_GONE_DEADLINE),
                    contextlib.suppress(DirectoryUnavailable),
                ):
                    await self._post(owner, Gone(exchange))

    async def _watch_owners(self) -> None:
        """End the exchanges waiting on a worker that has gone, or that cannot be reached."""
        while True:
            await trio.sleep(LIVENESS_CHECK)
            for owner in {inbound.owner for inbound in self._inbound.values()}:
                try:
                    end = None if await self.directory.is_alive(owner) else InboundEnd.OWNER_GONE
                except DirectoryUnavailable:
                    end = InboundEnd.UNREACHABLE
                if end is not None:
                    for inbound in list(self._inbound.values()):
                        if inbound.owner == owner:
                            inbound.finish(end)
