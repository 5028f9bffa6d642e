"""The client: connect to a server, complete the handshake, make typed calls.

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
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import trio
from msgspec import UNSET

from ..protocol.base import Request, Result
from ..protocol.connection import Connection
from ..protocol.errors import MethodNotFound, RequestTimeout
from ..protocol.revisions import SUPPORTED
from ..protocol.types import (
    CallToolRequest,
    CallToolResult,
    ClientCapabilities,
    Implementation,
    InitializedNotification,
    InitializeResult,
    ListToolsRequest,
    ListToolsResult,
    ServerCapabilities,
)
from ..runtime.context import RequestContext
from ..runtime.nurseries import open_unwrapping_nursery
from ..runtime.outgoing import ProgressCallback
from ..runtime.session import NotificationHandler, RequestHandler, Session
from ..transports.base import DEFAULT_MAX_FRAME_SIZE, Transport
from ..transports.http.client_transport import open_http_client_transport
from ..transports.memory import memory_transport_pair
from ..transports.stdio import open_stdio_client_transport
from ..transports.websocket import open_websocket_client_transport

if TYPE_CHECKING:
    from ..server.server import Server

__all__ = ["Client", "open_client"]

ResultT = TypeVar("ResultT", bound=Result)

DEFAULT_CLIENT_INFO = Implementation(name="mcptrio-client", version="0.1.0")


class Client:
    """A connected, initialized MCP client session."""

    def __init__(self, session: Session, initialize_result: InitializeResult) -> None:
        self.session = session
        self.initialize_result = initialize_result

    @property
    def protocol_version(self) -> str:
        """The negotiated protocol revision."""
        return self.initialize_result.protocol_version

    @property
    def server_info(self) -> Implementation:
        return self.initialize_result.server_info

    @property
    def server_capabilities(self) -> ServerCapabilities:
        return self.initialize_result.capabilities

    @property
    def instructions(self) -> str | None:
        value = self.initialize_result.instructions
        return value if isinstance(value, str) else None

    async def request(
        self,
        request: Request[ResultT],
        *,
        timeout: float | None = None,
        max_total_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> ResultT:
        """Send any request and return its typed result (see :meth:`Session.request`)."""
        return await self.session.request(
            request, timeout=timeout, max_total_timeout=max_total_timeout, on_progress=on_progress
        )

    async def ping(self, *, timeout: float | None = None) -> None:
        await self.session.ping(timeout=timeout)

    async def list_tools(
        self, cursor: str | None = None, *, timeout: float | None = None
    ) -> ListToolsResult:
        """One page of ``tools/list``."""
        request = ListToolsRequest(cursor=UNSET if cursor is None else cursor)
        return await self.request(request, timeout=timeout)

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        max_total_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> CallToolResult:
        """Call tool ``name``; a tool failure comes back as a result with ``is_error`` set."""
        request = CallToolRequest(
            name=name, arguments=UNSET if arguments is None else dict(arguments)
        )
        return await self.request(
            request, timeout=timeout, max_total_timeout=max_total_timeout, on_progress=on_progress
        )


async def _refuse_requests(ctx: RequestContext, request: Request[Any]) -> Result:
    raise MethodNotFound(f"Method not found: {request.METHOD}")


@asynccontextmanager
async def open_client(
    target: Server | Sequence[str] | str | Transport,
    *,
    client_info: Implementation = DEFAULT_CLIENT_INFO,
    capabilities: ClientCapabilities | None = None,
    supported_revisions: tuple[str, ...] = SUPPORTED,
    initialize_timeout: float = 30.0,
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    handle_request: RequestHandler | None = None,
    handle_notification: NotificationHandler | None = None,
    headers: Mapping[str, str] | None = None,
    http_timeout: float = 30.0,
) -> AsyncIterator[Client]:
    """Connect to ``target`` and yield an initialized :class:`Client`.

    ``target`` is a :class:`~mcptrio.Server` (served in-memory, in this block's nursery), a
    command line (a list of arguments, or a string split like a shell would) to spawn as a stdio
    server, a ``ws://`` or ``wss://`` URL (MCP over WebSocket), an ``http://`` or ``https://``
    URL (Streamable HTTP, falling back to HTTP+SSE for older servers; ``headers`` go on every
    HTTP request and ``http_timeout`` bounds connecting and each read), or any
    :class:`~mcptrio.transports.base.Transport`. The handshake must finish within
    ``initialize_timeout`` seconds; a server answering in a revision this client does not speak
    raises :class:`~mcptrio.protocol.errors.UnsupportedProtocolVersion`.

    ``handle_request`` answers the server's requests (sampling, elicitation, roots) at the
    lowest level: it gets each request and returns its result. Without it, every server request
    but ``ping`` is refused with -32601. Declare the matching ``capabilities`` too.

    ``handle_notification(session, notification)`` (sync or async) sees every notification the
    server sends (log messages, list changes, resource updates), except progress about a request
    this client is waiting on, which goes to that request's ``on_progress``. It runs in the
    session's reader, in the order messages arrive, so while it waits nothing else is read from
    the server: keep it quick.
    """
    async with open_unwrapping_nursery() as nursery:
        try:
            async with _open_transport(
                nursery, target, max_frame_size, env, cwd, headers, http_timeout
            ) as transport:
                connection = Connection(
                    "client",
                    info=client_info,
                    capabilities=capabilities if capabilities is not None else ClientCapabilities(),
                    supported=supported_revisions,
                )
                session = Session(
                    connection,
                    transport,
                    handle_request=handle_request or _refuse_requests,
                    handle_notification=handle_notification,
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
                    yield Client(session, result)
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
