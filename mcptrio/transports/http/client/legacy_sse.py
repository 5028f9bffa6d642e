"""The client side of the 2024-11-05 HTTP+SSE transport (deprecated since 2025-03-26).

The client GETs the SSE URL and keeps that stream open for the whole session. The server's
first event is ``endpoint``, whose data is the URI to POST messages to; every later ``message``
event carries one frame from the server. The endpoint is resolved against the SSE URL and must
be on the same origin (scheme, host and port): a server naming another origin could otherwise
make the client send its traffic, headers included, anywhere, so such an endpoint is refused.

Opening waits at most ``timeout`` seconds for the ``endpoint`` event and raises
:class:`LegacySseError` when it does not come (or the GET is refused). Then:

- :meth:`LegacySseClientTransport.send` starts one POST per frame in the transport's nursery (at
  most ``max_concurrent_posts`` at once) and returns. A POST that fails (non-2xx, broken
  connection) answers the requests it carried with a JSON-RPC error response, so the caller
  fails promptly. Frames sent after ``notifications/initialized`` wait until that
  notification's POST has been answered, as for Streamable HTTP.
- :meth:`LegacySseClientTransport.receive` returns the frames of ``message`` events; events
  with other names are ignored. The transport has no resumption (2024-11-05 defines none): when
  the stream ends ``receive`` raises ``trio.EndOfChannel``, when it breaks (or stays silent for
  ``sse_read_timeout``) ``trio.BrokenResourceError``, and the session on top ends.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing, asynccontextmanager
from typing import Unpack
from urllib.parse import urljoin

import trio

from ....protocol.errors import TransportError
from ....protocol.sse import SseError, SseEvent, SseParser
from ....runtime.transport import Outgoing, OversizedFrame, TransportAbilities
from ..engine.client_pool import (
    HttpClientPool,
    HttpError,
    HttpResponse,
    OutcomeUnknown,
    split_url,
)
from .base import ERROR_BODY_LIMIT, HttpClientOptions, HttpClientSettings, HttpClientTransportBase
from .messages import OutgoingInfo
from .outcome import outcome_unknown
from .resources import open_client_resources

__all__ = ["LegacySseClientTransport", "LegacySseError", "open_legacy_sse_client_transport"]

log = logging.getLogger("mcptrio.transports.http.client.legacy_sse")


class LegacySseError(TransportError):
    """The HTTP+SSE transport could not be opened."""


def resolve_endpoint(sse_url: str, data: str) -> str:
    """The POST URL an ``endpoint`` event names, refused unless on the SSE URL's origin."""
    endpoint = urljoin(sse_url, data.strip())
    try:
        same = split_url(endpoint)[0] == split_url(sse_url)[0]
    except ValueError:
        same = False
    if not same:
        raise LegacySseError(
            f"The server's endpoint {endpoint!r} is not on the origin of {sse_url!r}"
        )
    return endpoint


