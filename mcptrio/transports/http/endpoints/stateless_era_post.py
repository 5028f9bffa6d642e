"""Streamable HTTP in the stateless era (2026-07-28): answering a POST, with no session.

:class:`StatelessEraPosts` takes a POST the endpoint found to be of this era (its checks are
in :mod:`.stateless_era`) and answers its lone request on a session that never shakes hands:
the session's connection reads the request at the revision its ``_meta`` names. One such
session, shared by the endpoint (:meth:`SessionRegistry.shared_session
<.session_registry.SessionRegistry.shared_session>`), answers nearly every request; a
``subscriptions/listen`` stream, which would hold one of its in-flight slots for as long as it
stays open, and a request whose id another client has in flight there, get a fresh session each.

Closing the response stream is cancellation in this era, and a request that stays quiet turns
its JSON-mode answer into SSE after ``_JSON_HEAD_DELAY`` (so that keep-alives flow and the
closing is noticed).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial

from ....protocol import codec
from ....protocol.base import RequestId
from ....protocol.codec import Envelope
from ....protocol.errors import METHOD_NOT_FOUND, McpError
from ....protocol.http_headers import PropertyPath
from ....runtime.session import Session
from ..engine.exchange import HttpResponder
from .envelope_peek import Peek
from .http_session import HttpSession
from .inline_answer import answer_inline, answer_on_a_session_of_its_own
from .live_stream import StreamWriter
from .responses import JSON_HEADERS, send_error
from .session_registry import EndpointNotRunning, SessionRegistry
from .stateless_era import (
    StatelessChecks,
    StatelessHead,
    answer_status,
    cancel_on_disconnect,
    cancel_when_gone,
)

__all__ = ["StatelessEraPosts"]

#: Seconds a stateless-era request may stay unanswered before its JSON-mode POST turns SSE.
_JSON_HEAD_DELAY = 1.0


class StatelessEraPosts:
    """Answers an endpoint's stateless-era POSTs; see the module docstring."""

    def __init__(
        self,
        registry: SessionRegistry,
        *,
        json_response: bool,
        transport_type: type[HttpSession],
        keep_alive_interval: float,
        revisions: tuple[str, ...],
        tool_header_params: Callable[[str], Mapping[PropertyPath, str] | None],
    ) -> None:
        self.registry = registry
        self.json_response = json_response
        self._transport_type = transport_type
        self.keep_alive_interval = keep_alive_interval
        self._checks = StatelessChecks(revisions, tool_header_params)

    async def post(
        self,
        responder: HttpResponder,
        fields: Mapping[bytes, bytes],
        body: bytes,
        routing: Peek,
        head: StatelessHead,
    ) -> None:
        """Answer a stateless-era POST (see ``stateless_era.py``): one request, no session.
        ``fields``: each header's first value by name.

        It runs like a stateless POST of the handshake era, on a session that never shakes
        hands: its connection reads the request at the revision its ``_meta`` names.
        """
        if routing.batch or routing.response_ids:
            await send_error(responder, 400, "Only one request or notification per POST")
            return
        if not routing.request_ids:
            await responder.send_response(202, ())
            return
        try:
            self._checks.check(head, fields)
        except McpError as exc:
            status = 404 if exc.code == METHOD_NOT_FOUND else 400
            await responder.send_response(
                status, JSON_HEADERS, codec.encode_error(routing.request_ids[0], exc)
            )
            return
        shared = self.registry.shared
        # Awaited only to start it: nearly every request finds it running.
        if shared is None or shared.is_ended:
            try:
                shared = await self.registry.shared_session(self._make_transport)
            except EndpointNotRunning:
                await send_error(responder, 503, "The MCP endpoint is not running")
                return
        rid = routing.request_ids[0]
        # The session reads the message the endpoint decoded, not the body again.
        message = routing.message
        assert message is not None
        session = shared.session
        # A listen stream would hold one of the shared session's in-flight slots for as long as
        # it stays open: each gets a session of its own, and so does a request whose id another
        # client has in flight on the shared session.
        listen = head.method == "subscriptions/listen"
        if session is not None and not listen and not shared.owns_any(routing.request_ids):
            await self._answer(shared, session, responder, message, rid)
            return
        transport = self._make_transport()
        session = transport.session = self.registry.factory.session(transport)
        # A listen stream waits on the server for as long as it is open, and its client sends it
        # again if it is cut: a long poll, which gives up its slot when needed.
        await answer_on_a_session_of_its_own(
            session,
            partial(self._answer, transport, session, responder, message, rid, long_poll=listen),
        )

    def _make_transport(self) -> HttpSession:
        return self._transport_type(
            "", event_store=None, keep_alive_interval=self.keep_alive_interval
        )

    async def _answer(
        self,
        transport: HttpSession,
        session: Session,
        responder: HttpResponder,
        message: Envelope,
        rid: RequestId,
        *,
        long_poll: bool = False,
    ) -> None:
        """Answer a stateless-era request on ``session``, in this POST's task (a ``long_poll``
        as :func:`answer_inline` says)."""

        transport.exchanges += 1
        stream = transport.open_request_stream([rid])

        def watch(writer: StreamWriter) -> None:
            # Closing the response stream is cancellation in this era. A write finds out (the
            # writer stops); so does the front end, which reads EOF while a stream is open. No
            # nursery per request for this: a request answered at once never needs either.
            session.start_actor(cancel_when_gone, writer, transport, session, rid)
            responder.on_client_gone(partial(cancel_on_disconnect, transport, session, rid))

        try:
            await answer_inline(
                transport,
                session,
                stream,
                responder,
                message,
                json_response=self.json_response,
                json_head_delay=_JSON_HEAD_DELAY,
                on_writer=watch,
                answer_status=answer_status,
                long_poll=long_poll,
            )
        finally:
            transport.release_stream(stream)
            transport.exchanges -= 1
