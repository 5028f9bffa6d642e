"""The sans-IO MCP connection: frames in, events out; typed messages in, frames out.

Theory of operation
-------------------
A :class:`Connection` is one side (client or server) of one MCP session. It does no I/O and
knows nothing of tasks: the session actor feeds it every incoming frame and sends whatever bytes
it returns. Everything that follows from the protocol alone is decided here, synchronously:

- **Lifecycle.** A server answers ``initialize`` itself, negotiating the revision (echo the
  client's if supported, else offer the latest) and declaring its capabilities; requests other
  than ``initialize`` and ``ping`` before it get -32600. A client builds ``initialize`` with
  :meth:`Connection.initialize_request` and refuses an answer in a revision it does not speak.
  That part, and starting without a handshake, lives in :mod:`~mcptrio.protocol.handshake` (a
  base of ``Connection``).
- **Revisions.** Everything sent is built in the newest shape and fitted to the negotiated
  revision on the way out; everything received is read as that revision means it
  (:mod:`~mcptrio.protocol.fitting`). Before the handshake, the offered revision is the one.
  A result the revision cannot carry is answered -32603 instead.
- **Validation.** Bad JSON gets -32700, a non-message -32600, an unknown method (or one the
  negotiated revision lacks) -32601, params that do not decode -32602, a request reusing the id
  of one still in flight -32600. None of these disturbs anything else in flight.
- **Capability gating** (:mod:`~mcptrio.protocol.gating`). A request for a feature this side did
  not declare gets -32601. Sending a request or notification the negotiated capabilities do not
  allow raises :class:`~mcptrio.protocol.errors.CapabilityNotNegotiated` before anything is
  written.
- **Bookkeeping.** Ids of incoming requests still in flight (to reject duplicates and to match
  cancellations), and the result type of every outgoing request still pending (so a response
  decodes straight into it).
- **Batches** (2025-03-26 only; :mod:`~mcptrio.protocol.batches`): the answers to a batch's
  requests are held until the last one is known, then sent as one array.
  :meth:`Connection.respond` and friends return ``None`` while the batch is still open.
- **In process** a lone request's answer may be left unencoded (:meth:`Connection.respond_carried`,
  :meth:`Connection.receive_carried`): the receiver converts it instead of decoding it.
- **Ping** is answered here, without a handler.
- **The stateless era** (2026-07-28), per request: on a server connection with no handshake, a
  request whose ``_meta`` names a stateless-era revision is read, checked and answered at that
  revision (:mod:`~mcptrio.protocol.stateless`): no ``initialize`` needed, ``server/discover``
  answered here, ``resultType`` and the server's identity added to every answer. A client
  started with :meth:`Connection.start_stateless` puts its ``_meta`` on every request and reads
  input-required results.
"""

from __future__ import annotations

import itertools
from typing import Any, TypeAlias, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from . import codec
from . import events as ev
from .base import Notification, Request, RequestId, Result
from .batches import MAX_BATCH_ITEMS, Batch, answer_in_flight, refusal
from .declared import capability_declared
from .errors import (
    CapabilityNotNegotiated,
    InternalError,
    InvalidParams,
    InvalidRequest,
    McpError,
    ParseError,
    TransportError,
)
from .fitting import Step, fit_outgoing, incoming_step, outgoing_step
from .gating import check_outgoing, incoming_spec
from .handshake import Handshake
from .methods import MethodSpec, Side, spec_at
from .request_meta import RequestMeta
from .revisions import (
    SUPPORTED,
    Revision,
    accept_server_answer,
    handshake_versions,
    revision_of,
)
from .stateless import (
    StatelessReader,
    answer_error,
    answer_result,
    convert_stateless_result,
    decode_stateless_result,
)
from .types import (
    CancelledNotification,
    ClientCapabilities,
    DiscoverRequest,
    DiscoverResult,
    EmptyResult,
    Implementation,
    InitializedNotification,
    InitializeResult,
    PingRequest,
    ServerCapabilities,
)
from .types.common import CacheScope
from .unreadable import owner_by_head, owner_of

