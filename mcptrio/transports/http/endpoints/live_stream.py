"""Writing a Streamable HTTP session's live SSE stream on one response.

:func:`write_live` writes a stream with its session's event store and SSE settings (the POST
that streams its own answer, a GET, a resume). :class:`StreamWriter` does it from the session's
nursery for a POST whose handler runs in the POST's own task (see
``StreamableHttpEndpoint._answer_inline``): the handler keeps that task busy, so another task
must write what it sends before its answer.
"""

from __future__ import annotations

import logging

import trio

from ....protocol.errors import ConnectionClosed
from ..engine.exchange import HttpResponder
from .http_session import HttpSession
from .responses import SSE_HEADERS
from .sse_stream import OutboundStream, write_stream

__all__ = ["StreamWriter", "write_live"]

log = logging.getLogger("mcptrio.http")


async def write_live(
    stream: OutboundStream, responder: HttpResponder, transport: HttpSession
) -> None:
    """Write a live stream of ``transport`` with the session's event store and SSE settings."""
    await write_stream(
        stream,
        responder,
        session_id=transport.session_id,
        event_store=transport.event_store,
        prime=transport.primes,
        retry_ms=transport.retry_ms,
    )


class StreamWriter:
    """Streams a POST's SSE answer from the session's nursery, for a handler running inline."""

    __slots__ = ("done", "responder", "scope", "started", "stream", "transport")

    # Most POSTs never start their writer: its scope and event are made only when one does.
    scope: trio.CancelScope
    done: trio.Event

    def __init__(
        self, transport: HttpSession, stream: OutboundStream, responder: HttpResponder
    ) -> None:
        self.transport = transport
        self.stream = stream
        self.responder = responder
        self.started = False

    def start(self) -> None:
        session = self.transport.session
        if self.started or session is None:
            return
        self.scope = trio.CancelScope()
        self.done = trio.Event()
        try:
            session.start_actor(self._run)
        except ConnectionClosed:
            return
        self.started = True

    async def _run(self) -> None:
        try:
            # The response belongs to the POST, not to the session: the session's end must not
            # cut a write in half (the POST finishes the stream instead, and the writer ends it
            # properly). Only the POST (``scope``) or a takeover stops it early.
            with trio.CancelScope(shield=True), self.scope:
                await self.responder.start_stream(200, SSE_HEADERS)
                await write_live(self.stream, self.responder, self.transport)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        except Exception:
            log.exception("writing the SSE answer of stream %s failed", self.stream.stream_id)
        finally:
            self.done.set()
