"""Open an HTTP client transport to a URL, whichever of the two HTTP transports the server speaks.

The spec's backwards-compatibility recipe for clients: POST the ``initialize`` request to the
URL as Streamable HTTP; if that fails with ``400``, ``404`` or ``405`` (2025-11-25; the
2025-03-26 text said any 4xx), GET the same URL expecting an SSE stream whose first event is
``endpoint``, and if it comes, speak the old HTTP+SSE transport from then on.

The ``initialize`` request is sent by the session through ``send()``, so the choice is made
inside the transport, at that first POST:

1. :class:`HttpClientTransport` starts as a Streamable HTTP transport and passes the session's
   frames to it. Its ``receive`` waits until the choice is made.
2. The Streamable transport reports the status of the first ``initialize`` POST. On a fallback
   status, the HTTP+SSE transport is opened at the same URL (in this transport's nursery, with
   the same connection pool); if its ``endpoint`` event arrives, the ``initialize`` frame is
   re-sent through it and every later frame goes there too. If the fallback fails, the
   ``initialize`` gets the original HTTP error as its response, so the caller sees why.
3. Any other outcome keeps Streamable HTTP.

Which statuses fall back depends on the revision the ``initialize`` offers: 400/404/405 from
2025-11-25 on, any 4xx for older offers (as those revisions said).

A client that probes the stateless era first (2026-07-28) sends ``server/discover`` before any
``initialize``, and the same choice is made at that first POST (CHECKLIST 7.7): a 400, 404 or
405 whose body is not a stateless-era error (-32020, -32021, -32022) is tried as HTTP+SSE at
once. When the ``endpoint`` event comes, the probe gets an error answer from here (so the client
falls back to ``initialize``, which then goes over HTTP+SSE); otherwise the probe gets the
server's own answer and the client decides as it would on any transport.
"""

from __future__ import annotations

import logging
import ssl
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, aclosing, asynccontextmanager
from functools import partial
from typing import Unpack

import trio

from ....protocol.codec import CarriedResult
from ....protocol.revisions import REVISIONS, SUPPORTED, revision_of
from ....runtime.transport import (
    Delivered,
    FailedRequest,
    Frame,
    Outgoing,
    Transport,
    TransportAbilities,
)
from ..engine.client_pool import HttpClientPool, HttpError
from .base import HttpClientOptions, HttpClientSettings
from .legacy_sse import (
    LegacySseClientTransport,
    LegacySseError,
    open_legacy_sse,
)
from .messages import error_response, offered_revision, peek_outgoing
from .resources import open_client_resources
from .stateless_headers import HeaderParams, is_stateless_refusal, is_stateless_request
from .streamable import StreamableHttpClientTransport, open_streamable

__all__ = ["HttpClientTransport", "fallback_statuses", "open_http_client_transport"]

log = logging.getLogger("mcptrio.transports.http.client.transport")


def fallback_statuses(offered: str | None) -> frozenset[int]:
    """The ``initialize`` POST statuses that send a client to HTTP+SSE, by offered revision
    (unknown: the newest revision's rule)."""
    revision = revision_of(offered) if offered in SUPPORTED else REVISIONS[0]
    return revision.http_sse_fallback_statuses


