"""How the user's browser gets to the authorization endpoint and back: redirect handlers.

The authorization-code grant needs a user agent: it is sent to the authorization URL, the user
logs in and consents, and the authorization server redirects it to the client's
``redirect_uri`` with ``code``, ``state`` and ``iss`` (or ``error``) in the query. A
:class:`RedirectHandler` is that part, so the same grant serves a desktop app, a CLI, a test:

- :class:`LoopbackBrowser`: for desktop and command-line apps (RFC 8252 §7.3). It listens on
  ``127.0.0.1`` (port 0 by default: the system picks one, and RFC 8252 has the authorization
  server accept any port for a loopback redirect), opens the system browser (or calls
  ``open_url``) and waits for the redirect, within ``timeout``. It answers one request to its
  callback path with a short page saying the window can be closed; anything else gets 404.
- :class:`HeadlessUserAgent`: fetches the authorization URL itself and reads the ``Location``
  of the redirect, without following it. For automated tests and for authorization servers that
  grant without interaction (the conformance suite's, a development server's auto-approve mode).

``open()`` is an async context manager yielding a :class:`RedirectSession`: its
``redirect_uri`` is known before the authorization URL is built (and before a dynamic
registration, which lists it), and :meth:`RedirectSession.run` returns the redirect's query.
"""

from __future__ import annotations

import logging
import ssl
import webbrowser
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import parse_qsl, urljoin, urlsplit

import h11
import trio

from ...transports.http.engine.client_pool import HttpClientPool
from ..http_pools import open_http_pool
from .errors import AuthorizationResponseError

__all__ = ["HeadlessUserAgent", "LoopbackBrowser", "RedirectHandler", "RedirectSession"]

log = logging.getLogger("mcptrio.auth.client")

_PAGE = (
    b"<!doctype html><meta charset=utf-8><title>Signed in</title>"
    b"<p>You can close this window and return to the application.</p>"
)
_MAX_REQUEST = 16384


class RedirectSession(Protocol):
    """One authorization in progress: where the redirect comes back, and the wait for it."""

    @property
    def redirect_uri(self) -> str: ...

    async def run(self, authorization_url: str) -> dict[str, str]:
        """Send the user to ``authorization_url``; the redirect's query parameters."""
        ...


class RedirectHandler(Protocol):
    """Makes a :class:`RedirectSession` for each authorization."""

    #: Whether the client is a native app (``application_type`` in a registration).
    native: bool

    @property
    def redirect_uris(self) -> list[str]:
        """The redirect URIs to register (before any session is open)."""
        ...

    def open(self) -> AbstractAsyncContextManager[RedirectSession]: ...


# ---------------------------------------------------------------- headless


@dataclass
class _HeadlessSession:
    http: HttpClientPool
    redirect_uri: str

    async def run(self, authorization_url: str) -> dict[str, str]:
        async with self.http.request("GET", authorization_url) as response:
            status = response.status
            location = response.header(b"location")
        if status not in (301, 302, 303, 307, 308) or location is None:
            raise AuthorizationResponseError(
                f"The authorization endpoint answered HTTP {status}, not a redirect"
            )
        try:
            target = urljoin(authorization_url, location.decode("latin-1"))
            elsewhere = urlsplit(target)[:3] != urlsplit(self.redirect_uri)[:3]
        except ValueError:
            raise AuthorizationResponseError(
                "The authorization endpoint redirected to an invalid URL"
            ) from None
        if elsewhere:
            raise AuthorizationResponseError(
                "The authorization endpoint redirected somewhere other than the redirect URI"
            )
        return dict(parse_qsl(urlsplit(target).query))


