"""Several :class:`~.exchange.HttpApp` behind one port: :class:`HttpRouter`.

Each app is mounted at a path prefix. A request goes to the app with the longest prefix that
matches whole path segments (``/a`` takes ``/a`` and ``/a/mcp``, never ``/ab``); that app sees
the path below its prefix (``/mcp``) and finds the prefix in the request's ``root_path``
attribute (to build absolute URLs, as the legacy SSE endpoint does). Anything no prefix matches
gets a 404 with a JSON body, and a WebSocket upgrade there is refused with 404.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

import trio

from .exchange import Headers, HttpApp, HttpRequest, HttpResponder, WebSocketPeer

__all__ = ["HttpRouter"]

_JSON = [(b"content-type", b"application/json")]


@dataclass(frozen=True, slots=True)
class _MountedRequest:
    """``request`` as the app mounted at a prefix sees it: the path below the prefix, and the
    prefix in ``root_path``. The rest is the request's own, read once when it is routed."""

    request: HttpRequest
    path: str
    root_path: str
    method: str
    query_string: bytes
    headers: Headers
    client: tuple[str, int] | None
    scheme: str

    @classmethod
    def of(cls, request: HttpRequest, path: str, root_path: str) -> _MountedRequest:
        return cls(
            request,
            path,
            root_path,
            request.method,
            request.query_string,
            request.headers,
            request.client,
            request.scheme,
        )

    async def read_body(self, limit: int) -> bytes:
        return await self.request.read_body(limit)


class HttpRouter:
    """Routes requests to the app mounted at the longest matching path prefix."""

    def __init__(self, routes: Mapping[str, HttpApp]) -> None:
        if not routes:
            raise ValueError("HttpRouter needs at least one route")
        normalised: dict[str, HttpApp] = {}
        for prefix, app in routes.items():
            key = "/" + prefix.strip("/")
            if key in normalised:
                raise ValueError(f"two apps mounted at {key!r}")
            normalised[key] = app
        #: (prefix, app), longest prefix first.
        self.routes = sorted(normalised.items(), key=lambda item: len(item[0]), reverse=True)

    def match(self, path: str) -> tuple[HttpApp, str, str] | None:
        """``(app, path below the prefix, prefix)`` for ``path``, or ``None``."""
        for prefix, app in self.routes:
            if prefix == "/":
                return app, path, ""
            if path.startswith(prefix):
                rest = path[len(prefix) :]
                if not rest or rest[0] == "/":
                    return app, rest or "/", prefix
        return None

    def _route(self, request: HttpRequest) -> tuple[HttpApp, HttpRequest] | None:
        found = self.match(request.path)
        if found is None:
            return None
        app, path, prefix = found
        if not prefix:
            return app, request
        root_path = getattr(request, "root_path", "") + prefix
        return app, _MountedRequest.of(request, path, root_path)

    async def handle_http(self, request: HttpRequest, responder: HttpResponder) -> None:
        routed = self._route(request)
        if routed is None:
            await responder.send_response(404, _JSON, _not_found(request.path))
            return
        app, mounted = routed
        await app.handle_http(mounted, responder)

    async def handle_websocket(self, request: HttpRequest, peer: WebSocketPeer) -> None:
        routed = self._route(request)
        if routed is None:
            await peer.reject(404, _not_found(request.path))
            return
        app, mounted = routed
        await app.handle_websocket(mounted, peer)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Run every mounted app's ``run`` (those that have one) until cancelled."""
        async with trio.open_nursery() as nursery:
            for _, app in self.routes:
                run = getattr(app, "run", None)
                if callable(run):
                    await nursery.start(run)
            task_status.started()
            await trio.sleep_forever()

    async def drain(self) -> None:
        """Let every mounted app that has a ``drain`` finish its graceful stop (see
        :func:`~mcptrio.transports.http.serve.serve_http`)."""
        for _, app in self.routes:
            drain = getattr(app, "drain", None)
            if callable(drain):
                await drain()


def _not_found(path: str) -> bytes:
    return json.dumps({"error": "not found", "message": f"No endpoint at {path}"}).encode()
