"""Connecting: :func:`open_client` picks the transport, runs the session and the handshake.

::

    async with mcptrio.open_client(server) as client:              # in-memory
        result = await client.call_tool("add", {"a": 1, "b": 2})
    async with mcptrio.open_client(["python", "server.py"]) as client:   # stdio
        tools = await client.list_tools()

``open_client`` owns a nursery holding the session (and, for an in-memory ``Server``, the
server's session too). Leaving the block closes the transport, cancels whatever is still
running there and, for stdio, shuts the server process down as the spec says.
"""

from __future__ import annotations

import shlex
from collections.abc import AsyncIterator, Collection, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING

import trio

from ..protocol.connection import Connection, info_for_revision
from ..protocol.errors import RequestTimeout
from ..protocol.revisions import SUPPORTED
from ..protocol.types import (
    ClientCapabilities,
    Implementation,
    InitializedNotification,
    LoggingMessageNotification,
    Root,
)
from ..runtime.nurseries import open_unwrapping_nursery
from ..runtime.session import NotificationHandler, RequestHandler, Session
from ..transports.base import DEFAULT_MAX_FRAME_SIZE, Transport
from ..transports.http.client.transport import open_http_client_transport
from ..transports.memory import memory_transport_pair
from ..transports.stdio import open_stdio_client_transport
from ..transports.websocket import open_websocket_client_transport
from .client import Client
from .notifications import Callback, ListKind, NotificationRouter
from .output_validation import OutputSchemas
from .server_requests import (
    ElicitationHandler,
    ElicitationMode,
    SamplingHandler,
    ServerRequestHandlers,
    derive_capabilities,
)

if TYPE_CHECKING:
    from ..server.server import Server

__all__ = ["DEFAULT_CLIENT_INFO", "open_client"]

DEFAULT_CLIENT_INFO = Implementation(name="mcptrio-client", version="0.1.0")