@dataclass
class HeadlessUserAgent:
    """A user agent that fetches the authorization URL and reads the redirect (no browser).

    ``redirect_uri`` is registered and sent as it is; nothing listens there. ``timeout`` bounds
    connecting and each read; ``ssl_context`` is for an ``https`` authorization endpoint.
    """

    redirect_uri: str = "http://127.0.0.1:3000/callback"
    timeout: float = 30.0
    ssl_context: ssl.SSLContext | None = None
    native: bool = True

    @property
    def redirect_uris(self) -> list[str]:
        return [self.redirect_uri]

    @asynccontextmanager
    async def open(self) -> AsyncIterator[RedirectSession]:
        async with open_http_pool(
            ssl_context=self.ssl_context, timeout=self.timeout, max_connections=2
        ) as http:
            yield _HeadlessSession(http, self.redirect_uri)


# ---------------------------------------------------------------- loopback + browser


@dataclass(slots=True, eq=False)
class _LoopbackSession:
    listener: trio.SocketListener
    path: str
    opener: Callable[[str], object]
    timeout: float
    redirect_uri: str = field(init=False)

    def __post_init__(self) -> None:
        host, port = self.listener.socket.getsockname()[:2]
        self.redirect_uri = f"http://{host}:{port}{self.path}"

    async def run(self, authorization_url: str) -> dict[str, str]:
        found: dict[str, str] | None = None
        with trio.move_on_after(self.timeout):
            async with trio.open_nursery() as nursery:
                # The browser call may block (or, for a test's browser, follow the redirect
                # here): it runs beside the listener, and is abandoned once the redirect came.
                nursery.start_soon(self._launch, authorization_url)
                while found is None:
                    stream = await self.listener.accept()
                    async with stream:
                        found = await self._serve_one(stream)
                nursery.cancel_scope.cancel()
        if found is None:
            raise AuthorizationResponseError(f"No login came back within {self.timeout} s")
        return found

    async def _launch(self, authorization_url: str) -> None:
        await trio.to_thread.run_sync(self.opener, authorization_url, abandon_on_cancel=True)

    async def _serve_one(self, stream: trio.SocketStream) -> dict[str, str] | None:
        connection = h11.Connection(h11.SERVER, max_incomplete_event_size=_MAX_REQUEST)
        request: h11.Request | None = None
        with trio.move_on_after(10):
            while request is None:
                data = await stream.receive_some(_MAX_REQUEST)
                if not data:
                    return None
                try:
                    connection.receive_data(data)
                    event = connection.next_event()
                except h11.RemoteProtocolError:
                    return None
                if isinstance(event, h11.Request):
                    request = event
        if request is None:
            return None
        target = urlsplit(request.target.decode("latin-1"))
        found = target.path == self.path and request.method == b"GET"
        body = _PAGE if found else b"Not found"
        headers = [
            ("content-type", "text/html; charset=utf-8" if found else "text/plain"),
            ("content-length", str(len(body))),
            ("connection", "close"),
        ]
        with suppress(trio.BrokenResourceError, h11.LocalProtocolError):
            await stream.send_all(
                connection.send(h11.Response(status_code=200 if found else 404, headers=headers))
                + connection.send(h11.Data(data=body))
                + connection.send(h11.EndOfMessage())
            )
        return dict(parse_qsl(target.query)) if found else None


@dataclass
class LoopbackBrowser:
    """Log in through the system browser, the redirect caught on a loopback port.

    ``port`` 0 lets the system choose (register ``redirect_uris`` with that in mind: they
    carry the port of the last session, or none before the first). ``open_url`` replaces the
    browser (print the URL for a headless machine). ``timeout`` bounds the whole login.
    """

    port: int = 0
    path: str = "/callback"
    open_url: Callable[[str], object] = webbrowser.open
    timeout: float = 300.0
    native: bool = True

    @property
    def redirect_uris(self) -> list[str]:
        port = f":{self.port}" if self.port else ""
        return [f"http://127.0.0.1{port}{self.path}"]

    @asynccontextmanager
    async def open(self) -> AsyncIterator[RedirectSession]:
        listeners = await trio.open_tcp_listeners(self.port, host="127.0.0.1")
        listener = listeners[0]
        try:
            yield _LoopbackSession(listener, self.path, self.open_url, self.timeout)
        finally:
            for each in listeners:
                await each.aclose()
