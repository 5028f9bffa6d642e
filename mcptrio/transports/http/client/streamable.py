"""The client side of Streamable HTTP (2025-03-26 and later).

Every outgoing frame is one POST to the MCP endpoint (``Accept: application/json,
text/event-stream``). The POST runs in a task of the transport's own nursery, so
:meth:`StreamableHttpClientTransport.send` returns as soon as the POST is started and a slow
response never holds up the session's writer; at most ``max_concurrent_posts`` POSTs run at
once, and ``send`` waits for a slot beyond that (backpressure). Whatever the server answers
reaches :meth:`~StreamableHttpClientTransport.receive` through one bounded memory channel:

- ``202 Accepted``: nothing.
- ``application/json``: the body is one frame (a message, or a 2025-03-26 batch).
- ``text/event-stream``: each event's data is one frame. The stream is read until it has
  delivered a response for every request the POST carried.
- anything else (4xx, 5xx, a broken connection, a timeout): every request the POST carried fails
  right away in its caller with a :class:`~mcptrio.protocol.errors.TransportError` (the HTTP
  status in :class:`~.HttpStatusError`), instead of waiting for its timeout; an error status
  whose body is a JSON-RPC error is the server's answer, raised as such.

Headers: after ``initialize`` every request carries ``Mcp-Session-Id`` (when the server assigned
one) and ``MCP-Protocol-Version`` (read from the ``initialize`` result the transport relays).

Ordering: POSTs run concurrently, as with any HTTP client. One ordering matters and is kept:
every frame sent after ``notifications/initialized`` waits until its POST has been answered.

**Standalone stream.** Once ``notifications/initialized`` has been accepted, a GET opens the
server's standalone SSE stream (``405`` means the server has none, which is fine). The frames
sent after ``notifications/initialized`` wait (at most 2 s) until the server has answered that
GET, so what it sends there in reaction to them is not lost.

**Resumption.** The last event id and ``retry:`` value of each SSE stream are kept. When a
stream ends before it should (the connection breaks, a read times out after
``sse_read_timeout``, or the server closes it to make the client poll, as 2025-11-25 allows), the
transport waits the server's ``retry`` delay (``reconnect_delay`` when it sent none) and resumes
with a GET carrying ``Last-Event-ID``. Consecutive attempts that bring nothing back back off
exponentially (up to ``max_reconnect_delay``) and stop after ``max_reconnect_attempts``; then
the requests still waiting on that stream get an error response. A POST stream that never sent
an event id cannot be resumed, so its requests get the error at once. Sending
``notifications/cancelled`` for a request stops following its stream.

**Session renewal (a decision).** A 404 to a request carrying a session id means the server
ended the session: the transport starts a new one transparently and re-sends the message once
(see :mod:`mcptrio.transports.http.client.session_renewal` for what survives and what not).

**The stateless era (2026-07-28).** A request whose ``_meta`` names a revision goes without a
session, with the headers of that era (:mod:`.stateless_headers`). Cancelling it closes its
stream. A stream that breaks before the answer cannot be resumed: the request is re-issued
under a new id (:mod:`.reissue`).

**Closing.** :meth:`~StreamableHttpClientTransport.aclose` stops every POST and stream and sends
``DELETE`` with the session id (a ``405`` is ignored), shielded and within ``timeout``.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import aclosing, asynccontextmanager
from typing import TYPE_CHECKING, Unpack

import trio

from ....protocol.base import RequestId
from ....protocol.codec import Envelope
from ....protocol.errors import ConnectionClosed
from ....protocol.sse import SseError, SseParser
from ....runtime.transport import Delivered, Outgoing, OversizedFrame, TransportAbilities
from ..engine.client_pool import HttpClientPool, HttpError, HttpResponse
from .base import ERROR_BODY_LIMIT, HttpClientOptions, HttpClientSettings, HttpClientTransportBase
from .followed import (
    DEFAULT_RECONNECTION,
    DONE,
    ENDED,
    UNUSABLE,
    CutRequests,
    FollowedStream,
    Reconnection,
)
from .messages import (
    OutgoingInfo,
    initialize_revision,
    peek_incoming,
    peek_outgoing,
)
from .reissue import REISSUE_LIMIT, answered_as, renumbered
from .resources import open_client_resources
from .session_renewal import ACCEPT_JSON_OR_SSE, SessionRenewal
from .sse_resumption import SseResumption
from .stateless_headers import HeaderParams, stateless_headers

if TYPE_CHECKING:
    pass

__all__ = [
    "InitializeOutcome",
    "StreamableHttpClientTransport",
    "open_streamable_http_client_transport",
]

log = logging.getLogger("mcptrio.transports.http.client.streamable")

# How much of an error body is read to explain the error.

# How long the frames after ``notifications/initialized`` wait for the server to answer the GET
# of the standalone stream: long enough for any live server, short enough that one holding
# back the GET's headers costs the first request little.
_STANDALONE_OPEN_WAIT = 2.0

#: Called once, with the first ``initialize`` or stateless-era frame, the HTTP status its POST
#: got (0 when it got none) and, for a stateless-era frame refused, the start of the body;
#: returns ``True`` when it took the frame over (the legacy fallback), and the transport then
#: delivers nothing for it.
InitializeOutcome = Callable[[bytes, int, bytes | None], Awaitable[bool]]


class StreamableHttpClientTransport(SseResumption, HttpClientTransportBase):
    """A :class:`~mcptrio.runtime.transport.Transport` speaking Streamable HTTP to ``url``.

    Made by :func:`open_streamable_http_client_transport`, which owns the nursery its tasks
    run in.
    """

    def __init__(
        self,
        url: str,
        pool: HttpClientPool,
        nursery: trio.Nursery,
        options: HttpClientOptions,
        *,
        open_get_stream: bool = True,
        reconnection: Reconnection = DEFAULT_RECONNECTION,
        on_initialize_outcome: InitializeOutcome | None = None,
    ) -> None:
        super().__init__(url, pool, nursery, options)
        self._open_get_stream = open_get_stream
        self.reconnection = reconnection
        self._on_initialize_outcome = on_initialize_outcome
        #: The annotated arguments of each tool, for ``Mcp-Param-*`` (the client sets it).
        self.header_params: HeaderParams | None = None
        #: Re-issued requests so far: makes each new id unique.
        self._reissued = 0
        #: The session id the server assigned, if any.
        self.session_id: str | None = None
        #: The revision the server answered ``initialize`` with.
        self.protocol_version: str | None = None
        self._renewal = SessionRenewal(self, self._pool, on_end=self._incoming_send.close)
        self._get_started = False
        #: The session responses are handed to directly (see :meth:`deliver_to`), if any.
        self._deliver_here: Callable[[Delivered], Awaitable[None]] | None = None
        self._streams: dict[RequestId, FollowedStream] = {}
        self._cut = CutRequests()

    # ------------------------------------------------------------ Transport

    async def send(self, frames: Sequence[Outgoing]) -> None:
        """Start one POST per frame; waits only for a free POST slot."""
        for frame in frames:
            if self._cut and self._cut.take(peek_outgoing(frame.data).cancels):
                continue
            info = await self._schedule(frame)
            # The POST task has not run yet (no checkpoint since it started): this comes first.
            self._renewal.remember(frame.data, info)
            if info.cancels is not None:
                self._abandon(info.cancels)

    def _deliver_responses_to(self, deliver: Callable[[Delivered], Awaitable[None]]) -> None:
        """Hand lone responses straight to the session's ``deliver`` from the task that read
        them, rather than through :meth:`receive` and the session's reader; everything else
        still goes through :meth:`receive`."""
        self._deliver_here = deliver

    def abilities(self) -> TransportAbilities:
        return TransportAbilities(
            send_nowait=self.send_nowait,
            exchange=self.exchange,
            deliver_to=self._deliver_responses_to,
        )

    def send_nowait(self, frame: Outgoing) -> bool:
        """Start the POST of ``frame`` if a POST slot is free (the session's direct path,
        which skips its writer task); ``False`` otherwise, and nothing was started."""
        if self._cut and self._cut.take(peek_outgoing(frame.data).cancels):
            return True
        info = self._schedule_nowait(frame)
        if info is None:
            return False
        self._renewal.remember(frame.data, info)
        if info.cancels is not None:
            self._abandon(info.cancels)
        return True

    async def exchange(self, frame: Outgoing) -> bool:
        """POST the request ``frame`` in the calling task and deliver what its response brings
        (the session's path for a request: no task started for the POST, no hand-off of the
        answer to the waiting task). ``False``, without sending or checkpointing, when no POST
        slot is free, the frames scheduled so far wait for ``notifications/initialized``, or
        the frame is an ``initialize`` or the first stateless-era request (whose outcome picks
        the transport): the session then sends it the usual way.

        Cancelling the caller closes the POST's connection: for a stateless-era request that
        is the cancellation itself, and the session's ``notifications/cancelled`` for it is
        not sent (see :class:`.followed.CutRequests`); closing the transport cancels every exchange.
        """
        if self._closed or self._on_initialize_outcome is not None:
            return False
        info = peek_outgoing(frame.data)
        if len(info.request_ids) != 1 or info.method == "initialize":
            return False
        if not self._posts.hold_nowait():
            return False
        self._renewal.remember(frame.data, info)
        try:
            await self._post(frame.data, info, may_renew=True, carried=True)
        finally:
            self._posts.release()
        return True

    async def aclose(self) -> None:
        """Stop every POST and stream, and end the server session with DELETE."""
        session_id = self.session_id
        # The POSTs that requesting tasks carry (see exchange) run outside the nursery.
        for stream in self._streams.values():
            stream.scope.cancel()
        if not self._stop() or session_id is None:
            await trio.lowlevel.checkpoint()
            return
        with trio.CancelScope(shield=True), trio.move_on_after(self.options.timeout):
            try:
                async with self._pool.request(
                    "DELETE", self.url, headers=self.request_headers("application/json, */*")
                ) as response:
                    if response.status not in (200, 202, 204, 405, 404):
                        log.info("DELETE of the session got HTTP %d", response.status)
            except HttpError as exc:
                log.info("could not end the session with DELETE: %s", exc)

    # ------------------------------------------------------------ POST

    def request_headers(self, accept: str, *, session: bool = True) -> list[tuple[str, str]]:
        """The headers of a request, with the session's id and revision when ``session``."""
        headers = self._request_headers(("accept", accept))
        if session:
            if self.session_id is not None:
                headers.append(("mcp-session-id", self.session_id))
            if self.protocol_version is not None:
                headers.append(("mcp-protocol-version", self.protocol_version))
        return headers

    async def _post_frame(self, data: bytes, info: OutgoingInfo) -> None:
        """POST a frame the session sent; the standalone stream opens once it is initialized."""
        if info.cancels is not None:
            stream = self._streams.get(info.cancels)
            if stream is not None and stream.stateless:
                # In the stateless era closing the request's response stream is the
                # cancellation; the notice itself is not sent.
                stream.scope.cancel()
                return
        await self._post(data, info, may_renew=True)
        initialized = info.method == "notifications/initialized"
        if initialized and self._open_get_stream and not self._get_started:
            self._get_started = True
            # Frames sent after this one wait until it returns (see PostScheduler), so the
            # server has the standalone stream before it sees the first request: whatever it
            # sends there in reaction (a log message, a list change) is not lost to a stream
            # not yet opened, and no request of this client races its GET.
            opened = trio.Event()
            self._nursery.start_soon(self._standalone_stream, opened)
            with trio.move_on_after(_STANDALONE_OPEN_WAIT):
                await opened.wait()

    async def _post(
        self,
        data: bytes,
        info: OutgoingInfo,
        *,
        may_renew: bool,
        reissue: FollowedStream | None = None,
        carried: bool = False,
    ) -> None:
        is_initialize = info.method == "initialize"
        stream = FollowedStream(pending=set(info.request_ids), request=data)
        if is_initialize and info.request_ids:
            stream.initialize_id = info.request_ids[0]
        for rid in info.request_ids:
            self._streams[rid] = stream
        if reissue is not None:
            stream.original_id, stream.reissues = reissue.original_id, reissue.reissues
            # A cancellation names the id the session sent.
            self._streams[reissue.original_id] = stream  # type: ignore[index]
        try:
            sent_session = self.session_id
            stateless = stateless_headers(data, self.header_params)
            if stateless is None:
                headers = self.request_headers(ACCEPT_JSON_OR_SSE, session=not is_initialize)
            else:
                # The stateless era: no session; the headers repeat what the body says.
                sent_session = None
                stream.stateless = True
                headers = self.request_headers(ACCEPT_JSON_OR_SSE, session=False) + stateless
            headers.append(("content-type", "application/json"))
            first = (is_initialize or stream.stateless) and self._on_initialize_outcome is not None
            status, reason, ctype, body = 0, "", "", None
            outcome = DONE
            with stream.scope:
                try:
                    async with self._pool.request(
                        "POST",
                        self.url,
                        headers=headers,
                        body=data,
                        read_timeout=self.options.timeout,
                    ) as response:
                        status, reason = response.status, response.reason
                        ctype = response.content_type
                        if is_initialize and await self._first_outcome(data, status, None):
                            stream.pending.clear()
                            return
                        if 200 <= status < 300:
                            if is_initialize:
                                self.take_session_id(response)
                            elif sent_session is not None:
                                self._session_answered()
                            outcome = await self._read_post_response(response, stream)
                        else:
                            body = await response.read(ERROR_BODY_LIMIT)
                            if first and await self._first_outcome(data, status, body):
                                stream.pending.clear()
                                return
                except HttpError as exc:
                    log.info("POST to %s failed: %s", self.url, exc)
                    if status == 0:
                        stream.fail(exc)
                        return
                    outcome = ENDED
            if stream.scope.cancelled_caught:
                return
            if status == 404 and sent_session is not None and may_renew and not is_initialize:
                if carried:
                    # Renewing the session is the transport's work, not the caller's: one that
                    # gives up must not leave the transport half-renewed, and closing the
                    # transport must stop it. The caller waits for the answer as usual.
                    stream.pending.clear()
                    if not self._closed:
                        self._nursery.start_soon(
                            self._post_again_after_404, data, info, sent_session, stream
                        )
                    return
                await self._post_again_after_404(data, info, sent_session, stream)
                return
            if not 200 <= status < 300:
                await self._refused(stream.pending, status, reason, body, ctype)
                stream.pending.clear()
                return
            if outcome == ENDED and stream.pending and stream.stateless:
                await self._reissue(data, info, stream)
            elif outcome == ENDED and stream.pending:
                await self._resume(stream)
            elif stream.pending:
                stream.lost("The server ended the response stream without answering")
        except trio.Cancelled:
            if carried and stream.stateless and not self._closed:
                # The caller of an exchange was cancelled: its stream closes as this unwinds.
                self._cut.remember(stream)
            raise
        finally:
            if first:
                # Whatever happened (an answer, a failure, a cancelled probe), the first POST's
                # outcome is reported once, so the choice of transport is never left waiting.
                await self._first_outcome(data, status, None)
            owed: list[RequestId | None] = [*info.request_ids, stream.original_id]
            for key in owed:
                if key is not None and self._streams.get(key) is stream:
                    del self._streams[key]
            if stream.pending:
                await self._fail_now(stream)

    async def _reissue(self, data: bytes, info: OutgoingInfo, stream: FollowedStream) -> None:
        """Send a stateless-era request whose stream broke again, under a new id (see
        :mod:`.reissue`)."""
        if stream.reissues >= REISSUE_LIMIT or len(info.request_ids) != 1:
            stream.lost("The response stream broke before the answer, every time")
            return
        original = info.request_ids[0] if stream.original_id is None else stream.original_id
        self._reissued += 1
        new_id = f"{original}.reissued-{self._reissued}"
        again = renumbered(data, new_id)
        if again is None:
            stream.lost("The response stream broke before the answer")
            return
        log.info("the response stream of request %r broke; re-issued as %r", original, new_id)
        # The answer now comes under the new id: the old one is owed nothing more.
        stream.pending.clear()
        stream.original_id, stream.reissues = original, stream.reissues + 1
        # A cancellation during the pause stops the re-issue (the session gave up on it).
        stream.scope = trio.CancelScope()
        with stream.scope:
            await trio.sleep(self._delay(stream, stream.reissues))
        if stream.scope.cancelled_caught:
            return
        reissued = OutgoingInfo((new_id,), info.method)
        await self._post(again, reissued, may_renew=False, reissue=stream)

    async def _first_outcome(self, data: bytes, status: int, body: bytes | None) -> bool:
        hook = self._on_initialize_outcome
        if hook is None:
            return False
        self._on_initialize_outcome = None
        return await hook(data, status, body)

    def take_session_id(self, response: HttpResponse) -> None:
        """Adopt the ``Mcp-Session-Id`` of an ``initialize`` response, if it has a valid one."""
        value = response.header(b"mcp-session-id")
        if value is None:
            return
        if value and all(0x21 <= c <= 0x7E for c in value):
            self.session_id = value.decode("ascii")
        else:
            log.warning("ignored a session id with characters outside visible ASCII")

    async def _read_post_response(self, response: HttpResponse, stream: FollowedStream) -> str:
        if response.status == 202 or not stream.pending:
            if stream.pending:
                stream.fail("The server accepted the request without answering it")
            response.drain_buffered()
            await trio.lowlevel.checkpoint()
            return DONE
        ctype = response.content_type
        limit = self.options.max_frame_size
        if ctype == "application/json":
            body = await response.read(limit)
            if body is None:
                await self._deliver(OversizedFrame(limit))
                stream.fail("The response is larger than the frame size limit")
                return DONE
            answered, lone = peek_incoming(body)
            stream.pending.difference_update(answered)
            await self._deliver_response(body, stream, lone)
            return DONE
        if ctype == "text/event-stream":
            response.read_timeout = self.options.sse_read_timeout
            return await self._read_events(response, stream)
        stream.fail(await self._not_an_endpoint(response))
        return DONE

    async def _deliver_response(
        self, data: bytes, stream: FollowedStream, lone: Envelope | None
    ) -> None:
        """Deliver a frame of ``stream``; ``lone`` is its one message when it is exactly one
        response."""
        if stream.initialize_id is not None and self.protocol_version is None:
            self.protocol_version = initialize_revision(data, stream.initialize_id)
        if stream.original_id is not None:
            data = answered_as(data, stream.original_id)
            lone = None
        deliver = self._deliver_here
        if deliver is not None and lone is not None and stream.direct:
            # Straight to the session, in this task: no hop through the channel and the
            # session's reader (two task switches of a call's four). A response is taken
            # without waiting, so this does not hold the stream up.
            try:
                await deliver(lone)
            except ConnectionClosed:
                log.debug("dropped a response that arrived after the session ended")
            return
        # Anything else goes through the reader, and so does the rest of this stream, so that
        # a response never overtakes a notification or request sent before it.
        stream.direct = False
        await self._deliver(data)

    # ------------------------------------------------------------ SSE streams

    async def _read_events(self, response: HttpResponse, stream: FollowedStream) -> str:
        """Follow one SSE response until it owes nothing more, ends, or becomes unusable."""
        limit = self.options.max_frame_size
        parser = SseParser(max_line=limit + 64)
        parser.last_event_id = stream.last_event_id
        try:
            while True:
                try:
                    chunk = await response.receive_some()
                except HttpError as exc:
                    log.info("SSE stream from %s broke: %s", self.url, exc)
                    return ENDED
                if not chunk:
                    return ENDED
                for event in parser.feed(chunk):
                    if event.id is not None:
                        stream.last_event_id = event.id
                    if event.retry is not None:
                        stream.retry_ms = event.retry
                    data = self._message_of(event)
                    if data is None:
                        continue
                    if isinstance(data, OversizedFrame):
                        if await self._take_oversized(data, stream):
                            return DONE
                        continue
                    answered, lone = peek_incoming(data)
                    owed = bool(stream.pending)
                    stream.pending.difference_update(answered)
                    for rid in answered:
                        if self._streams.get(rid) not in (None, stream):
                            # Answered on another stream (a lax server replays on any GET):
                            # the request's own stream owes it no more, nor a resumption.
                            self._abandon(rid)
                    await self._deliver_response(data, stream, lone)
                    if owed and not stream.pending:
                        return DONE
        except SseError as exc:
            log.warning("unusable SSE stream from %s: %s", self.url, exc)
            await self._deliver(OversizedFrame(limit))
            return UNUSABLE

    # ------------------------------------------------------------ session renewal

    async def _post_again_after_404(
        self, data: bytes, info: OutgoingInfo, stale: str, stream: FollowedStream
    ) -> None:
        stream.pending.clear()
        if not await self._renewal.renew(stale):
            await self._fail_requests(
                info.request_ids, ConnectionClosed("The server ended the MCP session")
            )
            return
        if info.method != "notifications/initialized":
            await self._post(data, info, may_renew=False)

    # ------------------------------------------------------------ delivery

    async def _fail_now(self, stream: FollowedStream) -> None:
        if not self._closed:
            await self._fail_requests(stream.owed(), stream.final_failure())
        stream.pending.clear()


