"""What both HTTP client transports share: their options, their POSTs and their incoming frames.

Streamable HTTP and the legacy HTTP+SSE transport differ in where they POST and how answers come
back, and in nothing else a session can see. :class:`HttpClientTransportBase` is that nothing
else: frames the server sent wait in one bounded memory channel for
:meth:`~HttpClientTransportBase.receive` (so a session that stops reading makes the transport's
readers wait: backpressure), outgoing frames go to a :class:`~.posts.PostScheduler`, and closing
cancels the transport's own nursery.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TypedDict

import trio

from ....protocol.base import RequestId
from ....protocol.errors import McpError
from ....protocol.sse import SseEvent
from ....runtime.transport import (
    DEFAULT_MAX_FRAME_SIZE,
    FailedRequest,
    Frame,
    Outgoing,
    OversizedFrame,
    oversized_frame,
)
from ..engine.client_pool import HttpClientPool, HttpResponse
from .auth_hook import AuthorizedRequests, HttpAuth, Requests
from .messages import (
    OutgoingInfo,
    copy_error,
    http_error,
    is_page,
    not_an_endpoint,
    peek_outgoing,
)
from .posts import PostFrame, PostScheduler

__all__ = ["HttpClientOptions", "HttpClientSettings", "HttpClientTransportBase"]

log = logging.getLogger("mcptrio.transports.http.client")

#: How much of an error response's body is read, to quote it in the error the caller gets.
ERROR_BODY_LIMIT = 4096


@dataclass(frozen=True, slots=True)
class HttpClientOptions:
    """The options every HTTP client transport takes; the ``open_*`` functions document them."""

    headers: tuple[tuple[str, str], ...] = ()
    timeout: float = 30.0
    sse_read_timeout: float = 300.0
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE
    max_concurrent_posts: int = 32
    #: Frames from the server that wait for the session to take them.
    incoming_buffer: int = 64
    #: Authorizes every request (an OAuth client, say); ``None``: requests go as they are.
    auth: HttpAuth | None = None

    @classmethod
    def of(cls, settings: HttpClientSettings) -> HttpClientOptions:
        """The record of the keywords an ``open_*`` function was given (the rest default)."""
        headers = settings.get("headers")
        rest = {key: value for key, value in settings.items() if key != "headers"}
        return cls(headers=tuple((headers or {}).items()), **rest)  # type: ignore[arg-type]


class HttpClientSettings(TypedDict, total=False):
    """The keywords every HTTP client transport's ``open_*`` function takes, declared once.

    ``headers`` go on every request (for example ``Authorization``). ``timeout`` bounds
    connecting and every read of a JSON response (and the DELETE on close), 30 s by default;
    ``sse_read_timeout`` is how long an SSE stream may stay silent before it is taken as broken
    (300 s); ``max_frame_size`` bounds one frame from the server; ``max_concurrent_posts``
    bounds the POSTs in flight (32). ``auth`` authorizes every request and answers the
    server's ``401``/``403`` challenges (:class:`mcptrio.auth.client.OAuthClient`, say).
    """

    headers: Mapping[str, str] | None
    timeout: float
    sse_read_timeout: float
    max_frame_size: int
    max_concurrent_posts: int
    auth: HttpAuth | None


class HttpClientTransportBase:
    """The part of an HTTP client transport that does not depend on the HTTP transport spoken.

    A subclass says how it POSTs one frame in :attr:`_post_frame`; the POSTs run in
    ``nursery``.
    """

    #: POSTs one frame the session sent, and delivers (or fails) what the response brings.
    _post_frame: PostFrame

    def __init__(
        self, url: str, pool: HttpClientPool, nursery: trio.Nursery, options: HttpClientOptions
    ) -> None:
        self.url = url
        self.options = options
        #: Every request goes through this: the pool, authorized when ``options.auth`` is set.
        self._pool: Requests = (
            pool if options.auth is None else AuthorizedRequests(pool, options.auth)
        )
        self._nursery = nursery
        self._posts = PostScheduler(
            nursery, self._post_frame, max_concurrent_posts=options.max_concurrent_posts
        )
        self._incoming_send, self._incoming_receive = trio.open_memory_channel[
            Frame | FailedRequest
        ](options.incoming_buffer)
        #: Set when the input broke rather than ended: ``receive`` then says so.
        self._broken = False
        self._closed = False

    async def receive(self) -> Frame | FailedRequest:
        """The next frame from the server; ``trio.EndOfChannel`` once the transport ended
        (``trio.BrokenResourceError`` when it ended because its stream broke)."""
        try:
            return await self._incoming_receive.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            if self._broken:
                raise trio.BrokenResourceError("The SSE stream broke") from None
            raise trio.EndOfChannel from None

    async def _schedule(self, frame: Outgoing) -> OutgoingInfo:
        """Start the POST of ``frame``, waiting only for a free POST slot; what it carries."""
        if self._closed:
            raise trio.ClosedResourceError("The transport is closed")
        info = peek_outgoing(frame.data)
        await self._posts.schedule(frame.data, info)
        return info

    def _schedule_nowait(self, frame: Outgoing) -> OutgoingInfo | None:
        """:meth:`_schedule` without waiting: ``None`` when no POST slot is free (or the
        transport is closed), and nothing was started."""
        if self._closed:
            return None
        info = peek_outgoing(frame.data)
        return info if self._posts.schedule_nowait(frame.data, info) else None

    def _stop(self) -> bool:
        """Stop every task and end the input; ``False`` when the transport was stopped before."""
        if self._closed:
            return False
        self._closed = True
        # The transport's own nursery: the caller's block (often the one calling this, through
        # ``open_client(transport)``) runs outside it and carries on.
        self._nursery.cancel_scope.cancel()
        self._incoming_send.close()
        return True

    def _request_headers(self, *extra: tuple[str, str]) -> list[tuple[str, str]]:
        return [*self.options.headers, *extra]

    async def _deliver(self, frame: Frame | FailedRequest) -> None:
        try:
            await self._incoming_send.send(frame)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            log.debug("dropped a frame that arrived after the transport closed")

    def _message_of(self, event: SseEvent) -> bytes | OversizedFrame | None:
        """The frame a ``message`` event carries, or ``None`` for an event that carries none.

        A frame over ``max_frame_size`` is an :class:`OversizedFrame`, holding how it began (to
        deliver, so that the session learns that something was lost, and whose it was).
        """
        if event.event != "message":
            log.info("ignored an SSE event named %r", event.event)
            return None
        if not event.data:
            return None
        data = event.data.encode("utf-8")
        limit = self.options.max_frame_size
        if len(data) > limit:
            return oversized_frame(limit, data)
        return data

    async def _fail_requests(self, request_ids: Collection[RequestId], error: McpError) -> None:
        """Fail each of ``request_ids`` with ``error`` (a transport failure: the caller gets
        the exception itself, an :class:`~.client_pool.HttpError` say, not an error answer)."""
        for n, rid in enumerate(sorted(request_ids, key=str)):
            await self._deliver(FailedRequest(rid, error if n == 0 else copy_error(error)))

    async def _refused(
        self,
        request_ids: Collection[RequestId],
        status: int,
        reason: str,
        body: bytes | None,
        content_type: str = "",
    ) -> None:
        """Fail each of ``request_ids`` with the error its POST's ``status`` means (see
        :func:`~.messages.http_error`)."""
        if not request_ids:
            log.warning("the server refused a notification or response with HTTP %d", status)
        await self._fail_requests(request_ids, http_error(status, reason, body, content_type))

    async def _not_an_endpoint(self, response: HttpResponse) -> str:
        """Why an answer no MCP endpoint gives (a web page, say) fails its requests, in one
        line; a page's start is read for its title (see :func:`~.messages.not_an_endpoint`)."""
        start = b""
        if is_page(response.content_type, None):
            while len(start) < ERROR_BODY_LIMIT and (chunk := await response.receive_some()):
                start += chunk
        return not_an_endpoint(response.status, response.reason, response.content_type, start)