class LegacySseClientTransport(HttpClientTransportBase):
    """A :class:`~mcptrio.runtime.transport.Transport` over HTTP+SSE.

    Made by :func:`open_legacy_sse_client_transport`, which owns the nursery its tasks run in.
    """

    def __init__(
        self, url: str, pool: HttpClientPool, nursery: trio.Nursery, options: HttpClientOptions
    ) -> None:
        super().__init__(url, pool, nursery, options)
        #: The POST URL, once the server has named it.
        self.endpoint: str | None = None

    async def send(self, frames: Sequence[Outgoing]) -> None:
        """Start one POST per frame to the endpoint; waits only for a free POST slot."""
        for frame in frames:
            await self._schedule(frame)

    def abilities(self) -> TransportAbilities:
        # Each frame is a POST of its own, made by the session's writer.
        return TransportAbilities()

    async def aclose(self) -> None:
        """Stop the stream and every POST; idempotent."""
        self._stop()
        await trio.lowlevel.checkpoint()

    # ------------------------------------------------------------ the SSE stream

    async def run_stream(self, *, task_status: trio.TaskStatus[str]) -> None:
        """Open the stream, report the endpoint through ``task_status``, then pump messages."""
        options = self.options
        headers = self._request_headers(("accept", "text/event-stream"))
        try:
            async with self._pool.request(
                "GET", self.url, headers=headers, read_timeout=options.sse_read_timeout
            ) as response:
                if response.status != 200 or response.content_type != "text/event-stream":
                    raise LegacySseError(
                        f"GET {self.url} answered HTTP {response.status} "
                        f"({response.content_type or 'no content type'}), not an SSE stream"
                    )
                parser = SseParser(max_line=options.max_frame_size + 64)
                self.endpoint, early = await self._await_endpoint(response, parser)
                task_status.started(self.endpoint)
                for event in early:
                    await self._on_event(event)
                await self._pump(response, parser)
        except HttpError as exc:
            if self.endpoint is None:
                raise LegacySseError(f"Cannot open the SSE stream {self.url}: {exc}") from exc
            log.info("the SSE stream from %s broke: %s", self.url, exc)
            self._broken = True
        except SseError as exc:
            if self.endpoint is None:
                raise LegacySseError(f"Invalid SSE stream from {self.url}: {exc}") from exc
            log.warning("unusable SSE stream from %s: %s", self.url, exc)
            await self._deliver(OversizedFrame(options.max_frame_size))
            self._broken = True
        finally:
            self._incoming_send.close()

    async def _await_endpoint(
        self, response: HttpResponse, parser: SseParser
    ) -> tuple[str, list[SseEvent]]:
        """Read until the ``endpoint`` event; returns it and the events that came after it."""
        timeout = self.options.timeout
        with trio.move_on_after(timeout):
            while True:
                chunk = await response.receive_some()
                if not chunk:
                    raise LegacySseError("The SSE stream ended before its endpoint event")
                events = parser.feed(chunk)
                for i, event in enumerate(events):
                    if event.event == "endpoint":
                        return resolve_endpoint(self.url, event.data), events[i + 1 :]
                    log.info("ignored a %r event before the endpoint event", event.event)
        raise LegacySseError(f"No endpoint event from {self.url} within {timeout} s")

    async def _pump(self, response: HttpResponse, parser: SseParser) -> None:
        while chunk := await response.receive_some():
            for event in parser.feed(chunk):
                await self._on_event(event)

    async def _on_event(self, event: SseEvent) -> None:
        data = self._message_of(event)
        if data is not None:
            await self._deliver(data)

    # ------------------------------------------------------------ POST

    async def _post_frame(self, data: bytes, info: OutgoingInfo) -> None:
        assert self.endpoint is not None
        headers = self._request_headers(("content-type", "application/json"))
        try:
            async with self._pool.request(
                "POST",
                self.endpoint,
                headers=headers,
                body=data,
                read_timeout=self.options.timeout,
            ) as response:
                if 200 <= response.status < 300:
                    response.drain_buffered()
                    return
                body = await response.read(ERROR_BODY_LIMIT)
                status, reason, ctype = response.status, response.reason, response.content_type
        except OutcomeUnknown as exc:
            if info.request_ids:
                await self._fail_requests(info.request_ids, outcome_unknown(data, str(exc)))
            return
        except HttpError as exc:
            log.info("POST to %s failed: %s", self.endpoint, exc)
            await self._fail_requests(info.request_ids, exc)
            return
        await self._refused(info.request_ids, status, reason, body, ctype)


@asynccontextmanager
async def open_legacy_sse_client_transport(
    url: str,
    *,
    ssl_context: ssl.SSLContext | None = None,
    pool: HttpClientPool | None = None,
    **settings: Unpack[HttpClientSettings],
) -> AsyncIterator[LegacySseClientTransport]:
    """Open an HTTP+SSE client transport to the SSE URL ``url``.

    Connects, waits up to ``timeout`` seconds for the ``endpoint`` event (raising
    :class:`LegacySseError` otherwise) and yields the transport. ``headers`` go on every
    request. ``pool`` and ``ssl_context`` are as for
    :func:`~mcptrio.transports.http.client.streamable.open_streamable_http_client_transport`.
    Leaving the block closes the stream and stops every POST.
    """
    options = HttpClientOptions.of(settings)
    async with open_legacy_sse(url, options, pool=pool, ssl_context=ssl_context) as transport:
        yield transport


@asynccontextmanager
async def open_legacy_sse(
    url: str,
    options: HttpClientOptions,
    *,
    pool: HttpClientPool | None,
    ssl_context: ssl.SSLContext | None = None,
) -> AsyncIterator[LegacySseClientTransport]:
    """:func:`open_legacy_sse_client_transport` with its options in one record."""
    async with open_client_resources(pool, options, ssl_context=ssl_context, streams=2) as (
        http,
        tasks,
    ):
        transport = LegacySseClientTransport(url, http, tasks, options)
        await tasks.start(transport.run_stream)
        async with aclosing(transport):
            yield transport
