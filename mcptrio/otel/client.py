"""Client side: a send hook that puts every request a client sends in a span, and carries the
span's trace context to the server in the request's ``_meta``.

The span (kind ``CLIENT``) is current while the request is sent, so the W3C trace context
injected into ``params._meta`` (``traceparent``, ``tracestate``, and ``baggage`` when there is
some) names it as the server span's parent. It ends when the answer arrives: an error answer
sets ``error.type`` and ``rpc.response.status_code`` to its code, a tool's error result
``error.type`` ``tool_error``, a local failure (a timeout, a closed connection) its class name.
``mcp.client.operation.duration`` records each call's duration, and
``mcptrio.client.operation.active`` counts the requests waiting for their answer.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from opentelemetry import metrics, trace
from opentelemetry.trace import SpanKind, StatusCode

from ..client import Client
from ..protocol.base import Request, RequestId
from ..protocol.errors import LocalError, McpError
from . import _conventions as conv

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

    async def __call__(self, request: Request[Any], send: Callable[..., Awaitable[Any]]) -> Any:
        instruments = self._instruments
        target = conv.target_of(request)
        attributes = conv.attributes_of(request, target)
        attributes[conv.PROTOCOL_VERSION] = self._client.protocol_version
        session_id = conv.session_id_of(self._client.session.transport)
        if session_id is not None:
            attributes[conv.SESSION_ID] = session_id
        in_flight = {conv.METHOD: attributes[conv.METHOD]}
        instruments.active.add(1, in_flight)
        started = time.perf_counter()
        error_type: str | None = None
        try:
            with instruments.tracer.start_as_current_span(
                conv.span_name(request.METHOD, target),
                kind=SpanKind.CLIENT,
                attributes=attributes,
                record_exception=False,
                set_status_on_exception=False,
            ) as span:

                def named(rid: RequestId) -> None:
                    span.set_attribute(conv.REQUEST_ID, str(rid))

                carried = msgspec.structs.replace(
                    request, meta=conv.meta_with_context(request.meta)
                )
                try:
                    result = await send(carried, on_id=named)
                except LocalError as exc:
                    error_type = type(exc).__qualname__
                    span.set_attribute(conv.ERROR_TYPE, error_type)
                    span.set_status(StatusCode.ERROR, exc.message)
                    raise
                except McpError as exc:
                    error_type = str(exc.code)
                    span.set_attributes({conv.ERROR_TYPE: error_type, conv.STATUS_CODE: error_type})
                    span.set_status(StatusCode.ERROR, exc.message)
                    raise
                if conv.tool_failed(result):
                    error_type = "tool_error"
                    span.set_attribute(conv.ERROR_TYPE, error_type)
                    span.set_status(StatusCode.ERROR)
                return result
        finally:
            instruments.active.add(-1, in_flight)
            recorded: dict[str, Any] = conv.metric_attributes(attributes)
            if error_type is not None:
                recorded[conv.ERROR_TYPE] = error_type
            instruments.duration.record(time.perf_counter() - started, recorded)