@asynccontextmanager
async def open_client(
    target: Server | Sequence[str] | str | Transport,
    *,
    client_info: Implementation = DEFAULT_CLIENT_INFO,
    capabilities: ClientCapabilities | None = None,
    protocol_version: str | None = None,
    supported_revisions: tuple[str, ...] = SUPPORTED,
    initialize_timeout: float = 30.0,
    request_timeout: float | None = None,
    sampling: SamplingHandler | None = None,
    elicitation: ElicitationHandler | None = None,
    elicitation_modes: Collection[ElicitationMode] = ("form", "url"),
    roots: Sequence[Root] | None = None,
    on_log: Callback[LoggingMessageNotification] | None = None,
    on_list_changed: Callback[ListKind] | None = None,
    on_resource_updated: Callback[str] | None = None,
    on_elicitation_complete: Callback[str] | None = None,
    handle_request: RequestHandler | None = None,
    handle_notification: NotificationHandler | None = None,
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    headers: Mapping[str, str] | None = None,
    http_timeout: float = 30.0,
) -> AsyncIterator[Client]:
    """Connect to ``target`` and yield an initialized :class:`Client`.

    ``target`` is a :class:`~mcptrio.Server` (served in-memory, in this block's nursery), a
    command line (a list of arguments, or a string split like a shell would) to spawn as a stdio
    server, a ``ws://`` or ``wss://`` URL (MCP over WebSocket), an ``http://`` or ``https://``
    URL (Streamable HTTP, falling back to HTTP+SSE for older servers; ``headers`` go on every
    HTTP request and ``http_timeout`` bounds connecting and each read), or any
    :class:`~mcptrio.transports.base.Transport`.

    The client offers ``protocol_version`` (default: the newest of ``supported_revisions``) and
    accepts any of ``supported_revisions`` in answer; the handshake must finish within
    ``initialize_timeout`` seconds, and an answer in a revision this client does not speak
    raises :class:`~mcptrio.protocol.errors.UnsupportedProtocolVersion`. ``request_timeout`` is
    the timeout of every later call that passes none.

    **The server's requests.** ``sampling``, ``elicitation`` (both modes unless
    ``elicitation_modes`` says otherwise) and ``roots`` answer them, and the capabilities are
    declared from which are given, merged with ``capabilities`` (see
    :mod:`~mcptrio.client.server_requests`). ``handle_request`` answers, at the lowest level,
    any request that has no typed handler; without any, a request is refused with -32601.

    **The server's notifications.** ``on_log``, ``on_list_changed``, ``on_resource_updated``
    and ``on_elicitation_complete`` (sync or async) are called for them, and
    ``handle_notification(session, notification)`` sees every notification, except progress
    about a request this client is waiting on (that goes to the request's ``on_progress``).
    They all run in the session's reader in the order messages arrive, so while one waits
    nothing else is read from the server: keep them quick, or use the client's streams.
    """
    offered = supported_revisions[0] if protocol_version is None else protocol_version
    if offered not in supported_revisions:
        raise ValueError(
            f"protocol_version {offered!r} is not one of supported_revisions {supported_revisions}"
        )
    declared = derive_capabilities(
        offered,
        sampling=sampling is not None,
        elicitation_modes=None if elicitation is None else elicitation_modes,
        roots=roots is not None,
        extra=capabilities,
    )
    handlers = ServerRequestHandlers(
        sampling=sampling, elicitation=elicitation, roots=roots, fallback=handle_request
    )
    output_schemas = OutputSchemas()
    router = NotificationRouter(
        on_log=on_log,
        on_list_changed=on_list_changed,
        on_resource_updated=on_resource_updated,
        on_elicitation_complete=on_elicitation_complete,
        handle_notification=handle_notification,
        on_tools_changed=output_schemas.forget,
    )
    async with open_unwrapping_nursery() as nursery:
        try:
            async with _open_transport(
                nursery, target, max_frame_size, env, cwd, headers, http_timeout
            ) as transport:
                connection = Connection(
                    "client",
                    info=info_for_revision(client_info, offered),
                    capabilities=declared,
                    # The first revision is the one initialize offers.
                    supported=(offered, *(r for r in supported_revisions if r != offered)),
                )
                session = Session(
                    connection,
                    transport,
                    handle_request=handlers,
                    handle_notification=router,
                    actors=(router.close_when_session_ends,),
                )
                session_scope = trio.CancelScope()
                await nursery.start(_run_in_scope, session, session_scope)
                try:
                    # initialize must not be cancelled with notifications/cancelled (the spec
                    # forbids it), so its deadline is a plain trio one, not the request timeout.
                    try:
                        with trio.fail_after(initialize_timeout):
                            result = await session.request(connection.initialize_request())
                    except trio.TooSlowError:
                        raise RequestTimeout(
                            f"The server did not answer initialize within {initialize_timeout} s"
                        ) from None
                    await session.notify(InitializedNotification())
                    yield Client(
                        session,
                        result,
                        request_timeout=request_timeout,
                        handlers=handlers,
                        notifications=router,
                        output_schemas=output_schemas,
                    )
                finally:
                    # Only the session is cancelled here: the transport then closes outside any
                    # cancelled scope (a stdio server gets its graceful shutdown), and an error
                    # from the body is not replaced by a Cancelled raised while closing.
                    session_scope.cancel()
        finally:
            nursery.cancel_scope.cancel()


async def _run_in_scope(
    session: Session,
    scope: trio.CancelScope,
    *,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    with scope:
        await session.run(task_status=task_status)


def _open_transport(
    nursery: trio.Nursery,
    target: Server | Sequence[str] | str | Transport,
    max_frame_size: int,
    env: Mapping[str, str] | None,
    cwd: str | None,
    headers: Mapping[str, str] | None = None,
    http_timeout: float = 30.0,
) -> AbstractAsyncContextManager[Transport]:
    from ..server.server import Server

    if isinstance(target, Server):
        return _in_memory(nursery, target, max_frame_size)
    if isinstance(target, str) and target.startswith(("ws://", "wss://")):
        return open_websocket_client_transport(target, max_frame_size=max_frame_size)
    if isinstance(target, str) and target.startswith(("http://", "https://")):
        return open_http_client_transport(
            target, headers=headers, timeout=http_timeout, max_frame_size=max_frame_size
        )
    if isinstance(target, str):
        target = shlex.split(target)
    if isinstance(target, Sequence):
        return open_stdio_client_transport(
            list(target),
            env=dict(env) if env is not None else None,
            cwd=cwd,
            max_frame_size=max_frame_size,
        )
    return _given(target)


@asynccontextmanager
async def _in_memory(
    nursery: trio.Nursery, server: Server, max_frame_size: int
) -> AsyncIterator[Transport]:
    client_end, server_end = memory_transport_pair(max_frame_size=max_frame_size)
    await nursery.start(server.serve_session, server_end)
    try:
        yield client_end
    finally:
        await client_end.aclose()


@asynccontextmanager
async def _given(transport: Transport) -> AsyncIterator[Transport]:
    try:
        yield transport
    finally:
        await transport.aclose()
