"""Server side: a middleware that puts every incoming request and notification in a span, and
a request hook that puts every request the handlers send to the client in one.

The incoming span (kind ``SERVER``) has the remote parent the request's ``_meta`` carries, when
it carries one, so a client's span and the server's join in one trace whatever the transport.
It ends when the handler's answer is ready: an error answer (an ``McpError``: a refusal, an
unknown tool...) sets ``error.type`` and ``rpc.response.status_code`` to its code, a tool's
error result ``error.type`` ``tool_error``, any other exception its class name (recorded on the
span); each of these sets the span's status to ``ERROR``. A cancelled request ends its span with
no error. ``mcp.server.operation.duration`` records each call's duration, and
``mcptrio.server.operation.active`` counts the requests in flight.

A request a handler sends to the client (sampling, elicitation, roots) gets a ``CLIENT`` span,
the child of the handler's span, with its trace context in the request's ``_meta``, recorded as
the conventions define the sender's side (``mcp.client.operation.duration``,
``mcptrio.client.operation.active``). In the stateless era the request goes out in an
input-required result and its answer comes with the client's retry, in the next round: its span
covers only the asking (it ends with the round, and no duration is recorded for it), and
carries ``mcptrio.input_request.key``.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from opentelemetry import metrics, trace
from opentelemetry.trace import SpanKind

from ..protocol.base import Request, Result
from ..server.handler_context import HandlerContext
from ..server.middleware import Call, CallNext
from . import _conventions as conv
from ._spans import answer_in_span, send_in_span

__all__ = ["ServerTelemetry"]


class ServerTelemetry:
    """The tracing and metrics middleware (see the module docstring); install it with
    :func:`mcptrio.otel.instrument_server`, which puts it outermost and makes
    :attr:`requests` the server's ``request_hook``."""

    def __init__(
        self,
        *,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
    ) -> None:
        self._instruments = conv.Instruments("server", tracer_provider, meter_provider)
        #: The request hook: traces the requests the handlers send to the client.
        self.requests = _ClientRequests(conv.Instruments("client", tracer_provider, meter_provider))

    async def __call__(self, call: Call, call_next: CallNext) -> Result | None:
        params = call.params
        target = conv.target_of(params)
        attributes = conv.attributes_of(params, target)
        context = call.context
        revision = context.revision if context is not None else call.session.connection.revision
        if revision:
            attributes[conv.PROTOCOL_VERSION] = revision
        if call.request_id is not None:
            attributes[conv.REQUEST_ID] = str(call.request_id)
        session_id = conv.session_id_of(call.session.transport)
        if session_id is not None:
            attributes[conv.SESSION_ID] = session_id
        parent = conv.context_from_meta(getattr(params, "meta", None))
        return await answer_in_span(  # type: ignore[no-any-return]
            self._instruments,
            conv.span_name(call.method, target),
            attributes,
            parent,
            functools.partial(call_next, call),
            is_request=call.is_request,
        )


class _ClientRequests:
    """The server's :class:`~mcptrio.server.context.RequestHook` (see the module docstring)."""

    def __init__(self, instruments: conv.Instruments) -> None:
        self._instruments = instruments

    async def __call__(
        self, ctx: HandlerContext, request: Request[Any], send: Callable[..., Awaitable[Any]]
    ) -> Any:
        attributes = _attributes(ctx, request)
        return await send_in_span(self._instruments, request, attributes, send)

    def asking(
        self, ctx: HandlerContext, requests: dict[str, Request[Any]]
    ) -> dict[str, Request[Any]]:
        carried: dict[str, Request[Any]] = {}
        for key, request in requests.items():
            attributes = _attributes(ctx, request)
            attributes[conv.INPUT_KEY] = key
            with self._instruments.tracer.start_as_current_span(
                conv.span_name(request.METHOD, None), kind=SpanKind.CLIENT, attributes=attributes
            ):
                meta = conv.meta_with_context(request.meta)
            carried[key] = msgspec.structs.replace(request, meta=meta)
        return carried


def _attributes(ctx: HandlerContext, request: Request[Any]) -> dict[str, Any]:
    attributes = conv.attributes_of(request, None)
    attributes[conv.PROTOCOL_VERSION] = ctx.revision
    session_id = conv.session_id_of(ctx.session.transport)
    if session_id is not None:
        attributes[conv.SESSION_ID] = session_id
    return attributes
