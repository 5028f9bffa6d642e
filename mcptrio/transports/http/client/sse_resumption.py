"""Following a Streamable HTTP SSE stream past its breaks: :class:`SseResumption`.

A base of :class:`~.streamable.StreamableHttpClientTransport`: the GET that resumes a POST's
stream with ``Last-Event-ID`` until it has answered everything it owes, and the standalone GET
stream kept open for the session's life. Consecutive attempts that bring nothing back back off
exponentially from the server's ``retry`` delay (or the transport's), up to
``Reconnection.max_delay``. A POST stream is given up after ``Reconnection.max_attempts``. The
standalone stream is kept for the session's life, as a browser's ``EventSource`` keeps its own:
only a server that offers none (405) or the session's end stops it. A GET the server answered
with a stream is progress (the backoff starts again), even one lost later without an event, and
a POST of the session answered while it backs off sends the next GET at once (the server is
reachable again: a worker restarted, or another took the session over). A request whose
answer came elsewhere, or was too large to take, is owed no more: its stream is not resumed
for it (:meth:`SseResumption._abandon`, :meth:`SseResumption._take_oversized`).
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import TYPE_CHECKING

import trio

from ....protocol.base import RequestId
from ....protocol.errors import ConnectionClosed, McpError, TransportError
from ....runtime.transport import FailedRequest, Frame, OversizedFrame
from ..engine.client_pool import HttpError
from .followed import DONE, ENDED, SESSION_GONE, UNUSABLE, FollowedStream

if TYPE_CHECKING:
    from ..engine.client_pool import HttpResponse
    from .auth_hook import Requests
    from .base import HttpClientOptions
    from .followed import Reconnection
    from .session_renewal import SessionRenewal

__all__ = ["SseResumption"]

log = logging.getLogger("mcptrio.transports.http.client.streamable")


class SseResumption:
    """Resuming POST streams and keeping the standalone stream open (see the module docstring)."""

    #: Set by :meth:`_session_answered` while the standalone stream backs off.
    _standalone_wake: trio.Event | None = None

    if TYPE_CHECKING:
        # What these need of the transport (``StreamableHttpClientTransport`` has them).
        url: str
        options: HttpClientOptions
        reconnection: Reconnection
        session_id: str | None
        _pool: Requests
        _renewal: SessionRenewal

        def request_headers(
            self, accept: str, *, session: bool = True
        ) -> list[tuple[str, str]]: ...

        async def _read_events(self, response: HttpResponse, stream: FollowedStream) -> str: ...

        _streams: dict[RequestId, FollowedStream]

        async def _fail_requests(
            self, request_ids: Collection[RequestId], error: McpError
        ) -> None: ...

        async def _deliver(self, frame: Frame | FailedRequest) -> None: ...

    def _abandon(self, rid: RequestId) -> None:
        """The session cancelled ``rid``: stop waiting for its answer."""
        stream = self._streams.get(rid)
        if stream is not None:
            if rid == stream.original_id:
                stream.pending.clear()
            stream.pending.discard(rid)
            if not stream.pending:
                stream.scope.cancel()

    async def _take_oversized(self, frame: OversizedFrame, stream: FollowedStream) -> bool:
        """An answer too large to take: its call fails at once and is not asked again (see
        :meth:`FollowedStream.answered_too_large`); whether ``stream`` then owes nothing."""
        owed = bool(stream.pending)
        rid = stream.answered_too_large(frame.head, frame.tail)
        original = stream.original_id
        if original is not None and rid is not None and owed and not stream.pending:
            # A re-issued request's answer: the session waits on the id it sent, not this one.
            error = TransportError(f"The answer exceeds the size limit of {frame.limit} bytes")
            await self._fail_requests([original], error)
        else:
            if rid is not None and self._streams.get(rid) not in (None, stream):
                self._abandon(rid)  # its own stream owes it no more, nor a resumption
            stream.direct = False  # through the reader, as any frame not taken directly
            await self._deliver(frame)
        return owed and not stream.pending

    def _delay(self, stream: FollowedStream, failures: int) -> float:
        reconnection = self.reconnection
        base = stream.retry_ms / 1000 if stream.retry_ms is not None else reconnection.delay
        if failures <= 1:
            return base
        return max(base, min(base * 2.0 ** (failures - 1), reconnection.max_delay))

    async def _resume(self, stream: FollowedStream) -> None:
        """Resume a POST stream with GET + Last-Event-ID until it has answered everything."""
        failures = 0
        # A cancel scope serves one block: the POST had the first, the resumption gets its own.
        stream.scope = trio.CancelScope()
        with stream.scope:
            while stream.pending:
                if stream.last_event_id is None:
                    stream.lost("The response stream broke and cannot be resumed")
                    return
                await trio.sleep(self._delay(stream, failures + 1))
                outcome, progressed = await self._get(stream)
                if outcome == DONE or not stream.pending:
                    return
                if outcome in (UNUSABLE, SESSION_GONE):
                    stream.lost("The response stream could not be resumed")
                    return
                failures = 0 if progressed else failures + 1
                if failures >= self.reconnection.max_attempts:
                    stream.lost("The response stream could not be resumed")
                    return

    async def _get(
        self, stream: FollowedStream, opened: trio.Event | None = None
    ) -> tuple[str, bool]:
        """One GET of an SSE stream (resuming when the stream has a cursor).

        Returns how it ended and whether it made progress: brought anything (an event or a
        retry value), or, for the standalone stream (given ``opened``), was opened at all, since
        being open is all that stream owes. ``opened`` is set once the server answered the GET
        (or it failed).
        """
        headers = self.request_headers("text/event-stream")
        if stream.last_event_id is not None:
            headers.append(("last-event-id", stream.last_event_id))
        before = (stream.last_event_id, stream.retry_ms, len(stream.pending))
        sent_session = self.session_id
        status = 0
        try:
            async with self._pool.request(
                "GET", self.url, headers=headers, read_timeout=self.options.sse_read_timeout
            ) as response:
                status = response.status
                if opened is not None:
                    opened.set()
                if status == 200 and response.content_type == "text/event-stream":
                    outcome = await self._read_events(response, stream)
                    after = (stream.last_event_id, stream.retry_ms, len(stream.pending))
                    return outcome, opened is not None or after != before
        except HttpError as exc:
            log.info("GET of the SSE stream failed: %s", exc)
            return ENDED, False
        if status == 405:
            return UNUSABLE, False
        if status == 404 and sent_session is not None:
            # The session is gone, and a POST stream being resumed is lost with it.
            stream.fail(
                ConnectionClosed("The server ended the session while the request was running")
            )
            await self._renewal.renew(sent_session)
            return SESSION_GONE, False
        log.info("GET of the SSE stream got HTTP %d", status)
        return ENDED, False

    async def _standalone_stream(self, opened: trio.Event) -> None:
        """Keep the server's standalone GET stream open, resuming it when it drops.

        ``opened`` is set once the first GET was answered or failed.
        """
        try:
            await self._follow_standalone_stream(opened)
        finally:
            opened.set()

    async def _follow_standalone_stream(self, opened: trio.Event) -> None:
        # Kept for the session's life (see the module docstring): a stream the server opened
        # resets the backoff however often it is lost later (each worker holding it killed in
        # turn, a server that closes it to make the client poll).
        stream = FollowedStream()
        failures = 0
        while not self._renewal.ended:
            outcome, progressed = await self._get(stream, opened)
            opened.set()
            if outcome == UNUSABLE:
                # 405: the server offers no standalone stream.
                return
            if outcome == SESSION_GONE:
                # Event ids of the old session mean nothing to the new one.
                stream = FollowedStream()
                failures = 0
                continue
            failures = 0 if progressed else failures + 1
            if failures == self.reconnection.max_attempts:
                log.warning(
                    "the standalone SSE stream of %s could not be opened %d times in a row; "
                    "trying again at most every %g s",
                    self.url,
                    failures,
                    self.reconnection.max_delay,
                )
            await self._back_off(self._delay(stream, max(failures, 1)))

    async def _back_off(self, delay: float) -> None:
        """Wait ``delay`` before the next GET of the standalone stream, or until a POST of the
        session is answered (:meth:`_session_answered`)."""
        wake = self._standalone_wake = trio.Event()
        try:
            with trio.move_on_after(delay):
                await wake.wait()
        finally:
            self._standalone_wake = None

    def _session_answered(self) -> None:
        """A POST of the session got a 2xx answer: a standalone stream backing off goes now."""
        if self._standalone_wake is not None:
            self._standalone_wake.set()