@asynccontextmanager
async def open_streamable_http_client_transport(
    url: str,
    *,
    ssl_context: ssl.SSLContext | None = None,
    pool: HttpClientPool | None = None,
    open_get_stream: bool = True,
    reconnect_delay: float = 1.0,
    max_reconnect_delay: float = 30.0,
    max_reconnect_attempts: int = 5,
    on_initialize_outcome: InitializeOutcome | None = None,
    **settings: Unpack[HttpClientSettings],
) -> AsyncIterator[StreamableHttpClientTransport]:
    """Open a Streamable HTTP client transport to the MCP endpoint ``url``.

    ``headers`` go on every request (for example ``Authorization``). ``timeout`` bounds
    connecting and every read of a JSON response (and the DELETE on close);
    ``sse_read_timeout`` is how long an SSE stream may stay silent before it is taken as broken
    and resumed. ``pool`` shares an :class:`HttpClientPool` (its connections, TLS context and
    connection cap) with other users; by default the transport makes its own, with
    ``ssl_context`` (``ssl.create_default_context()`` when ``None``), and closes it on exit.

    Leaving the block closes the transport (see :meth:`StreamableHttpClientTransport.aclose`).
    """
    options = HttpClientOptions.of(settings)
    async with open_streamable(
        url,
        options,
        pool=pool,
        ssl_context=ssl_context,
        open_get_stream=open_get_stream,
        reconnection=Reconnection(reconnect_delay, max_reconnect_delay, max_reconnect_attempts),
        on_initialize_outcome=on_initialize_outcome,
    ) as transport:
        yield transport


@asynccontextmanager
async def open_streamable(
    url: str,
    options: HttpClientOptions,
    *,
    pool: HttpClientPool | None,
    ssl_context: ssl.SSLContext | None = None,
    open_get_stream: bool = True,
    reconnection: Reconnection = DEFAULT_RECONNECTION,
    on_initialize_outcome: InitializeOutcome | None = None,
) -> AsyncIterator[StreamableHttpClientTransport]:
    """:func:`open_streamable_http_client_transport` with its options in records."""
    async with open_client_resources(pool, options, ssl_context=ssl_context, streams=8) as (
        http,
        tasks,
    ):
        transport = StreamableHttpClientTransport(
            url,
            http,
            tasks,
            options,
            open_get_stream=open_get_stream,
            reconnection=reconnection,
            on_initialize_outcome=on_initialize_outcome,
        )
        async with aclosing(transport):
            yield transport