__all__ = ["MAX_BATCH_ITEMS", "Connection", "Role", "capability_declared"]

#: Which side of the session a connection is.
Role: TypeAlias = Side
ResultT = TypeVar("ResultT", bound=Result)

_DISCOVER = DiscoverRequest.METHOD


class Connection(Handshake):
    """One side of one MCP session, without I/O. See the module docstring."""

    def __init__(
        self,
        role: Role,
        *,
        info: Implementation,
        capabilities: ClientCapabilities | ServerCapabilities,
        instructions: str | None = None,
        supported: tuple[str, ...] = SUPPORTED,
        cache_hints: tuple[int, CacheScope] | None = None,
    ) -> None:
        self.role: Role = role
        self.peer_role: Role = "server" if role == "client" else "client"
        self.info = info
        self.capabilities = capabilities
        self.instructions = instructions
        self.supported = supported
        #: ``ttlMs`` / ``cacheScope`` of the ``server/discover`` answer (``None``: not cacheable).
        self.cache_hints = cache_hints
        #: The negotiated revision, once known.
        self.revision: str | None = None
        #: What the negotiated revision has (its row of the revision table), once known.
        self.features: Revision | None = None
        # The steps that fit messages to the revision (None: it lacks nothing); until the
        # handshake, to the revision ``initialize`` offers. An unknown revision raises ValueError.
        offered = revision_of((handshake_versions(supported) or supported)[0])
        self._fit_out: Step | None = outgoing_step(offered)
        self._check_in: Step | None = incoming_step(offered)
        self.peer_info: Implementation | None = None
        self.peer_capabilities: ClientCapabilities | ServerCapabilities | None = None
        #: The server's instructions, on the client side.
        self.peer_instructions: str | None = None
        #: True once the client has sent (client side) or the server received ``initialized``.
        self.initialized_notified = False
        self._next_id = itertools.count(1)
        self._pending: dict[RequestId, type[Result]] = {}
        # How many of the pending requests expect each result type: while there is just one
        # type, a response is decoded with its result in one pass (codec.decode_frame_expecting).
        self._pending_types: dict[type[Result], int] = {}
        self._in_flight: dict[RequestId, Batch | None] = {}
        # Requests found allowed once the handshake is done: what decides it (the revision and
        # both sides' capabilities) is settled by then and never changes again.
        self._allowed_in: dict[str, MethodSpec] = {}
        # (method, kind, revision) found allowed to send, likewise; made when first needed, so
        # that an idle server session holds no empty set.
        self._allowed_out: set[tuple[str, str, str]] | None = None
        # Server side: the stateless-era requests in flight, with what their _meta said.
        self._stateless: dict[RequestId, RequestMeta] = {}
        self._stateless_reader = StatelessReader(supported)
        self._server_info_wire: dict[str, Any] | None = None
        #: Client side, in the stateless era: what every request's ``_meta`` says.
        self.request_meta: RequestMeta | None = None

    # ------------------------------------------------------------------ state

    @property
    def ready(self) -> bool:
        """Whether the handshake is done (the revision is negotiated)."""
        return self.revision is not None

    def in_flight(self) -> int:
        """The number of incoming requests not yet answered."""
        return len(self._in_flight)

    def pending(self) -> int:
        """The number of outgoing requests not yet answered."""
        return len(self._pending)

    def pending_result_types(self) -> dict[type[Result], int]:
        """How many outgoing requests not yet answered expect each result type."""
        return dict(self._pending_types)

    def request_meta_of(self, rid: RequestId) -> RequestMeta | None:
        """The ``_meta`` of incoming stateless-era request ``rid`` (``None``: handshake era)."""
        return self._stateless.get(rid) if self._stateless else None

    def owes_answer(self, rid: RequestId) -> bool:
        """Whether incoming request ``rid`` is still waiting for its answer."""
        return rid in self._in_flight

    # --------------------------------------------------------------- incoming

    def receive(self, frame: bytes) -> list[ev.Event]:
        """Decode one frame and return what it means, in order."""
        if len(self._pending_types) == 1 and self.request_meta is None:
            # Every pending request expects the same result type: a response is most likely one
            # of them, and decodes in one pass. Anything else (a request, a notification, a
            # batch) decodes as well that way; what does not falls through to the two phases.
            for expected in self._pending_types:
                typed = codec.decode_frame_expecting(frame, expected)
                if isinstance(typed, codec.TypedEnvelope):
                    events: list[ev.Event] = []
                    self._receive_one(typed, events, None, expected)
                    return events
                if typed is not None:
                    return self._receive_batch(typed)
        try:
            decoded = codec.decode_frame(frame)
        except InvalidRequest as exc:
            salvaged, exc.data = exc.data, None
            return [ev.Reply(self._encode_error(salvaged, exc), salvaged)]
        except ParseError as exc:
            owner = owner_of(frame, exc, self._pending, self._in_flight)  # see .unreadable
            return self._unread(owner, exc, ParseError(f"Unreadable response: {exc.message}"))
        if isinstance(decoded, list):
            return self._receive_batch(decoded)
        events = []
        self._receive_one(decoded, events, None)
        return events

    def receive_message(self, message: codec.Envelope) -> list[ev.Event]:
        """What one message means, already decoded as an envelope (a transport that decoded it
        to route it hands it on, instead of the frame to decode again)."""
        events: list[ev.Event] = []
        self._receive_one(message, events, None)
        return events

    def receive_carried(self, carried: codec.CarriedResult) -> list[ev.Event]:
        """What an in-process peer's unencoded result means: what its frame would (one that
        does not convert is taken as its frame, which says what is wrong as a decode would)."""
        result_type = self._pending.get(carried.id)
        if result_type is None:
            return [ev.UnmatchedResponse(carried.id)]
        try:
            if self.request_meta is None:
                result = codec.convert_result(carried.value, result_type)
            else:
                result = convert_stateless_result(carried.value, result_type)
        except InvalidParams:
            return self.receive(carried.encoded())
        events: list[ev.Event] = []
        envelope = codec.TypedEnvelope(jsonrpc="2.0", id=carried.id, result=result)
        self._receive_response(envelope, events, result_type)
        return events

    def oversized(self, limit: int, head: bytes = b"", tail: bytes = b"") -> list[ev.Event]:
        """What a frame the transport dropped for being over ``limit`` bytes means, by how it
        began and ended (see :mod:`.unreadable`): a failed call, or an error answer."""
        owner = owner_by_head(head, tail, self._pending, self._in_flight) if head else None
        failure = TransportError(f"The answer exceeds the size limit of {limit} bytes")
        error = InvalidRequest(f"Message exceeds the size limit of {limit} bytes")
        return self._unread(owner, error, failure)

    def _unread(
        self, owner: tuple[RequestId, bool] | None, error: McpError, failure: McpError
    ) -> list[ev.Event]:
        """A frame not read: ``failure`` for the call it answered, else ``error`` answered."""
        if owner is None or not owner[1]:
            rid = None if owner is None else owner[0]
            return [ev.Reply(self._encode_error(rid, error), rid)]
        self._pop_pending(owner[0])
        return [ev.ErrorReceived(owner[0], failure)]

    def _receive_batch(self, items: list[msgspec.Raw]) -> list[ev.Event]:
        refused = refusal(self.features, len(items))
        if refused is not None:
            return [ev.Reply(self._encode_error(None, refused))]
        batch = Batch()
        events: list[ev.Event] = []
        for item in items:
            try:
                envelope = codec.decode_item(item)
            except InvalidRequest as exc:
                rid, exc.data = exc.data, None
                batch.answers.append(self._encode_error(rid, exc))
                continue
            if envelope.method == "initialize":
                error = InvalidRequest("initialize must not be part of a batch")
                batch.answers.append(self._encode_error(_readable_id(envelope.id), error))
                continue
            self._receive_one(envelope, events, batch)
        return batch.settle(events)

    def _receive_one(
        self,
        env: codec.Envelope | codec.TypedEnvelope[Any],
        events: list[ev.Event],
        batch: Batch | None,
        decoded_as: type[Result] | None = None,
    ) -> None:
        """Act on one message. ``decoded_as``: ``env`` is a :class:`codec.TypedEnvelope` whose
        ``result`` (if any) is already decoded as that type."""
        if env.jsonrpc != "2.0":
            error = InvalidRequest('The "jsonrpc" member must be exactly "2.0"')
            unread = _readable_id(env.id)
            events.append(ev.Reply(self._encode_error(unread, error), unread))
        elif env.method is not UNSET:
            if env.id is UNSET:
                self._receive_notification(env.method, env.params, events)
            elif env.id is None:
                error = InvalidRequest("Request id must be a string or an integer, not null")
                events.append(ev.Reply(self._encode_error(None, error)))
            else:
                self._receive_request(env.id, env.method, env.params, events, batch)
        elif env.result is not UNSET or env.error is not UNSET:
            self._receive_response(env, events, decoded_as)
        else:
            error = InvalidRequest("Message is neither a request, a notification nor a response")
            unread = _readable_id(env.id)
            events.append(ev.Reply(self._encode_error(unread, error), unread))

    def _receive_request(
        self,
        rid: RequestId,
        method: str,
        raw: msgspec.Raw | UnsetType,
        events: list[ev.Event],
        batch: Batch | None,
    ) -> None:
        if rid in self._in_flight:
            error = InvalidRequest(f"Request id {rid!r} is already in use by a request in flight")
            events.append(ev.Reply(self._encode_error(rid, error), rid))
            return
        if self.revision is None and self.role == "server" and batch is None:
            # No handshake on this connection: the request may stand alone (stateless era).
            assert isinstance(self.capabilities, ServerCapabilities)
            try:
                stateless = self._stateless_reader.read(method, raw, self.capabilities)
            except McpError as exc:
                events.append(ev.Reply(self._encode_error(rid, exc), rid))
                return
            if stateless is not None:
                meta = stateless.meta
                self._in_flight[rid] = None
                self._stateless[rid] = meta
                if stateless.spec.method == _DISCOVER:
                    events.append(ev.Reply(self._answer_discover(rid), rid))
                else:
                    events.append(ev.RequestReceived(rid, stateless.request, meta))
                return
        try:
            spec = self._allowed_in.get(method)
            if spec is None:
                spec = incoming_spec(
                    method,
                    "request",
                    role=self.role,
                    revision=self.revision,
                    capabilities=self.capabilities,
                )
                if self.revision is not None:
                    self._allowed_in[method] = spec
            if spec.params is PingRequest:
                codec.decode_body(raw, PingRequest)
                events.append(ev.Reply(codec.encode_result(rid, EmptyResult()), rid))
                return
            if method == "initialize":
                events.extend(self._answer_initialize(rid, raw))
                return
            request: Request[Any] = codec.decode_body(raw, spec.params)  # type: ignore[arg-type]
            check = self._check_in
            if check is not None:
                request = check(request)
        except McpError as exc:
            events.append(ev.Reply(self._encode_error(rid, exc), rid))
            return
        self._in_flight[rid] = batch
        if batch is not None:
            batch.owed.add(rid)
        events.append(ev.RequestReceived(rid, request))

    def _receive_notification(
        self, method: str, raw: msgspec.Raw | UnsetType, events: list[ev.Event]
    ) -> None:
        spec = spec_at(method, self.revision)
        if (
            spec is None
            or spec.kind != "notification"
            or spec.sender not in (self.peer_role, "both")
            or (self.revision is not None and self.revision not in spec.revisions)
        ):
            events.append(ev.Ignored(f"unknown notification {method!r}"))
            return
        try:
            notification = codec.decode_body(raw, spec.params)
            if self._check_in is not None:
                notification = self._check_in(notification)
        except McpError as exc:
            events.append(ev.Ignored(f"malformed {method!r} notification: {exc.message}"))
            return
        assert isinstance(notification, Notification)
        if isinstance(notification, CancelledNotification):
            if notification.request_id in self._in_flight:
                reason = notification.reason if isinstance(notification.reason, str) else None
                events.append(ev.CancelReceived(notification.request_id, reason))
            else:
                events.append(
                    ev.Ignored(f"cancellation of unknown request {notification.request_id!r}")
                )
            return
        if isinstance(notification, InitializedNotification):
            self.initialized_notified = True
        events.append(ev.NotificationReceived(notification))

    def _receive_response(
        self,
        env: codec.Envelope | codec.TypedEnvelope[Any],
        events: list[ev.Event],
        decoded_as: type[Result] | None,
    ) -> None:
        rid = env.id
        if rid is None or rid is UNSET or rid not in self._pending:
            events.append(ev.UnmatchedResponse(None if rid is UNSET else rid))
            return
        result_type = self._pop_pending(rid)
        if env.error is not UNSET:
            events.append(ev.ErrorReceived(rid, codec.decode_error(env.error)))
            return
        try:
            result: Result
            if isinstance(env, codec.TypedEnvelope) and env.result is not UNSET:
                # Decoded with the frame: one type was pending, so it is ``result_type``.
                assert decoded_as is result_type
                result = env.result
            elif self.request_meta is not None and env.result is not UNSET:
                result = decode_stateless_result(env.result, result_type)
            else:
                result = codec.decode_body(env.result, result_type)
        except InvalidParams as exc:
            exc.message = f"Malformed {result_type.__name__} from the peer: {exc.message}"
            events.append(ev.ErrorReceived(rid, exc))
            return
        try:
            if isinstance(result, InitializeResult):
                self._negotiated(accept_server_answer(result.protocol_version, self.supported))
            # The stateless probe's answer is of the revision it named, not of the handshake
            # revision offered meanwhile (which would drop what it lacks: extensions...).
            probe = self.revision is None and isinstance(result, DiscoverResult)
            if self._check_in is not None and not probe:
                result = self._check_in(result)
        except McpError as exc:
            events.append(ev.ErrorReceived(rid, exc))
            return
        if isinstance(result, InitializeResult):
            self.peer_info = result.server_info
            self.peer_capabilities = result.capabilities
            if isinstance(result.instructions, str):
                self.peer_instructions = result.instructions
            events.append(ev.HandshakeComplete(result.protocol_version))
        events.append(ev.ResponseReceived(rid, result))

    # --------------------------------------------------------------- outgoing

    def send_request(
        self, request: Request[Any], *, with_progress_token: bool = False
    ) -> tuple[RequestId, bytes]:
        """Encode ``request`` under a fresh id and expect its result; raise if not allowed.

        With ``with_progress_token`` the request asks for progress, using its id as the token.
        """
        self._check_outgoing(request.METHOD, "request")
        if self._fit_out is not None:
            request = self._fit_out(request)
        rid = next(self._next_id)
        if with_progress_token or self.request_meta is not None:
            meta = dict(request.meta) if isinstance(request.meta, dict) else {}
            if with_progress_token:
                meta["progressToken"] = rid
            if self.request_meta is not None:
                self.request_meta.stamp(meta)
            request = msgspec.structs.replace(request, meta=meta)
        data = codec.encode_request(rid, request.METHOD, request)  # expected once it is written
        result_type = request.RESULT
        self._pending[rid] = result_type
        self._pending_types[result_type] = self._pending_types.get(result_type, 0) + 1
        return rid, data

    def forget_request(self, rid: RequestId) -> None:
        """Stop expecting an answer to ``rid`` (it was cancelled or timed out)."""
        if rid in self._pending:
            self._pop_pending(rid)

    def _pop_pending(self, rid: RequestId) -> type[Result]:
        result_type = self._pending.pop(rid)
        left = self._pending_types[result_type] - 1
        if left:
            self._pending_types[result_type] = left
        else:
            del self._pending_types[result_type]
        return result_type

    def send_notification(
        self, notification: Notification, *, related: RequestId | None = None
    ) -> bytes:
        """Encode ``notification``; raise :class:`CapabilityNotNegotiated` if not allowed.

        One ``related`` to a stateless-era request is fitted to that request's revision.
        """
        meta = self._stateless.get(related) if self._stateless and related is not None else None
        if meta is not None and self.revision is None:
            self._check_outgoing(notification.METHOD, "notification", meta.revision.version)
        else:
            self._check_outgoing(notification.METHOD, "notification")
        if meta is not None:
            notification = fit_outgoing(notification, meta.revision)
        elif self._fit_out is not None:
            notification = self._fit_out(notification)
        if isinstance(notification, InitializedNotification):
            self.initialized_notified = True
        return codec.encode_notification(notification.METHOD, notification)

    def _check_outgoing(self, method: str, kind: str, stateless: str | None = None) -> None:
        """Raise :class:`CapabilityNotNegotiated` unless ``method`` may be sent now. With
        ``stateless``, a notification related to a stateless-era request of that revision (an
        extension's, such as ``notifications/tasks``, exists only there), which only this
        server's own capabilities gate. An answer is kept once its revision is known."""
        revision = self.revision if stateless is None else stateless
        allowed = self._allowed_out
        if allowed is not None and (method, kind, revision) in allowed:
            return
        check_outgoing(
            method,
            kind,
            role=self.role,
            revision=revision,
            capabilities=self.capabilities,
            peer_capabilities=self.peer_capabilities if stateless is None else None,
        )
        if revision is not None:
            if allowed is None:
                allowed = self._allowed_out = set()
            allowed.add((method, kind, revision))

    def respond(self, rid: RequestId, result: Result) -> bytes | None:
        """Answer incoming request ``rid``; ``None`` while its batch is still open. ``result``
        is fitted to the negotiated revision; one it cannot carry is answered -32603 (why)."""
        answer = self.respond_carried(rid, result, carry=False)
        assert not isinstance(answer, codec.CarriedResult)
        return answer

    def respond_carried(
        self, rid: RequestId, result: Result, *, carry: bool = True
    ) -> bytes | codec.CarriedResult | None:
        """:meth:`respond`, but with ``carry`` the answer to a lone request is left unencoded
        when it can be (a :class:`~.codec.CarriedResult`, for an in-process transport)."""
        meta = self._stateless.pop(rid, None) if self._stateless else None
        fit = self._fit_out
        try:
            if meta is not None:
                result = answer_result(result, meta, self._server_info())
            elif fit is not None and result.__class__ not in fit.unchanged:
                result = fit(result)
        except CapabilityNotNegotiated as exc:
            error = self._encode_error(rid, InternalError(exc.message))
            return answer_in_flight(self._in_flight, rid, error)
        if carry and rid in self._in_flight and self._in_flight[rid] is None:
            carried = codec.carry_result(rid, result)
            if carried is not None:
                del self._in_flight[rid]
                return carried
        return answer_in_flight(self._in_flight, rid, codec.encode_result(rid, result))

    def respond_error(self, rid: RequestId, error: McpError) -> bytes | None:
        """Answer incoming request ``rid`` with an error; ``None`` while its batch is open."""
        if self._stateless and self._stateless.pop(rid, None) is not None:
            error = answer_error(error)
        return answer_in_flight(self._in_flight, rid, self._encode_error(rid, error))

    def drop_request(self, rid: RequestId) -> bytes | None:
        """Record that ``rid`` ends without an answer (it was cancelled).

        Returns the batch's answers if this was the last request its batch was waiting for.
        """
        if self._stateless:
            self._stateless.pop(rid, None)
        return answer_in_flight(self._in_flight, rid, None)

    def _encode_error(self, rid: RequestId | None, error: McpError) -> bytes:
        if rid is None:
            # 2025-11-25 lets an error response leave out an id it could not read; earlier
            # schemas have no valid form, so JSON-RPC 2.0's ``"id": null`` is used there.
            omit = self.features is not None and self.features.error_id_optional
            return codec.encode_error(UNSET if omit else None, error)
        return codec.encode_error(rid, error)


def _readable_id(rid: RequestId | UnsetType | None) -> RequestId | None:
    return None if rid is UNSET else rid
