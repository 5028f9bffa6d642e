"""The MCP HTTP endpoint family as one :class:`~..engine.exchange.HttpApp`: :class:`McpHttpApp`.

For an app with the default paths, mounted at prefix ``P``:

- ``P/mcp``: Streamable HTTP (POST, GET, DELETE) and WebSocket upgrades;
- ``P/sse`` and ``P/messages``: the legacy HTTP+SSE transport of 2024-11-05.
- ``P/healthz``, ``P/readyz`` and, when asked for, ``P/metrics``: for operators
  (:mod:`.operations`), answered before the checks below.

Every request, on every path, first passes the :class:`~.security.HttpSecurity` checks: a bad
``Host`` or ``Origin`` gets 403, missing credentials (when an authenticator is set) 401. The
one exception is the authenticator's metadata document (``/.well-known/oauth-protected-resource``
for :class:`mcptrio.auth.server.BearerAuth`), which a client reads before it has credentials.

Lifetime
--------
Streamable HTTP sessions outlive the requests that use them, so the app owns a nursery for them.
Start it before serving, in the same nursery as the front end::

    app = McpHttpApp(server)
    async with trio.open_nursery() as nursery:
        await nursery.start(app.run)          # sessions live here
        await nursery.start(serve_builtin, app)

Front ends that take an app (``serve_http``) do this themselves when the app has a ``run``
attribute: ``await nursery.start(app.run)`` before they start listening. When ``run`` is
cancelled every session ends. Until ``run`` has started, ``initialize`` is answered 503.

Stop ``run`` together with the front ends, or before them (``serve_http`` does): a POST's
request is answered in the POST's own task, shielded from the client going away, so a front end
stopped while the sessions live on waits for the handlers running in its connections.
Stateless mode and the legacy transport need no ``run`` (their sessions live in the task of
the request that carries them), but starting it does no harm.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping

import trio

from ....runtime.session import SessionFactory
from ....stores.errors import StoreUnavailable
from ....stores.event_store import EventStore, InMemoryEventStore
from ....stores.session_directory import SessionDirectory
from ..engine.exchange import HeaderScan, HttpRequest, HttpResponder, WebSocketPeer, header
from ..relay.session_relay import SessionRelay
from .cors import CorsResponder, preflight_headers
from .http_session import HttpSession
from .legacy_sse import LegacySseEndpoint, session_id_parameter
from .operations import METRICS_ALLOW, OperationsEndpoints
from .responses import SESSION_HEADER, send_error
from .security import HttpSecurity, Principal, Refusal, current_client_host, current_principal
from .session_keeping import SessionKeeper, SessionKeeping
from .session_registry import EndpointNotRunning, SessionLimitReached, SessionRegistry
from .sse_stream import KEEP_ALIVE_INTERVAL
from .stateless_era import is_stateless_revision
from .streamable import StreamableHttpEndpoint

__all__ = ["McpHttpApp"]

log = logging.getLogger("mcptrio.http")

_WELL_KNOWN = "/.well-known/"
_DEFAULT_STORE: EventStore = InMemoryEventStore.__new__(InMemoryEventStore)  # sentinel only


class McpHttpApp:
    """Streamable HTTP, legacy HTTP+SSE and WebSocket for one MCP server.

    ``server`` is anything with ``session(transport) -> Session`` (a :class:`mcptrio.Server`).

    - ``json_response``: answer a request as one JSON body when nothing else comes first
      (default); ``False`` always streams SSE.
    - ``stateless``: no sessions; each POST gets a fresh session, gone after its answer; GET
      and DELETE get 405.
    - ``event_store``: where SSE events are kept for ``Last-Event-ID`` resumption (default: a
      bounded :class:`~mcptrio.stores.InMemoryEventStore`, or the server's ``stores``' event
      store when it has shared stores); ``None`` turns resumption off.
    - ``sse_retry_ms``: the ``retry:`` sent with the 2025-11-25 priming event and before the
      server closes a stream's connection.
    - ``stream_buffer``: undelivered messages a request's stream holds before the session waits;
      ``unrelated_buffer``: those the standalone stream holds (oldest dropped past it).
    - ``keep_alive_interval``: seconds a streamed response (a listen stream, a long call) may
      stay quiet before an SSE comment (``: keep-alive``) is written; 15 by default.
    - ``legacy_sse``: serve the 2024-11-05 endpoints at ``sse_path`` and ``messages_path``.
    - ``session_directory``: when several workers serve this endpoint, where they find each
      other (:class:`~mcptrio.stores.RedisSessionDirectory`): a request for a session of
      another worker is forwarded to it (:mod:`..relay.session_relay`). ``None`` (default): this
      process is the only one.
    - ``session_keeper``: with a ``session_directory``, where handshake-era sessions are kept
      so that another worker adopts them when theirs dies or restarts (:mod:`.session_keeping`;
      :func:`mcptrio.server.scale_out.open_scale_out` makes one); ``adopt_sessions=False``
      answers a gone worker's sessions 404 instead, as without a keeper.
    - ``metrics``: serve Prometheus metrics at ``/metrics`` (the ``metrics`` extra), to the
      addresses and networks in ``metrics_allow`` (loopback by default); see
      :mod:`.operations` for ``/healthz`` and ``/readyz``, always served.
    """

    def __init__(
        self,
        server: SessionFactory,
        *,
        path: str = "/mcp",
        sse_path: str = "/sse",
        messages_path: str = "/messages",
        security: HttpSecurity | None = None,
        event_store: EventStore | None = _DEFAULT_STORE,
        json_response: bool = True,
        stateless: bool = False,
        legacy_sse: bool = True,
        sse_retry_ms: int | None = 1000,
        stream_buffer: int = 256,
        unrelated_buffer: int = 256,
        keep_alive_interval: float = KEEP_ALIVE_INTERVAL,
        session_directory: SessionDirectory | None = None,
        session_keeper: SessionKeeper | None = None,
        adopt_sessions: bool = True,
        metrics: bool = False,
        metrics_allow: Collection[str] = METRICS_ALLOW,
    ) -> None:
        self.server = server
        self.path = path
        self.sse_path = sse_path
        self.messages_path = messages_path
        self.security = security if security is not None else HttpSecurity()
        if event_store is _DEFAULT_STORE:
            # A server with shared stores (Server(stores=...)) keeps its events there.
            stores = getattr(server, "stores", None)
            event_store = InMemoryEventStore() if stores is None else stores.event_store
        self.event_store = event_store
        self.legacy_sse = legacy_sse and not stateless

        def make_transport(session_id: str, principal: Principal | None) -> HttpSession:
            return HttpSession(
                session_id,
                event_store=event_store,
                principal=principal,
                stream_buffer=stream_buffer,
                unrelated_buffer=unrelated_buffer,
                retry_ms=sse_retry_ms,
                keep_alive_interval=keep_alive_interval,
            )

        #: Forwards requests for other workers' sessions (with a ``session_directory``).
        self.relay = SessionRelay(self, session_directory) if session_directory else None
        id_prefix = session_directory.instance if session_directory else None
        self.legacy = LegacySseEndpoint(
            server,
            self.security,
            sse_path=sse_path,
            messages_path=messages_path,
            id_prefix=id_prefix,
        )
        self.registry = SessionRegistry(
            server,
            self.security,
            event_store=event_store,
            make_transport=make_transport,
            count_others=lambda: len(self.legacy.sessions),
            id_prefix=id_prefix,
        )
        self.streamable = StreamableHttpEndpoint(
            self.registry,
            json_response=json_response,
            stateless=stateless,
            keep_alive_interval=keep_alive_interval,
        )
        #: Keeps the sessions in the shared store and adopts those of gone workers, if any.
        self.keeping: SessionKeeping | None = None
        if session_keeper is not None and session_directory is not None and not stateless:
            self.keeping = SessionKeeping(
                session_keeper, self.registry, session_directory, adopt=adopt_sessions
            )
            if adopt_sessions:
                self.streamable.state_changed = self.keeping.state_changed
                assert self.relay is not None
                self.relay.adopting = True
        #: ``/healthz``, ``/readyz`` and ``/metrics``.
        self.operations = OperationsEndpoints(self, metrics=metrics, metrics_allow=metrics_allow)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Host the Streamable HTTP sessions until cancelled (see the module docstring), and
        serve requests forwarded from other workers when there is a session directory."""
        if self.relay is None:
            await self.registry.run(task_status=task_status)
            return
        async with trio.open_nursery() as nursery:
            await nursery.start(self.registry.run)
            await nursery.start(self.relay.run)
            if self.keeping is not None:
                await nursery.start(self.keeping.run)
            task_status.started()

    async def drain(self) -> None:
        """The front end has drained (a graceful stop): answer, or decline, what other workers
        forward here before :meth:`run` is cancelled (see
        :meth:`~..relay.session_relay.SessionRelay.stop_serving`)."""
        if self.relay is not None:
            await self.relay.stop_serving()

    @property
    def session_count(self) -> int:
        """Live sessions, Streamable HTTP and legacy."""
        return self.registry.live_count()

    # ------------------------------------------------------------------ HttpApp

    async def handle_http(self, request: HttpRequest, responder: HttpResponder) -> None:
        path = request.path
        # The metadata documents are public, with CORS of their own (any origin).
        if path.startswith(_WELL_KNOWN) and await self._serve_metadata(request, responder):
            return
        method = request.method
        # Each header's first value by name (as header() finds it), for every lookup of this
        # request: Host and Origin here, then Accept, Content-Type, the session id and the
        # revision of a POST. A POST makes several, so it reads its headers into a dict once,
        # gone with the exchange; any other request scans the list when asked, since a GET
        # stream may stay open for hours and would keep such a dict alive all that time.
        headers = request.headers
        fields: Mapping[bytes, bytes] = (
            dict(reversed(headers)) if method == "POST" else HeaderScan(headers)
        )
        origin = fields.get(b"origin")
        # A browser's request from another page: CORS for an origin the check lets in (see
        # :mod:`.cors`); any other is refused below, as without CORS.
        # A request forwarded to the worker owning its session gets them there: ``direct``.
        direct = responder
        if (
            origin is not None
            and self.security.origin_host.refusal_of(fields.get(b"host"), origin) is None
        ):
            if method == "OPTIONS":
                await responder.send_response(204, preflight_headers(request, origin))
                return
            responder = CorsResponder(responder, origin)
        if path == self.path:
            # A POST or a GET straight to its own coroutine (no dispatching one in between: a
            # GET stream's task would hold its frame for the stream's whole life); the rest by
            # way of the endpoint's handle.
            streamable = self.streamable
            if method == "POST":
                endpoint = streamable.post
            elif method == "GET":
                endpoint = streamable.get
            else:
                endpoint = streamable.handle
        elif self.legacy_sse and path in (self.sse_path, self.messages_path):
            endpoint = self._serve_legacy
        else:
            operation = self.operations.routes.get(path)
            if operation is None:
                await send_error(responder, 404, f"No MCP endpoint at {path}")
            else:
                await operation(request, responder)
            return
        admitted = await self.security.admit(request)
        if isinstance(admitted, Refusal):
            await send_error(responder, admitted.status, admitted.message, headers=admitted.headers)
            return
        relay = self.relay
        if relay is not None and not _names_stateless_revision(request):
            session_id = self._session_id(request)
            owner = relay.owner_elsewhere(session_id)
            if owner is not None and self.keeping is not None and path == self.path:
                assert session_id is not None
                try:
                    owner = await self.keeping.route(session_id.decode("ascii"), owner, admitted)
                except StoreUnavailable as exc:
                    # As when the owner cannot be reached to forward to (the relay's 503).
                    log.warning("cannot find the worker of session %s now: %s", session_id, exc)
                    await send_error(
                        responder,
                        503,
                        "The worker that holds this session cannot be reached now",
                        headers=((b"retry-after", b"1"),),
                    )
                    return
                except (SessionLimitReached, EndpointNotRunning):
                    retry = (b"retry-after", str(self.security.retry_after).encode())
                    await send_error(responder, 503, "Too many sessions", headers=(retry,))
                    return
            if owner is not None:
                again = await relay.forward(owner, request, direct, self.security.max_body_size)
                if again is not None:
                    # Declined by a worker that stopped and has left: nothing of it ran there.
                    await self.handle_http(again, direct)
                return
        if admitted is None:
            # No authenticator: the address is all that tells this client from another.
            client_host = current_client_host.set(self.security.client_host(request))
            try:
                await endpoint(request, responder, admitted, fields)
            finally:
                current_client_host.reset(client_host)
            return
        # Reset after: a keep-alive connection serves other principals' requests in this task.
        token = current_principal.set(admitted)
        try:
            await endpoint(request, responder, admitted, fields)
        finally:
            current_principal.reset(token)

    def _session_id(self, request: HttpRequest) -> bytes | None:
        """The session a request names: ``Mcp-Session-Id``, or the legacy transport's
        ``session_id`` query parameter."""
        if request.path == self.path:
            return header(request.headers, SESSION_HEADER)
        if request.path == self.messages_path:
            return session_id_parameter(request.query_string)
        return None

    async def _serve_metadata(self, request: HttpRequest, responder: HttpResponder) -> bool:
        """Answer a request for the authenticator's metadata document (OAuth Protected Resource
        Metadata); ``False`` when there is no such document at this path."""
        metadata_response = getattr(self.security.authenticator, "metadata_response", None)
        if metadata_response is None:
            return False
        answer = metadata_response(request)
        if answer is None:
            return False
        # Host is checked (the document may name this server after it); Origin is not: the
        # document is public, and browser-based clients read it cross-origin.
        if not self.security.origin_host.host_allowed(header(request.headers, b"host")):
            await send_error(responder, 403, "Host not allowed")
            return True
        status, headers, body = answer
        if request.method == "HEAD":
            body = b""
        await responder.send_response(status, headers, body)
        return True

    async def _serve_legacy(
        self,
        request: HttpRequest,
        responder: HttpResponder,
        principal: Principal | None,
        fields: Mapping[bytes, bytes],
    ) -> None:
        """GET at ``sse_path`` opens a session's stream, POST at ``messages_path`` feeds it.

        ``fields`` (the request's headers by name) is unused: the signature is the Streamable
        HTTP endpoint's, so that :meth:`handle_http` calls either alike."""
        opens_stream = request.path == self.sse_path
        method = "GET" if opens_stream else "POST"
        if request.method != method:
            allow = (b"allow", method.encode())
            await send_error(responder, 405, f"Use {method}", headers=(allow,))
        elif opens_stream:
            at_capacity = self.registry.live_count() >= self.security.max_sessions
            await self.legacy.open_stream(request, responder, principal, at_capacity=at_capacity)
        else:
            await self.legacy.post_message(request, responder, principal)

    async def handle_websocket(self, request: HttpRequest, peer: WebSocketPeer) -> None:
        """MCP over WebSocket at ``path``, after the same Host/Origin/credential checks."""
        if request.path != self.path:
            await peer.reject(404, b"No MCP endpoint here")
            return
        security = self.security
        admitted = await security.admit(request)
        if isinstance(admitted, Refusal):
            await peer.reject(admitted.status, admitted.message.encode(), admitted.headers)
            return
        if self.registry.live_count() >= security.max_sessions:
            await peer.reject(503, b"Too many sessions")
            return
        from ...websocket import serve_websocket_session

        # The session's actors start in this task's context, so they see the principal (or,
        # with none, the client's address).
        token = current_principal.set(admitted)
        client_host = current_client_host.set(
            self.security.client_host(request) if admitted is None else None
        )
        try:
            await serve_websocket_session(
                self.server,
                request,
                peer,
                max_frame_size=security.max_body_size,
                shutdown=peer.stopping,
            )
        finally:
            current_client_host.reset(client_host)
            current_principal.reset(token)


def _names_stateless_revision(request: HttpRequest) -> bool:
    """Whether ``request`` says it speaks a 2026-07-28-era revision: then it stands alone (a
    session id it carries is ignored) and is served here, never forwarded."""
    version = header(request.headers, b"mcp-protocol-version")
    return version is not None and is_stateless_revision(version.decode("latin-1"))
