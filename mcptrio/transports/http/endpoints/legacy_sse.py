"""The HTTP+SSE transport of 2024-11-05, server side: a GET stream and a POST endpoint.

``GET <prefix>/sse`` opens the stream; its first event, ``endpoint``, carries the URI to POST
to: ``<prefix>/messages?session_id=<id>``. Every message the client POSTs there is answered
202 Accepted, and whatever the session sends (answers included) goes on the one SSE stream.

The session lives exactly as long as its GET stream, in that request's own task: when the client
goes away the front end cancels the task and the session ends with it. The protocol has no
resumption, so nothing is kept after that; POSTs for the id then get 404.

POSTed frames wait for the session's reader in a queue bounded twice: :data:`FRAME_QUEUE`
frames and :data:`BYTE_QUEUE` bytes (one frame larger than that is let in alone). A POST that
finds it full waits, holding its connection, until the session reads on; so a client whose
session is stalled (it does not read its stream) cannot park more than that in our memory.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from urllib.parse import parse_qs

import trio

from ....protocol.errors import PARSE_ERROR, InvalidRequest, ParseError
from ....protocol.sse import encode_event
from ....runtime.session import SessionFactory
from ....runtime.transport import Frame, Outgoing, TransportAbilities
from ..engine.exchange import HttpRequest, HttpResponder, header
from .envelope_peek import peek
from .request_checks import accepts, read_json_body
from .responses import SSE_HEADERS, send_error
from .scope_check import scope_refusal
from .security import HttpSecurity, Principal, may_use
from .session_registry import new_session_id
from .sse_stream import sse_event_parts

__all__ = ["LegacySseEndpoint", "LegacySseTransport"]

log = logging.getLogger("mcptrio.http")

_COALESCE = 64
#: The most POSTed frames waiting for a session's reader, in frames and in bytes.
FRAME_QUEUE = 256
BYTE_QUEUE = 8 << 20


class LegacySseTransport:
    """The transport of one HTTP+SSE session: POSTs in, one SSE stream out."""

    def __init__(
        self,
        session_id: str,
        principal: Principal | None,
        *,
        buffer: int = FRAME_QUEUE,
        byte_limit: int = BYTE_QUEUE,
    ) -> None:
        self.session_id = session_id
        self.principal = principal
        self._in_send, self._in_receive = trio.open_memory_channel[bytes](buffer)
        self._out_send, self.outgoing = trio.open_memory_channel[bytes](buffer)
        self._byte_limit = byte_limit
        #: Bytes of POSTed frames waiting for the session's reader.
        self.queued_bytes = 0
        self._room = trio.lowlevel.ParkingLot()
        self._closed = False

    async def receive(self) -> Frame:
        try:
            frame = await self._in_receive.receive()
        except trio.ClosedResourceError:
            raise trio.EndOfChannel from None
        self.queued_bytes -= len(frame)
        self._room.unpark_all()
        return frame

    async def send(self, frames: Sequence[Outgoing]) -> None:
        for frame in frames:
            await self._out_send.send(frame.data)

    def abilities(self) -> TransportAbilities:
        return TransportAbilities(send_nowait=self.send_nowait)

    def send_nowait(self, frame: Outgoing) -> bool:
        try:
            self._out_send.send_nowait(frame.data)
        except (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
            return False
        return True

    async def deliver(self, frame: bytes) -> bool:
        """Hand a POSTed frame to the session, waiting for room; ``False`` if it has ended."""
        while self.queued_bytes and self.queued_bytes + len(frame) > self._byte_limit:
            if self._closed:
                return False
            await self._room.park()
        self.queued_bytes += len(frame)
        try:
            await self._in_send.send(frame)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            self.queued_bytes -= len(frame)
            return False
        except BaseException:
            self.queued_bytes -= len(frame)
            raise
        return True

    async def aclose(self) -> None:
        self._closed = True
        self._in_send.close()
        self._in_receive.close()
        self._out_send.close()
        # POSTs waiting for room find the channel closed.
        self._room.unpark_all()


def session_id_parameter(query_string: bytes) -> bytes | None:
    """The ``session_id`` query parameter (the first, if repeated), or ``None``."""
    values = parse_qs(query_string.decode("latin-1")).get("session_id")
    return values[0].encode("latin-1") if values else None


@dataclass
class LegacySseEndpoint:
    """Serves the two HTTP+SSE endpoints; see the module docstring."""

    factory: SessionFactory
    security: HttpSecurity
    _: KW_ONLY
    sse_path: str
    messages_path: str
    #: With several workers, the instance name that starts this worker's session ids.
    id_prefix: str | None = None
    #: The live sessions, by id.
    sessions: dict[str, LegacySseTransport] = field(default_factory=dict)

    def endpoint_uri(self, request_path: str, session_id: str) -> str:
        """Where the client POSTs: the messages path under the same prefix as the SSE path."""
        prefix = request_path[: -len(self.sse_path)] if request_path.endswith(self.sse_path) else ""
        return f"{prefix}{self.messages_path}?session_id={session_id}"

    async def open_stream(
        self,
        request: HttpRequest,
        responder: HttpResponder,
        principal: Principal | None,
        *,
        at_capacity: bool,
    ) -> None:
        accept = header(request.headers, b"accept")
        if accept is not None and not accepts(accept, b"text/event-stream"):
            await send_error(responder, 406, "Accept must list text/event-stream")
            return
        if at_capacity:
            retry = (b"retry-after", str(self.security.retry_after).encode())
            await send_error(responder, 503, "Too many sessions", headers=(retry,))
            return
        session_id = new_session_id(self.id_prefix)
        transport = LegacySseTransport(session_id, principal)
        session = self.factory.session(transport)
        self.sessions[session_id] = transport
        try:
            await responder.start_stream(200, SSE_HEADERS)
            await responder.send_chunk(
                encode_event(
                    # A router hands over the path below its mount point and the mount point
                    # as ``root_path``; the client needs the whole path.
                    self.endpoint_uri(getattr(request, "root_path", "") + request.path, session_id),
                    event="endpoint",
                )
            )
            async with trio.open_nursery() as nursery:
                await nursery.start(session.run)
                try:
                    await _pump(transport, responder)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    log.debug("legacy SSE client of session %s went away", session_id)
                nursery.cancel_scope.cancel()
        finally:
            self.sessions.pop(session_id, None)

    async def post_message(
        self, request: HttpRequest, responder: HttpResponder, principal: Principal | None
    ) -> None:
        session_id = session_id_parameter(request.query_string)
        if session_id is None:
            await send_error(responder, 400, "Missing session_id query parameter")
            return
        transport = self.sessions.get(session_id.decode("latin-1"))
        if transport is None or not may_use(principal, transport.principal):
            await send_error(responder, 404, "Session not found")
            return
        body = await read_json_body(request, responder, self.security.max_body_size)
        if body is None:
            return
        try:
            routing = peek(body)
        except ParseError as exc:
            await send_error(responder, 400, exc.message, code=PARSE_ERROR)
            return
        except InvalidRequest:
            # JSON that is not a message: the session answers it on the stream (-32600).
            pass
        else:
            refusal = scope_refusal(
                self.security, self.factory, request, principal, routing.message
            )
            if refusal is not None:
                await send_error(
                    responder, refusal.status, refusal.message, headers=refusal.headers
                )
                return
        if not await transport.deliver(body):
            await send_error(responder, 404, "Session not found")
            return
        await responder.send_response(202, ((b"content-type", b"text/plain"),), b"Accepted")


async def _pump(transport: LegacySseTransport, responder: HttpResponder) -> None:
    outgoing = transport.outgoing
    async for first in outgoing:
        parts = list(sse_event_parts(first, None))
        for _ in range(_COALESCE - 1):
            try:
                parts.extend(sse_event_parts(outgoing.receive_nowait(), None))
            except (trio.WouldBlock, trio.EndOfChannel):
                break
        await responder.send_chunk(*parts)
    await responder.end_stream()