class HttpClientTransport:
    """Streamable HTTP, or HTTP+SSE when the server turns out to speak only that.

    ``kind`` is ``"streamable"`` or ``"legacy"`` once the first ``initialize`` was answered.
    """

    def __init__(
        self,
        url: str,
        nursery: trio.Nursery,
        open_legacy: Callable[[], AbstractAsyncContextManager[LegacySseClientTransport]],
    ) -> None:
        self.url = url
        self.kind = "streamable"
        self._nursery = nursery
        self._open_legacy = open_legacy
        self._current: Transport | None = None
        self._decided = trio.Event()
        self._first_sent = False
        #: Answers made here rather than by the server (the probe's, on a fallback).
        self._answers: deque[bytes] = deque(maxlen=1)

    @property
    def inner(self) -> Transport:
        """The transport in use."""
        assert self._current is not None
        return self._current

    async def receive(self) -> Frame | FailedRequest | CarriedResult:
        await self._decided.wait()
        if self._answers:
            await trio.lowlevel.checkpoint()
            return self._answers.popleft()
        return await self.inner.receive()

    async def send(self, frames: Sequence[Outgoing]) -> None:
        if not self._first_sent and frames:
            self._first_sent = True
            data = frames[0].data
            if peek_outgoing(data).method != "initialize" and not is_stateless_request(data):
                # Not the lifecycle the fallback is for: stay with Streamable HTTP.
                self._decided.set()
        await self.inner.send(frames)

    def _deliver_responses_to(self, deliver: Callable[[Delivered], Awaitable[None]]) -> None:
        """Let the Streamable HTTP transport hand responses straight to the session's
        ``deliver``; HTTP+SSE delivers through :meth:`receive`."""
        inner = self._current
        if isinstance(inner, StreamableHttpClientTransport):
            hand = inner.abilities().deliver_to
            if hand is not None:
                hand(deliver)

    def abilities(self) -> TransportAbilities:
        return TransportAbilities(
            send_nowait=self.send_nowait,
            exchange=self.exchange,
            deliver_to=self._deliver_responses_to,
        )

    def send_nowait(self, frame: Outgoing) -> bool:
        """Hand ``frame`` to the transport in use without waiting, when it can take it so
        (Streamable HTTP with a free POST slot); the first frame always goes through
        :meth:`send`, which makes the choice of transport."""
        if not self._first_sent:
            return False
        inner = self.inner
        return isinstance(inner, StreamableHttpClientTransport) and inner.send_nowait(frame)

    async def exchange(self, frame: Outgoing) -> bool:
        """Carry the request ``frame`` in the calling task when the transport in use can (see
        :meth:`StreamableHttpClientTransport.exchange`); the first frame always goes through
        :meth:`send`, which makes the choice of transport."""
        if not self._first_sent:
            return False
        inner = self.inner
        return isinstance(inner, StreamableHttpClientTransport) and await inner.exchange(frame)

    async def aclose(self) -> None:
        self._decided.set()
        if self._current is not None:
            await self._current.aclose()
        self._nursery.cancel_scope.cancel()

    def set_header_params(self, header_params: HeaderParams) -> None:
        """Where the Streamable HTTP transport finds a tool's ``x-mcp-header`` arguments."""
        inner = self._current
        if isinstance(inner, StreamableHttpClientTransport):
            inner.header_params = header_params

    async def on_initialize_outcome(self, frame: bytes, status: int, body: bytes | None) -> bool:
        """The Streamable transport's report on the first ``initialize`` or stateless-era POST
        (``body``: the start of the refusal of the latter)."""
        try:
            probe = peek_outgoing(frame)
            if probe.method == "initialize":
                if status not in fallback_statuses(offered_revision(frame)):
                    return False
            elif status not in (400, 404, 405) or is_stateless_refusal(body):
                return False
            log.info("%s answered %s with HTTP %d; trying HTTP+SSE", self.url, probe.method, status)
            try:
                legacy: LegacySseClientTransport = await self._nursery.start(self._host_legacy)
            except (LegacySseError, HttpError) as exc:
                log.info("no HTTP+SSE server at %s either: %s", self.url, exc)
                return False
            # The Streamable transport stays open, idle, until the block exits: this very call
            # runs in one of its tasks.
            self._current, self.kind = legacy, "legacy"
            if probe.method == "initialize":
                await legacy.send([Outgoing(frame)])
            elif probe.request_ids:
                message = (
                    f"HTTP {status}: the server speaks the HTTP+SSE transport"
                    f" ({REVISIONS[-1].version})"
                )
                self._answers.append(error_response(probe.request_ids[0], -32601, message))
            return True
        finally:
            self._decided.set()

    async def _host_legacy(self, *, task_status: trio.TaskStatus[LegacySseClientTransport]) -> None:
        async with self._open_legacy() as legacy:
            task_status.started(legacy)
            await trio.sleep_forever()


@asynccontextmanager
async def open_http_client_transport(
    url: str,
    *,
    ssl_context: ssl.SSLContext | None = None,
    pool: HttpClientPool | None = None,
    **settings: Unpack[HttpClientSettings],
) -> AsyncIterator[HttpClientTransport]:
    """Open a client transport to the MCP server at ``url``, falling back to HTTP+SSE.

    The arguments are those of
    :func:`~mcptrio.transports.http.client.streamable.open_streamable_http_client_transport`,
    and apply to whichever transport is chosen. Leaving the block closes it.
    """
    options = HttpClientOptions.of(settings)
    # ``tasks`` is the fallback's home, which closing cancels: the caller's block is not in it.
    async with open_client_resources(pool, options, ssl_context=ssl_context, streams=8) as (
        http,
        tasks,
    ):
        transport = HttpClientTransport(
            url, tasks, partial(open_legacy_sse, url, options, pool=http)
        )
        async with open_streamable(
            url, options, pool=http, on_initialize_outcome=transport.on_initialize_outcome
        ) as streamable:
            transport._current = streamable
            async with aclosing(transport):
                yield transport
