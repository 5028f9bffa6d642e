"""Starting a new Streamable HTTP session after the server ended the old one (a ``404``).

A 404 to a request carrying a session id means the server ended the session, and the spec says
the client MUST start a new one. The transport does it transparently (a decision): the session
above never learns of it, so a server restart costs one round trip instead of failing the
application. What does not survive is the server's per-session state (resource subscriptions,
logging level, in-flight requests: requests that were waiting on a stream of the old session get
an error response). If the renewal fails, or the server now answers with a different revision,
the transport ends (``receive`` raises ``trio.EndOfChannel``) and the session with it, since
carrying on would speak the wrong protocol.

This module keeps what a renewal needs (the
``initialize`` request and ``notifications/initialized`` the transport relayed) and replays them:
the ``initialize`` POST goes without a session id, its response is swallowed rather than
delivered, the revision it names must be the one the old session spoke, and then
``notifications/initialized`` follows with the new session id.

Many requests may get the ``404`` at once; one renewal runs at a time, and a request whose
stale session id was already replaced does not start another. A renewal that fails ends the
transport for good.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

import trio

from ....protocol.base import RequestId
from ....protocol.sse import SseParser
from ..engine.client_pool import HttpError, HttpResponse
from .auth_hook import Requests
from .base import HttpClientOptions
from .messages import OutgoingInfo, initialize_revision, response_ids

__all__ = ["ACCEPT_JSON_OR_SSE", "RenewalHost", "SessionRenewal"]

# Renewal is part of what the Streamable HTTP client does: its log lines stay under that logger.
log = logging.getLogger("mcptrio.transports.http.client.streamable")

#: The ``Accept`` header of every Streamable HTTP POST.
ACCEPT_JSON_OR_SSE = "application/json, text/event-stream"


class RenewalHost(Protocol):
    """What :class:`SessionRenewal` needs of the transport whose session it renews."""

    url: str
    options: HttpClientOptions
    #: The id of the current session: cleared while a renewal runs, then the new one.
    session_id: str | None
    #: The revision the session speaks; a new session must speak it too.
    protocol_version: str | None

    def request_headers(self, accept: str, *, session: bool = True) -> list[tuple[str, str]]:
        """The headers of a request, with the session's id and revision when ``session``."""
        ...

    def take_session_id(self, response: HttpResponse) -> None:
        """Adopt the ``Mcp-Session-Id`` of an ``initialize`` response, if it has a valid one."""
        ...


class SessionRenewal:
    """The lifecycle frames a transport relayed, and the renewal that replays them.

    ``on_end`` is called once, when a renewal fails: the transport must stop delivering (its
    ``receive`` then raises ``trio.EndOfChannel``).
    """

    def __init__(self, host: RenewalHost, pool: Requests, *, on_end: Callable[[], None]) -> None:
        self._host = host
        self._pool = pool
        self._on_end = on_end
        self._lock = trio.Lock()
        self._initialize_frame: bytes | None = None
        self._initialize_id: RequestId | None = None
        self._initialized_frame: bytes | None = None
        #: Whether a renewal failed, which ended the transport.
        self.ended = False

    def remember(self, data: bytes, info: OutgoingInfo) -> None:
        """Keep ``data`` if it is ``initialize`` or ``notifications/initialized``."""
        if info.method == "initialize" and info.request_ids:
            self._initialize_frame = data
            self._initialize_id = info.request_ids[0]
        elif info.method == "notifications/initialized":
            self._initialized_frame = data

    async def renew(self, stale: str) -> bool:
        """Start a new session after ``stale`` got a 404; ``False`` ends the transport."""
        host = self._host
        async with self._lock:
            if host.session_id != stale or self.ended:
                # Another task renewed the session already (or failed to, and ended).
                return not self.ended
            init, init_id = self._initialize_frame, self._initialize_id
            if init is None or init_id is None:
                return self._end("The server ended the session before it was initialized")
            log.info("the server ended session %s; starting a new one", stale)
            host.session_id = None
            revision = host.protocol_version
            try:
                answer = await self._exchange(init, init_id)
                if answer is None:
                    return self._end("The server refused to start a new session")
                new_revision = initialize_revision(answer, init_id)
                if new_revision != revision:
                    return self._end(
                        f"The new session speaks {new_revision!r}, not {revision!r} as before"
                    )
                if self._initialized_frame is not None:
                    await self._exchange(self._initialized_frame, None)
            except HttpError as exc:
                return self._end(f"Could not start a new session: {exc}")
            return True

    async def _exchange(self, data: bytes, rid: RequestId | None) -> bytes | None:
        """POST ``data`` and return the response for ``rid`` without delivering it."""
        host = self._host
        headers = host.request_headers(ACCEPT_JSON_OR_SSE, session=rid is None)
        headers.append(("content-type", "application/json"))
        async with self._pool.request(
            "POST", host.url, headers=headers, body=data, read_timeout=host.options.timeout
        ) as response:
            if not 200 <= response.status < 300:
                log.warning("session renewal: HTTP %d", response.status)
                return None
            if rid is None:
                return b""
            host.take_session_id(response)
            if response.content_type == "application/json":
                return await response.read(host.options.max_frame_size)
            parser = SseParser(max_line=host.options.max_frame_size + 64)
            while chunk := await response.receive_some():
                for event in parser.feed(chunk):
                    data = event.data.encode("utf-8")
                    if event.data and rid in response_ids(data):
                        return data
        return None

    def _end(self, reason: str) -> bool:
        log.error("%s; closing the transport", reason)
        self.ended = True
        self._on_end()
        return False
