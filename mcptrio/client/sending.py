"""How a :class:`~mcptrio.Client`'s requests reach the server: :class:`RequestSender`.

One path for every request: the cache first (for what may be cached, :mod:`.cache`), then the
send hook when there is one (:data:`SendHook`), then the session with the call's timeouts, and,
in the stateless era, the rounds of input the server asks for in its answers
(:mod:`.input_required`), so that a call returns its own result in either era.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar, Unpack, cast

import trio

from ..protocol.base import Request, RequestId, Result
from ..protocol.errors import RequestTimeout
from ..protocol.types import CallToolRequest
from ..protocol.types.input_required import InputRequiredResult
from ..runtime.session import Session
from .cache import ResultCache, cache_key, cache_mode
from .call_keys import CallKeys
from .input_required import answer_input_required
from .options import CallOptions, check_options
from .server_requests import ServerRequestRouter

__all__ = ["RequestSender", "SendHook", "SendSettings"]

ResultT = TypeVar("ResultT", bound=Result)
#: Wraps each request a client sends: ``hook(request, send)`` returns ``send``'s awaitable
#: (or one around it); ``send(request, on_id=None)`` sends ``request`` (perhaps changed, of the
#: same type) and waits for its result, calling ``on_id`` with the id it goes under. For
#: tracing (:mod:`mcptrio.otel`).
SendHook = Callable[
    [Request[Any], Callable[..., Awaitable[Any]]],
    Awaitable[Any],
]


class SendSettings(Protocol):
    """What a client's user may change between calls (the :class:`~mcptrio.Client` has them),
    read by its sender at each call."""

    cache: ResultCache
    request_timeout: float | None
    send_hook: SendHook | None


class RequestSender:
    """Sends one client's requests (see the module docstring), with its current ``settings``."""

    __slots__ = ("call_keys", "handlers", "session", "settings")

    def __init__(
        self, session: Session, handlers: ServerRequestRouter, settings: SendSettings
    ) -> None:
        self.session = session
        #: What answers the server's requests, those of input-required results included.
        self.handlers = handlers
        self.settings = settings
        #: The keys that make every copy of a ``tools/call`` one call (:mod:`.call_keys`).
        self.call_keys = CallKeys()

    async def request(
        self, request: Request[ResultT], /, **options: Unpack[CallOptions]
    ) -> ResultT:
        """Send ``request``, or answer it from the cache (:meth:`fetch` with no ``learn``)."""
        return await self.fetch(request, options)

    async def fetch(
        self,
        request: Request[ResultT],
        options: CallOptions,
        learn: Callable[[ResultT], ResultT] | None = None,
    ) -> ResultT:
        """``request``'s result, from the cache when it may be; ``learn`` sees each answer from
        the server (not those from the cache, which it saw when they came) and returns what is
        stored and returned."""
        if options:
            check_options("A Client call", options, CallOptions)
        mode = cache_mode(options)
        key = cache_key(request)

        async def ask() -> ResultT:
            result = await self.send(request, options)
            return result if learn is None else learn(result)

        if key is None:
            return await ask()
        return await self.settings.cache.fetch(key, mode, ask)

    async def send(self, request: Request[ResultT], options: CallOptions) -> ResultT:
        """``request``'s result from the server, never from the cache (``options`` checked
        already), through the send hook when there is one. A ``tools/call`` gets its call
        key here, so that the hook, the input rounds and every copy the transport sends carry
        it."""
        if isinstance(request, CallToolRequest):
            request = cast("Request[ResultT]", self.call_keys.mark(request))
        hook = self.settings.send_hook
        if hook is None:
            return await self._exchange(request, options=options)
        result: ResultT = await hook(request, functools.partial(self._exchange, options=options))
        return result

    async def _exchange(
        self,
        request: Request[ResultT],
        on_id: Callable[[RequestId], object] | None = None,
        *,
        options: CallOptions,
    ) -> ResultT:
        """What a send hook wraps: the request and the input rounds it takes (stateless era),
        so that the hook sees one call, as in the handshake era, and every retry carries what
        the hook put in the request (its trace context)."""
        result = await self._through_session(request, options, on_id)
        if isinstance(result, InputRequiredResult):
            return await self._answer_inputs(request, result, options)
        return result

    async def _through_session(
        self,
        request: Request[ResultT],
        options: CallOptions,
        on_id: Callable[[RequestId], object] | None = None,
    ) -> ResultT:
        timeout = options.get("timeout")
        return await self.session.request(
            request,
            timeout=self.settings.request_timeout if timeout is None else timeout,
            max_total_timeout=options.get("max_total_timeout"),
            on_progress=options.get("on_progress"),
            on_id=on_id,
        )

    async def _answer_inputs(
        self, request: Request[ResultT], result: InputRequiredResult, options: CallOptions
    ) -> ResultT:
        """The stateless era asks the client for input in an answer, not in a request."""
        timeout = options.get("timeout")

        async def send(retry: Request[Any]) -> Result:
            return await self._through_session(retry, options)

        # The call's timeout bounds the whole exchange, the client's own handlers included (a
        # user who takes too long), as it does in the handshake era, where the server's request
        # to the client runs while the call waits.
        limits = [
            x
            for x in (
                self.settings.request_timeout if timeout is None else timeout,
                options.get("max_total_timeout"),
            )
            if x is not None
        ]
        if not limits:
            return await answer_input_required(self.session, request, result, send, self.handlers)
        with trio.move_on_after(min(limits)):
            return await answer_input_required(self.session, request, result, send, self.handlers)
        raise RequestTimeout(
            f"{request.METHOD} did not complete within {min(limits)} s"
            " (answering the server's requests for input included)"
        )
