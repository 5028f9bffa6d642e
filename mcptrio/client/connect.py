"""Connecting: :func:`open_client` opens the target's transport, runs the session and the
handshake.

::

    async with mcptrio.open_client(server) as client:              # in-memory
        result = await client.call_tool("add", {"a": 1, "b": 2})
    async with mcptrio.open_client(["python", "server.py"]) as client:   # stdio
        tools = await client.list_tools()

``open_client`` owns a nursery holding the session (and, for a server run in memory, the
server's session too). Leaving the block closes the transport, cancels whatever is still
running there and, for stdio, shuts the server process down as the spec says.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Unpack

import trio

from ..protocol.connection import Connection
from ..protocol.errors import ConnectionClosed, RequestTimeout
from ..protocol.types import InitializedNotification, InitializeResult
from ..runtime.nurseries import open_unwrapping_nursery
from ..runtime.session import Session
from ..runtime.transport import Transport
from ..tasks import TaskSupervisor
from ..transports.http.client.transport import HttpClientTransport
from ..transports.stdio import StdioClientTransport
from .cache import DISCOVER_KEY
from .client import Client
from .eras import LateProbe, Probed, era_key, probe_stateless
from .notifications import NotificationCallbacks, NotificationRouter
from .options import ClientIdentity, ClientOptions, Revisions, Timeouts, check_options
from .server_requests import Handlers, ServerRequestRouter, derive_capabilities
from .targets import Target, open_target, resolve_target

__all__ = ["open_client"]


@asynccontextmanager
async def open_client(target: Target, **options: Unpack[ClientOptions]) -> AsyncIterator[Client]:
    """Connect to ``target`` and yield an initialized :class:`Client`.

    ``target`` says what to connect to, and how (see :mod:`~mcptrio.client.targets`): a command
    as a list of arguments or :func:`~mcptrio.client.stdio` (stdio), an ``http(s)://`` URL or
    :func:`~mcptrio.client.http` (Streamable HTTP, falling back to HTTP+SSE), a ``ws(s)://`` URL
    or :func:`~mcptrio.client.websocket`, a server object such as :class:`~mcptrio.Server` or
    :func:`~mcptrio.client.in_memory` (served in memory, in this block's nursery), or an open
    :class:`~mcptrio.runtime.transport.Transport`. A string that is not such a URL raises
    ``ValueError``; anything else that is not a target, ``TypeError``.

    The keywords (:class:`~mcptrio.client.options.ClientOptions`), each a frozen record:

    - ``identity=ClientIdentity(info=, capabilities=)``: the ``clientInfo``, and capabilities
      merged over those derived from the handlers;
    - ``revisions=Revisions(protocol_version=, supported=)``: the revision offered and those
      accepted in answer (an answer in another raises
      :class:`~mcptrio.protocol.errors.UnsupportedProtocolVersion`);
    - ``timeouts=Timeouts(initialize=30.0, request=None)``: the handshake's deadline (past it,
      :class:`~mcptrio.protocol.errors.RequestTimeout`) and the ``timeout`` of every call that
      passes none;
    - ``handlers=Handlers(sampling=, elicitation=, elicitation_modes=, roots=, fallback=)``:
      answer the server's requests; the capabilities are declared from which are given (fitted
      to the offered revision, see :mod:`~mcptrio.client.server_requests`). Without a
      handler, a request is refused with -32601;
    - ``notifications=NotificationCallbacks(on_log=, on_list_changed=, ...)``: called for the
      server's notifications, inline in the session's reader: keep them quick, or use the
      client's streams (in the stateless era ``on_list_changed`` opens a listen stream);
    - ``cache=CachePolicy(size=256)``: how many results the stateless era's cache keeps (see
      :mod:`~mcptrio.client.cache`).
    """
    check_options("open_client()", options, ClientOptions)
    identity = options.get("identity") or ClientIdentity()
    revisions = options.get("revisions") or Revisions()
    timeouts = options.get("timeouts") or Timeouts()
    handlers = options.get("handlers") or Handlers()
    declared = derive_capabilities(
        sampling=handlers.sampling is not None,
        elicitation_modes=None if handlers.elicitation is None else handlers.elicitation_modes,
        roots=handlers.roots is not None,
        extra=identity.capabilities,
        tasks=handlers.tasks is not False,
    )
    router = ServerRequestRouter(handlers)
    notifications = NotificationRouter(options.get("notifications") or NotificationCallbacks())
    async with open_unwrapping_nursery() as nursery:
        try:
            if router.tasks is not None:
                # The tasks the server asks of this client live as long as the client.
                await nursery.start(_serve_tasks, router.tasks.supervisor)
            async with open_target(target, nursery) as transport:
                connection = Connection(
                    "client",
                    info=identity.info,
                    capabilities=declared,
                    supported=revisions.in_preference_order,
                )
                session = Session(
                    connection,
                    transport,
                    handle_request=router,
                    handle_notification=notifications,
                    actors=(notifications.close_when_session_ends,),
                )
                session_scope = trio.CancelScope()
                await nursery.start(_run_in_scope, session, session_scope)
                try:
                    try:
                        found: Probed | LateProbe | InitializeResult | None = None
                        if revisions.stateless:
                            found = await probe_stateless(
                                session,
                                revisions.stateless,
                                capabilities=declared,
                                info=identity.info,
                                timeout=timeouts.probe,
                                pinned=revisions.pinned_stateless,
                                nursery=nursery,
                                key=era_key(resolve_target(target)),
                            )
                            if isinstance(found, LateProbe):
                                found = await found.fall_back(
                                    partial(_initialize, session, connection, timeouts)
                                )
                        probed = found if isinstance(found, Probed) else None
                        if probed is not None:
                            result = probed.initialize_result
                            _ask_for_logs(connection, notifications.callbacks)
                        elif isinstance(found, InitializeResult):
                            result = found
                        else:
                            result = await _initialize(session, connection, timeouts)
                    except ConnectionClosed as exc:
                        raise await _why_closed(transport, exc) from exc
                    client = Client(
                        session,
                        result,
                        request_timeout=timeouts.request,
                        handlers=router,
                        notifications=notifications,
                        listen_timeout=timeouts.listen,
                        cache=options.get("cache"),
                    )
                    if probed is not None:
                        client.cache.store(DISCOVER_KEY, probed.discover_result)
                    if isinstance(transport, HttpClientTransport):
                        transport.set_header_params(client.tool_header_params)
                    await client._listen_for_callbacks()
                    yield client
                finally:
                    # Only the session is cancelled here: the transport then closes outside any
                    # cancelled scope (a stdio server gets its graceful shutdown), and an error
                    # from the body is not replaced by a Cancelled raised while closing.
                    session_scope.cancel()
        finally:
            nursery.cancel_scope.cancel()


def _ask_for_logs(connection: Connection, callbacks: NotificationCallbacks) -> None:
    """In the stateless era a server logs only at the level a request names in its ``_meta``
    (and nothing without one). A client given a log callback asked for the server's log
    messages: it gets every level, as a handshake-era server sends them all until
    ``logging/setLevel`` (a decision: see ``docs/explanation/client-design.md``)."""
    meta = connection.request_meta
    wants_logs = callbacks.on_log is not None or callbacks.on_notification is not None
    if meta is not None and meta.log_level is None and wants_logs:
        meta.log_level = "debug"


async def _why_closed(transport: Transport, closed: ConnectionClosed) -> ConnectionClosed:
    """What a connection that ended during the handshake raises: for a stdio server that has
    exited, its exit code and the last words of its stderr (a server that fails at start
    prints why there), rather than only that the session ended."""
    if isinstance(transport, StdioClientTransport):
        exited = await transport.exit_error()
        if exited is not None:
            return exited
    return closed


async def _initialize(
    session: Session, connection: Connection, timeouts: Timeouts
) -> InitializeResult:
    # initialize must not be cancelled with notifications/cancelled (the spec forbids it), so
    # its deadline is a plain trio one, not the request timeout.
    try:
        with trio.fail_after(timeouts.initialize):
            result = await session.request(connection.initialize_request())
    except trio.TooSlowError:
        raise RequestTimeout(
            f"The server did not answer initialize within {timeouts.initialize} s"
        ) from None
    await session.notify(InitializedNotification())
    return result


async def _serve_tasks(
    supervisor: TaskSupervisor, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
) -> None:
    async with supervisor.running():
        task_status.started()
        await trio.sleep_forever()


async def _run_in_scope(
    session: Session,
    scope: trio.CancelScope,
    *,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    with scope:
        await session.run(task_status=task_status)
