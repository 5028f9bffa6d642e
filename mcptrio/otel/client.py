"""Client side: a send hook that puts every request a client sends in a span, and carries the
span's trace context to the server in the request's ``_meta``.

The span (kind ``CLIENT``) is current while the request is sent, so the W3C trace context
injected into ``params._meta`` (``traceparent``, ``tracestate``, and ``baggage`` when there is
some) names it as the server span's parent. It ends when the answer arrives: an error answer
sets ``error.type`` and ``rpc.response.status_code`` to its code, a tool's error result
``error.type`` ``tool_error``, a local failure (a timeout, a closed connection) its class name.
``mcp.client.operation.duration`` records each call's duration, and
``mcptrio.client.operation.active`` counts the requests waiting for their answer. In the
stateless era the span covers the input rounds the request takes too (its retries carry the same
trace context), so a tool call that elicits is one span here, as in the handshake era.

Its :meth:`~ClientTelemetry.answer`, the client's receive hook, puts the answering of each
request from the server (sampling, elicitation, roots) in a ``SERVER`` span, the child of the
server's span for it, recorded as the receiving side (``mcp.server.operation.duration``,
``mcptrio.server.operation.active``).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

from opentelemetry import metrics, trace

from ..client import Client
from ..protocol.base import Request, Result
from ..runtime.context import RequestContext
from . import _conventions as conv
from ._spans import answer_in_span, send_in_span

__all__ = ["ClientTelemetry"]


class ClientTelemetry:
    """The tracing and metrics send hook of one client (see the module docstring); install it
    with :func:`mcptrio.otel.instrument_client`."""

    def __init__(
        self,
        client: Client,
        *,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
    ) -> None:
        self._client = client
        self._instruments = conv.Instruments("client", tracer_provider, meter_provider)
        # Answering the server's requests is the receiving side's work: its instruments.
        self._received = conv.Instruments("server", tracer_provider, meter_provider)

    async def __call__(self, request: Request[Any], send: Callable[..., Awaitable[Any]]) -> Any:
        attributes = conv.attributes_of(request, conv.target_of(request))
        attributes[conv.PROTOCOL_VERSION] = self._client.protocol_version
        session_id = conv.session_id_of(self._client.session.transport)
        if session_id is not None:
            attributes[conv.SESSION_ID] = session_id
        return await send_in_span(self._instruments, request, attributes, send)

    async def answer(
        self,
        ctx: RequestContext,
        request: Request[Any],
        answer: Callable[[RequestContext, Request[Any]], Awaitable[Result]],
    ) -> Result:
        """The receive hook: a ``SERVER`` span around answering a request from the server,
        the child of the server's span for it (its ``_meta``). In the stateless era the request
        came in an input-required result, under a key: the key is no JSON-RPC id, so
        ``jsonrpc.request.id`` is left out and ``mcptrio.input_request.key`` names it."""
        attributes = conv.attributes_of(request, conv.target_of(request))
        attributes[conv.PROTOCOL_VERSION] = self._client.protocol_version
        session_id = conv.session_id_of(self._client.session.transport)
        if session_id is not None:
            attributes[conv.SESSION_ID] = session_id
        if ctx.session.connection.request_meta is None:
            attributes[conv.REQUEST_ID] = str(ctx.request_id)
        else:
            attributes[conv.INPUT_KEY] = str(ctx.request_id)
        parent = conv.context_from_meta(request.meta)
        return await answer_in_span(  # type: ignore[no-any-return]
            self._received,
            conv.span_name(request.METHOD, None),
            attributes,
            parent,
            functools.partial(answer, ctx, request),
        )
