"""Streamable HTTP (2025-03-26 to 2026-07-28), server side: POST, GET and DELETE.

Status codes, in the order the checks run (Origin, Host and credentials are checked before, by
the app, for every endpoint):

=====================================================  ======================================
POST ``Accept`` lacks application/json or event-stream  406
POST ``Content-Type`` is not application/json           415
POST body over ``max_body_size``                        413
body is not JSON / not a JSON-RPC message               400, JSON-RPC -32700 / -32600, no id
no ``Mcp-Session-Id`` on anything but ``initialize``    400
unknown, ended or someone else's session                404
``MCP-Protocol-Version`` not a supported revision       400
(absent, or another supported one: accepted)
a batch outside 2025-03-26                              400, -32600
a request id already being answered in the session      400, -32600 with that id
``initialize`` past ``max_sessions``                    503 + ``Retry-After``
only notifications/responses                            202, no body
requests                                                200, JSON or SSE (see below)
GET without ``Accept: text/event-stream``               406
GET while another GET carries the standalone stream     409
GET with an unknown ``Last-Event-ID``                   400
DELETE                                                  204, then 404 for that id
any other method                                        405 + ``Allow``
=====================================================  ======================================

A POST with requests is answered as JSON when the first thing the session sends for it is its
answer, and switches to SSE as soon as anything else comes first (progress, a log message, a
request to the client); ``json_response=False`` always answers with SSE. An SSE answer whose
messages are all there within 50 ms goes out as one whole ``text/event-stream`` body (the same
events, stored the same way for resumption); otherwise its head goes out then and the messages
follow as they come. ``initialize`` is always JSON (the session id must be on the response head,
and the session kept only if it succeeds).

Disconnection is not cancellation: when a POST's client goes away, its request runs on and what
it sends waits on its stream (and in the event store) for a GET with ``Last-Event-ID``. A JSON
answer still unanswered after 50 to 100 ms has its connection watched (``departure_watch.py``), so a
client that leaves a long call gives its connection slot back at once, not when the call ends.

The stateless era (2026-07-28) shares the endpoint, per request: a POST whose ``_meta`` names
such a revision has its own checks and statuses (the table in ``stateless_era.py``: 400 with
-32020 / -32022 / -32602 / -32021, 404 with -32601, 202 for a notification), never a session id
(one sent is ignored), GET and DELETE with such an ``MCP-Protocol-Version`` get 405 +
``Allow: POST``. There closing the response stream *is* cancellation, a quiet request turns SSE
after a while even in JSON mode, and a quiet stream gets ``: keep-alive`` comments
(``stateless_era_post.py`` answers those POSTs).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING

from ....protocol.errors import (
    HEADER_MISMATCH,
    INVALID_REQUEST,
    PARSE_ERROR,
    ConnectionClosed,
    InvalidRequest,
    ParseError,
)
from ....protocol.request_meta import PROTOCOL_VERSION_KEY
from ....protocol.revisions import (
    ASSUMED_WITHOUT_VERSION_HEADER,
    SUPPORTED,
    revision_of,
    stateless_versions,
)
from ....stores.event_store import UnknownEventId
from ..engine.exchange import BodyTooLarge, HttpRequest, HttpResponder, header
from .envelope_peek import Peek, peek
from .http_session import STANDALONE_STREAM_ID, HttpSession, SessionEnded
from .inline_answer import answer_inline, answer_on_a_session_of_its_own
from .request_checks import (
    NOT_JSON,
    accepts,
    accepts_json_and_sse,
    is_json,
    repeated_routing_header,
    too_large,
)
from .responses import (
    JSON_HEADERS,
    SSE_HEADERS,
    send_error,
    with_session_id,
)
from .scope_check import scope_refusal
from .security import Principal
from .session_registry import EndpointNotRunning, SessionLimitReached, SessionRegistry
from .sse_stream import (
    KEEP_ALIVE_INTERVAL,
    OutboundStream,
    sse_event,
    write_stream,
)
from .stateless_era import (
    no_header_params,
    read_stateless_head,
    stateless_era_header,
)
from .stateless_era_post import StatelessEraPosts

if TYPE_CHECKING:
    from ....runtime.session import Session

__all__ = ["StreamableHttpEndpoint"]

log = logging.getLogger("mcptrio.http")

_ALLOW = ((b"allow", b"GET, POST, DELETE"),)
_ALLOW_POST = ((b"allow", b"POST"),)
_STATELESS_META_KEY = PROTOCOL_VERSION_KEY.encode()
_TASK_RESULT = "tasks/result"


class StreamableHttpEndpoint:
    """The MCP endpoint of Streamable HTTP; see the module docstring.

    Its sessions live in ``registry``, which also holds the server (``factory``) and the
    security settings.
    """

    def __init__(
        self,
        registry: SessionRegistry,
        *,
        json_response: bool = True,
        stateless: bool = False,
        stateless_transport: type[HttpSession] = HttpSession,
        keep_alive_interval: float = KEEP_ALIVE_INTERVAL,
    ) -> None:
        self.registry = registry
        self.security = registry.security
        self.json_response = json_response
        self.stateless = stateless
        self._stateless_transport = stateless_transport
        #: Seconds a streamed response may stay quiet before a ``: keep-alive`` comment.
        self.keep_alive_interval = keep_alive_interval
        #: Told of every answered POST of a session, when its state is kept in a shared store
        #: (:meth:`.session_keeping.SessionKeeping.state_changed`).
        self.state_changed: Callable[[HttpSession, Peek], None] | None = None
        supported = getattr(registry.factory, "supported_revisions", None)
        self._supported: frozenset[bytes] | None = (
            frozenset(r.encode() for r in supported) if isinstance(supported, tuple) else None
        )
        self._revisions: tuple[str, ...] = supported if isinstance(supported, tuple) else SUPPORTED
        self._stateless_revisions = stateless_versions(self._revisions)
        self._stateless_era = StatelessEraPosts(
            registry,
            json_response=json_response,
            transport_type=stateless_transport,
            keep_alive_interval=keep_alive_interval,
            revisions=self._revisions,
            tool_header_params=getattr(registry.factory, "tool_header_params", no_header_params),
        )

    async def handle(
        self,
        request: HttpRequest,
        responder: HttpResponder,
        principal: Principal | None,
        fields: Mapping[bytes, bytes],
    ) -> None:
        """Answer ``request`` for ``principal``; ``fields`` holds the first value of each of
        its headers, by name. The app awaits :meth:`post` for a POST and :meth:`get` for a GET
        itself."""
        method = request.method
        if method == "POST":
            await self.post(request, responder, principal, fields)
        elif method == "GET":
            await self.get(request, responder, principal, fields)
        elif await self._refused_without_post(request, responder, fields):
            return
        elif method == "DELETE":
            await self._delete(request, responder, principal, fields)
        else:
            await send_error(responder, 405, f"Method {method} not allowed", headers=_ALLOW)

    async def _refused_without_post(
        self, request: HttpRequest, responder: HttpResponder, fields: Mapping[bytes, bytes]
    ) -> bool:
        """Whether a request other than a POST was refused: a repeated routing header (400),
        or no GET stream and no session to DELETE (405 + ``Allow: POST``), as in the stateless
        era (named by the request, or the only one this endpoint serves)."""
        if await self._refused_repeats(request, responder, fields):
            return True
        if self.stateless or stateless_era_header(request.headers, self._stateless_revisions):
            method = request.method
            await send_error(responder, 405, f"Method {method} not allowed", headers=_ALLOW_POST)
            return True
        return False

    # ------------------------------------------------------------------ POST

    async def post(
        self,
        request: HttpRequest,
        responder: HttpResponder,
        principal: Principal | None,
        fields: Mapping[bytes, bytes],
    ) -> None:
        """Answer a POST (see :meth:`handle`). A GET stream's task never holds this coroutine,
        whose frame is a large one: :meth:`handle` is small for them."""
        # A POST, from its checks to handing its body to the session, in this one coroutine,
        # and the checks as plain functions: no coroutine per check on every POST.
        headers = request.headers
        if len(fields) != len(headers) and await self._refused_repeats(request, responder, fields):
            return
        if not accepts_json_and_sse(fields.get(b"accept")):
            await send_error(
                responder, 406, "Accept must list both application/json and text/event-stream"
            )
            return
        if not is_json(fields.get(b"content-type")):
            await send_error(responder, 415, NOT_JSON)
            return
        security = self.security
        limit = security.max_body_size
        try:
            body = await request.read_body(limit)
        except BodyTooLarge:
            await send_error(responder, 413, too_large(limit))
            return
        try:
            routing = peek(body)
        except ParseError as exc:
            await send_error(responder, 400, exc.message, code=PARSE_ERROR)
            return
        except InvalidRequest as exc:
            await send_error(responder, 400, exc.message)
            return
        if security.authenticator is not None:
            refusal = scope_refusal(
                security, self.registry.factory, request, principal, routing.message
            )
            if refusal is not None:
                await send_error(
                    responder, refusal.status, refusal.message, headers=refusal.headers
                )
                return
        session_id = fields.get(b"mcp-session-id")
        # A server of the handshake era only answers such a POST as it always did. A
        # stateless-era request ignores an Mcp-Session-Id (the spec's advice to servers); a
        # session's own POSTs skip the decoding unless the body could name a revision (the
        # _meta key appears in its bytes).
        if self._stateless_revisions and (
            session_id is None or self.stateless or body.find(_STATELESS_META_KEY) >= 0
        ):
            head = read_stateless_head(routing.message, headers, self._stateless_revisions)
            if head is not None:
                await self._stateless_era.post(responder, fields, body, routing, head)
                return
        if self.stateless:
            await self._post_stateless(request, responder, body, routing)
            return
        if session_id is None and routing.initialize:
            client = self.security.client_host(request)
            await self._initialize(responder, body, routing, principal, client)
            return
        transport = self._find_session(fields, principal, session_id)
        if not isinstance(transport, HttpSession):
            await send_error(responder, *transport)
            return
        if routing.batch and not _batches_allowed(transport.revision):
            await send_error(
                responder, 400, f"Protocol revision {transport.revision} has no JSON-RPC batches"
            )
            return
        request_ids = routing.request_ids
        transport.exchanges += 1
        try:
            if not request_ids:
                await self._accept(transport, responder, body, routing)
                return
            if transport.owns_any(request_ids):
                busy = next(rid for rid in request_ids if transport.owns_any((rid,)))
                await send_error(
                    responder, 400, f"Request id {busy!r} is already in use by a request in flight"
                )
                return
            # The body is delivered to the session in this task, which waits for the answers.
            stream = transport.open_request_stream(request_ids)
            try:
                session = transport.session
                if session is None:
                    await send_error(responder, 404, "Session ended")
                    return
                await self._answer_inline(transport, session, stream, responder, body, routing)
            finally:
                transport.release_stream(stream)
        finally:
            transport.exchanges -= 1
            transport.touch()
            if self.state_changed is not None:
                self.state_changed(transport, routing)

    async def _refused_repeats(
        self, request: HttpRequest, responder: HttpResponder, fields: Mapping[bytes, bytes]
    ) -> bool:
        """Whether ``request`` was refused (400) for a routing header sent more than once: a
        stateless-era one with -32020, the header mismatch of its era. A POST asks only when
        ``fields`` is shorter than the header list, which only a repeated name makes it."""
        repeated = repeated_routing_header(request.headers)
        if repeated is None:
            return False
        stateless = stateless_era_header(request.headers, self._stateless_revisions)
        code = HEADER_MISMATCH if stateless else INVALID_REQUEST
        await send_error(responder, 400, f"Repeated {repeated} header", code=code)
        return True

    async def _answer_inline(
        self,
        transport: HttpSession,
        session: Session,
        stream: OutboundStream,
        responder: HttpResponder,
        body: bytes,
        routing: Peek,
    ) -> None:
        """:func:`answer_inline` of a POST's requests with this endpoint's settings; the session
        reads the one message peek decoded, not the body again."""
        message = routing.message
        # A tasks/result waits for its task, which runs on in the session without it: once its
        # stream has opened with an event id (``primes``), the client can resume it after a
        # cut, so it is a long poll that gives up its slot when another client needs one.
        long_poll = message is not None and message.method == _TASK_RESULT and transport.primes
        await answer_inline(
            transport,
            session,
            stream,
            responder,
            body if message is None else message,
            json_response=self.json_response,
            departure_watch=self.registry.departure_watch,
            busy_retry_after=self.security.retry_after,
            long_poll=long_poll,
        )

    def _find_session(
        self, fields: Mapping[bytes, bytes], principal: Principal | None, session_id: bytes | None
    ) -> HttpSession | tuple[int, str]:
        """The session ``session_id`` names, or the status and message to refuse the request
        with: 400 without an id, 404 for an id that is not a live session of ``principal``, 400
        for an unsupported ``MCP-Protocol-Version``."""
        if session_id is None:
            return 400, "Missing Mcp-Session-Id header"
        transport = self.registry.lookup(session_id, principal)
        if transport is None:
            return 404, "Session not found"
        version = fields.get(b"mcp-protocol-version")
        if version is None:
            # The spec's fallback (assume 2025-03-26) is for servers that cannot tell; this one
            # knows what the session negotiated.
            return transport
        # A supported version other than the negotiated one is accepted, as the official SDKs
        # do (and the conformance suite expects): the session keeps its negotiated revision,
        # and the header is there for intermediaries. Only an unsupported value is refused.
        supported = self._supported
        if supported is not None and version not in supported:
            return 400, f"Unsupported MCP-Protocol-Version: {version!r}"
        return transport

    async def _session_of(
        self, responder: HttpResponder, principal: Principal | None, fields: Mapping[bytes, bytes]
    ) -> HttpSession | None:
        """The session the request names (see :meth:`_find_session`), or ``None`` once the
        request was refused."""
        found = self._find_session(fields, principal, fields.get(b"mcp-session-id"))
        if isinstance(found, HttpSession):
            return found
        await send_error(responder, *found)
        return None

    async def _initialize(
        self,
        responder: HttpResponder,
        body: bytes,
        routing: Peek,
        principal: Principal | None,
        client: str | None,
    ) -> None:
        try:
            transport = await self.registry.create(principal, client)
        except SessionLimitReached:
            retry = (b"retry-after", str(self.security.retry_after).encode())
            await send_error(responder, 503, "Too many sessions", headers=(retry,))
            return
        except EndpointNotRunning:
            await send_error(responder, 503, "The MCP endpoint is not running")
            return
        transport.exchanges += 1
        stream = transport.open_request_stream(routing.request_ids)
        try:
            session = transport.session
            if session is None:
                raise SessionEnded
            # The protocol layer answers initialize at once, in this task.
            await session.deliver(body)
            await stream.wait()
            if not stream.pending:
                await send_error(responder, 404, "Session ended")
                return
            answer = stream.pending.pop(0)
            stream.took()
            if session.revision is None:
                # Refused: the handshake did not complete, and the session is of no use.
                transport.close()
                await responder.send_response(200, JSON_HEADERS, answer)
                return
            if self.state_changed is not None:
                # Before the answer: a client that leaves once it has it may end this task.
                self.state_changed(transport, routing)
            await responder.send_response(
                200, with_session_id(JSON_HEADERS, transport.session_id), answer
            )
        except (SessionEnded, ConnectionClosed):
            await send_error(responder, 404, "Session ended")
        finally:
            transport.release_stream(stream)
            transport.exchanges -= 1
            transport.touch()

    async def _accept(
        self, transport: HttpSession, responder: HttpResponder, body: bytes, routing: Peek
    ) -> None:
        """Hand a POST of notifications and responses to its session: 202."""
        session = transport.session
        try:
            if session is None:
                raise SessionEnded
            await session.deliver(body)
        except (SessionEnded, ConnectionClosed):
            await send_error(responder, 404, "Session ended")
            return
        await responder.send_response(202, ())

    # ------------------------------------------------------------------ stateless

    async def _post_stateless(
        self, request: HttpRequest, responder: HttpResponder, body: bytes, routing: Peek
    ) -> None:
        """One fresh session per POST, in this exchange's own task, gone after the answer.

        There is nothing to resume and no one to answer a request to the client, so the
        session has no event store and assumes a client with no capabilities.
        """
        if not routing.request_ids:
            # A notification or response has no session to reach: accepted and dropped.
            await responder.send_response(202, ())
            return
        if routing.batch:
            await send_error(responder, 400, "Batches are not accepted by a stateless server")
            return
        transport = self._stateless_transport(
            "", event_store=None, keep_alive_interval=self.keep_alive_interval
        )
        session = transport.session = self.registry.factory.session(transport)
        if not routing.initialize:
            version = header(request.headers, b"mcp-protocol-version")
            revision = (
                ASSUMED_WITHOUT_VERSION_HEADER if version is None else version.decode("latin-1")
            )
            try:
                session.start_initialized(revision)
            except ValueError:
                await send_error(responder, 400, f"Unsupported MCP-Protocol-Version: {revision}")
                return
        stream = transport.open_request_stream(routing.request_ids)
        await answer_on_a_session_of_its_own(
            session,
            partial(self._answer_inline, transport, session, stream, responder, body, routing),
        )

    # ------------------------------------------------------------------ GET

    async def get(
        self,
        request: HttpRequest,
        responder: HttpResponder,
        principal: Principal | None,
        fields: Mapping[bytes, bytes],
    ) -> None:
        """Answer a GET (see :meth:`handle`): the session's standalone stream, or the rest of a
        stream it resumes. The stream's task holds this frame for the stream's whole life, and
        no frame of :meth:`handle`."""
        if await self._refused_without_post(request, responder, fields):
            return
        if not accepts(fields.get(b"accept"), b"text/event-stream"):
            await send_error(responder, 406, "Accept must list text/event-stream")
            return
        transport = await self._session_of(responder, principal, fields)
        if transport is None:
            return
        transport.exchanges += 1
        try:
            last_event_id = fields.get(b"last-event-id")
            if last_event_id is not None:
                await self._resume(transport, responder, last_event_id)
                return
            stream = transport.standalone
            if stream.attached:
                await send_error(responder, 409, "This session already has a GET stream open")
                return
            await responder.start_stream(200, SSE_HEADERS)
            # The client reopens it (with Last-Event-ID for what it missed): a server short of
            # connections may cut it rather than turn a request away.
            responder.allow_eviction()
            await write_stream(stream, responder, transport)
        finally:
            transport.exchanges -= 1
            transport.touch()

    async def _resume(
        self, transport: HttpSession, responder: HttpResponder, last_event_id: bytes
    ) -> None:
        store = transport.event_store
        if store is None:
            await send_error(responder, 400, "This server does not resume streams")
            return
        try:
            replay = await store.replay_after(
                transport.session_id, last_event_id.decode("ascii").strip()
            )
        except (UnknownEventId, UnicodeDecodeError):
            await send_error(responder, 400, "Unknown Last-Event-ID")
            return
        if replay.missed:
            log.warning(
                "resuming stream %s of session %s: %d events were evicted and are lost",
                replay.stream_id,
                transport.session_id,
                replay.missed,
            )
        stream = transport.stream(replay.stream_id)
        await responder.start_stream(200, SSE_HEADERS)
        if stream is None:
            # The stream is over and fully written: replay what the client missed, then end.
            if replay.events:
                await responder.send_chunk(b"".join(sse_event(m, e) for e, m in replay.events))
            await responder.end_stream()
            return
        # Reopened once, it can be reopened again: like the standalone stream, it may be cut.
        responder.allow_eviction()
        await write_stream(
            stream, responder, transport, resume_after=last_event_id.decode("ascii").strip()
        )
        if stream.drained and stream.stream_id != STANDALONE_STREAM_ID:
            transport.streams.pop(stream.stream_id, None)

    # ------------------------------------------------------------------ DELETE

    async def _delete(
        self,
        request: HttpRequest,
        responder: HttpResponder,
        principal: Principal | None,
        fields: Mapping[bytes, bytes],
    ) -> None:
        transport = await self._session_of(responder, principal, fields)
        if transport is None:
            return
        self.registry.end(transport)
        await responder.send_response(204, ())


def _batches_allowed(revision: str | None) -> bool:
    return revision is not None and revision_of(revision).batches
