"""What :func:`~mcptrio.open_client` connects to, told apart by type, never by guessing.

- a list (any sequence but a string) of strings or paths: stdio, the server is that command,
  run as a subprocess; :func:`stdio` ``(command, env=..., cwd=...)`` with the subprocess's
  options;
- ``"http://..."`` or ``"https://..."``: Streamable HTTP, falling back to HTTP+SSE;
  :func:`http` ``(url, headers=..., timeout=...)`` with the HTTP client's options;
- ``"ws://..."`` or ``"wss://..."``: MCP over WebSocket (subprotocol ``mcp``);
  :func:`websocket` ``(url, headers=...)`` with the WebSocket client's options;
- a server object (a :class:`SessionServer`, such as :class:`mcptrio.Server`): in memory, served
  in the client's own nursery; :func:`in_memory` ``(server, max_frame_size=...)``;
- an open :class:`~mcptrio.runtime.transport.Transport`: used as it is, closed with the block.

A string is a URL or an error: a command is never split out of a string and run, since a
string that is almost a URL (``"htp://..."``, a file name) would otherwise be executed. Each
transport's options live in its target, so they cannot be given to a target that ignores them.

Every target record is frozen and checks its arguments when made, so a mistake shows where the
target is written, not when the connection opens.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import KW_ONLY, dataclass
from typing import Any, ClassVar, Protocol, TypeAlias, TypedDict, runtime_checkable

import trio

from ..runtime.transport import DEFAULT_MAX_FRAME_SIZE, Transport
from ..transports.http.client.auth_hook import HttpAuth
from ..transports.http.client.transport import open_http_client_transport
from ..transports.memory import memory_transport_pair
from ..transports.stdio import open_stdio_client_transport
from ..transports.websocket import open_websocket_client_transport

__all__ = [
    "HttpTarget",
    "InMemoryTarget",
    "SessionServer",
    "StdioTarget",
    "Target",
    "WebSocketTarget",
    "http",
    "in_memory",
    "open_target",
    "resolve_target",
    "stdio",
    "websocket",
]

_HTTP_SCHEMES = ("http://", "https://")
_WEBSOCKET_SCHEMES = ("ws://", "wss://")


@runtime_checkable
class SessionServer(Protocol):
    """What the client needs of a server to run it in memory: one session over a transport.

    :class:`mcptrio.Server` is one. ``serve_session`` serves ``transport`` until it ends and
    reports readiness through ``task_status``, as ``serve_*`` functions do.
    """

    async def serve_session(
        self, transport: Transport, *, task_status: trio.TaskStatus[Any] = ...
    ) -> None: ...


@runtime_checkable
class _AnyTransport(Transport, Protocol):
    """:class:`Transport`, checkable with ``isinstance`` (it is a structural interface)."""


@dataclass(frozen=True)
class StdioTarget:
    """Spawn ``command`` and speak MCP over its stdin and stdout; made by :func:`stdio`.

    ``command`` is the program and its arguments, never a shell string. ``env`` (``None``:
    ours) and ``cwd`` are the process's. Leaving the client's block shuts the server down as the
    spec says: close its stdin and wait ``stdin_close_grace`` seconds, then ``SIGTERM`` and wait
    ``terminate_grace``, then ``SIGKILL``. What the server writes to stderr goes to the
    ``mcptrio.stdio.server_stderr`` logger. ``max_frame_size`` is the largest message accepted
    from the server.
    """

    command: Sequence[str | os.PathLike[str]]
    _: KW_ONLY
    env: Mapping[str, str] | None = None
    cwd: str | os.PathLike[str] | None = None
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE
    stdin_close_grace: float = 2.0
    terminate_grace: float = 2.0

    def __post_init__(self) -> None:
        command = self.command
        if isinstance(command, str | bytes):
            raise TypeError(
                f"stdio() takes the command as a list of arguments, not the string {command!r}:"
                " for instance stdio(['python', 'server.py'])"
            )
        if not isinstance(command, Sequence) or not command:
            raise ValueError(f"stdio() needs a non-empty list of arguments, got {command!r}")
        for argument in command:
            if not isinstance(argument, str | os.PathLike):
                raise TypeError(
                    f"Every argument of a stdio command must be a string (or a path),"
                    f" not {type(argument).__name__}: {argument!r}"
                )
        object.__setattr__(self, "command", tuple(command))

    def open(self, nursery: trio.Nursery) -> AbstractAsyncContextManager[Transport]:
        """The transport, for ``async with`` (``nursery`` is the client's)."""
        return open_stdio_client_transport(
            [os.fspath(argument) for argument in self.command],
            env=None if self.env is None else dict(self.env),
            cwd=self.cwd,
            max_frame_size=self.max_frame_size,
            stdin_close_grace=self.stdin_close_grace,
            terminate_grace=self.terminate_grace,
        )


@dataclass(frozen=True)
class _UrlTarget:
    """What a target reached at a URL has: the URL, checked; headers; TLS; a frame limit."""

    _KIND: ClassVar[str]
    _SCHEMES: ClassVar[tuple[str, ...]]

    url: str
    _: KW_ONLY
    headers: Mapping[str, str] | None = None
    ssl_context: ssl.SSLContext | None = None
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE

    def __post_init__(self) -> None:
        if not isinstance(self.url, str) or not self.url.lower().startswith(self._SCHEMES):
            raise ValueError(
                f"{self._KIND}() needs a URL starting with {' or '.join(self._SCHEMES)}:"
                f" {self.url!r}"
            )

    def _shared_options(self) -> _UrlOptions:
        return _UrlOptions(
            headers=self.headers, ssl_context=self.ssl_context, max_frame_size=self.max_frame_size
        )


class _UrlOptions(TypedDict):
    """The options every URL target hands its transport's opener."""

    headers: Mapping[str, str] | None
    ssl_context: ssl.SSLContext | None
    max_frame_size: int


@dataclass(frozen=True)
class HttpTarget(_UrlTarget):
    """The MCP endpoint at ``url`` over Streamable HTTP, falling back to HTTP+SSE for a server
    that predates it; made by :func:`http`.

    ``headers`` go on every request (an ``Authorization`` header, say). ``timeout`` bounds
    connecting and each read of an answer; ``sse_read_timeout`` each wait on an event stream.
    ``ssl_context`` is for ``https://`` (default: the system's). ``max_concurrent_posts`` bounds
    the requests in flight at once; ``max_frame_size`` is the largest message accepted.
    ``auth`` authorizes every request and answers the server's ``401``/``403`` challenges
    (:class:`mcptrio.auth.client.OAuthClient` logs in with OAuth 2.1).
    """

    _KIND = "http"
    _SCHEMES = _HTTP_SCHEMES

    timeout: float = 30.0
    sse_read_timeout: float = 300.0
    max_concurrent_posts: int = 32
    auth: HttpAuth | None = None

    def open(self, nursery: trio.Nursery) -> AbstractAsyncContextManager[Transport]:
        """The transport, for ``async with`` (``nursery`` is the client's)."""
        return open_http_client_transport(
            self.url,
            timeout=self.timeout,
            sse_read_timeout=self.sse_read_timeout,
            max_concurrent_posts=self.max_concurrent_posts,
            auth=self.auth,
            **self._shared_options(),
        )


@dataclass(frozen=True)
class WebSocketTarget(_UrlTarget):
    """The MCP WebSocket endpoint at ``url``; made by :func:`websocket`.

    ``headers`` go with the upgrade request; connecting (TCP, TLS, the upgrade) must finish
    within ``connect_timeout`` seconds. ``ssl_context`` is for ``wss://`` (default: the
    system's); ``max_frame_size`` is the largest message accepted.
    """

    _KIND = "websocket"
    _SCHEMES = _WEBSOCKET_SCHEMES

    connect_timeout: float = 10.0

    def open(self, nursery: trio.Nursery) -> AbstractAsyncContextManager[Transport]:
        """The transport, for ``async with`` (``nursery`` is the client's)."""
        return open_websocket_client_transport(
            self.url, connect_timeout=self.connect_timeout, **self._shared_options()
        )


@dataclass(frozen=True)
class InMemoryTarget:
    """``server``, served in memory in the client's nursery; made by :func:`in_memory`.

    The server's session lives exactly as long as the client's block. ``max_frame_size`` is the
    largest message either side accepts.
    """

    server: SessionServer
    _: KW_ONLY
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE

    def __post_init__(self) -> None:
        if not isinstance(self.server, SessionServer):
            raise TypeError(
                f"in_memory() takes a server with a serve_session method (a mcptrio.Server),"
                f" not {type(self.server).__name__}"
            )

    @asynccontextmanager
    async def open(self, nursery: trio.Nursery) -> AsyncIterator[Transport]:
        """The transport, for ``async with`` (the server's session runs in ``nursery``)."""
        client_end, server_end = memory_transport_pair(
            max_frame_size=self.max_frame_size, carry_results=True
        )
        await nursery.start(self.server.serve_session, server_end)
        try:
            yield client_end
        finally:
            await client_end.aclose()


#: ``stdio(command, *, env=None, cwd=None, ...)``: a stdio target (see :class:`StdioTarget`).
stdio = StdioTarget
#: ``http(url, *, headers=None, timeout=30.0, ...)``: an HTTP target (see :class:`HttpTarget`).
http = HttpTarget
#: ``websocket(url, *, headers=None, ...)``: a WebSocket target (see :class:`WebSocketTarget`).
websocket = WebSocketTarget
#: ``in_memory(server, *, max_frame_size=...)``: an in-memory target (:class:`InMemoryTarget`).
in_memory = InMemoryTarget

#: Everything :func:`~mcptrio.open_client` accepts as its target (see the module docs).
Target: TypeAlias = (
    Sequence[str | os.PathLike[str]]
    | str
    | StdioTarget
    | HttpTarget
    | WebSocketTarget
    | InMemoryTarget
    | SessionServer
    | Transport
)

_ConnectingTarget: TypeAlias = StdioTarget | HttpTarget | WebSocketTarget | InMemoryTarget


def resolve_target(target: object) -> _ConnectingTarget | Transport:
    """The target record ``target`` stands for, or the open transport it is.

    Raises ``ValueError`` for a string that is not a ``http(s)://`` or ``ws(s)://`` URL, and
    ``TypeError`` for anything that is not a target.
    """
    if isinstance(target, _ConnectingTarget):
        return target
    if isinstance(target, str):
        lowered = target.lower()
        if lowered.startswith(_HTTP_SCHEMES):
            return HttpTarget(target)
        if lowered.startswith(_WEBSOCKET_SCHEMES):
            return WebSocketTarget(target)
        raise ValueError(
            f"open_client() got the string {target!r}, which is not an http(s):// or ws(s)://"
            " URL. A command is never split out of a string: pass it as a list of arguments"
            " (['python', 'server.py']) or as mcptrio.client.stdio([...])."
        )
    if isinstance(target, Sequence) and not isinstance(target, bytes | bytearray):
        return StdioTarget(target)
    if isinstance(target, SessionServer):
        return InMemoryTarget(target)
    if isinstance(target, _AnyTransport):
        return target
    raise TypeError(
        f"open_client() cannot connect to {type(target).__name__} {target!r}. It takes a"
        " command (a list of arguments, or stdio(...)), an http(s):// or ws(s):// URL (or"
        " http(...), websocket(...)), a server to run in memory (anything with serve_session,"
        " or in_memory(...)), or an open Transport."
    )


def open_target(target: object, nursery: trio.Nursery) -> AbstractAsyncContextManager[Transport]:
    """Open ``target`` (see :func:`resolve_target`); leaving the block closes the transport."""
    resolved = resolve_target(target)
    if isinstance(resolved, _ConnectingTarget):
        return resolved.open(nursery)
    return _closing(resolved)


@asynccontextmanager
async def _closing(transport: Transport) -> AsyncIterator[Transport]:
    try:
        yield transport
    finally:
        await transport.aclose()
