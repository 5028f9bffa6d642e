"""Server side: a middleware that puts every incoming request and notification in a span.

The span (kind ``SERVER``) has the remote parent the request's ``_meta`` carries, when it carries
one, so a client's span and the server's join in one trace whatever the transport. It ends when
the handler's answer is ready: an error answer (an ``McpError``: a refusal, an unknown tool...)
sets ``error.type`` and ``rpc.response.status_code`` to its code, a tool's error result
``error.type`` ``tool_error``, any other exception its class name (recorded on the span); each
of these sets the span's status to ``ERROR``. A cancelled request ends its span with no error.
``mcp.server.operation.duration`` records each call's duration, and
``mcptrio.server.operation.active`` counts the requests in flight.
"""

from __future__ import annotations

import time
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.trace import SpanKind, StatusCode

from ..protocol.base import Result
from ..protocol.errors import McpError
from ..server.middleware import Call, CallNext
from . import _conventions as conv

__all__ = ["ServerTelemetry"]


class ServerTelemetry:
    """The tracing and metrics middleware (see the module docstring); install it with
    :func:`mcptrio.otel.instrument_server`, which puts it outermost."""

    def __init__(
        self,
        *,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
    ) -> None:
        self._instruments = conv.Instruments("server", tracer_provider, meter_provider)

    async def __call__(self, call: Call, call_next: CallNext) -> Result | None:
        instruments = self._instruments
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
        in_flight = {conv.METHOD: attributes[conv.METHOD]}
        if call.is_request:
            instruments.active.add(1, in_flight)
        started = time.perf_counter()
        error_type: str | None = None
        try:
            with instruments.tracer.start_as_current_span(
                conv.span_name(call.method, target),
                kind=SpanKind.SERVER,
                context=parent,
                attributes=attributes,
                record_exception=False,
                set_status_on_exception=False,
            ) as span:
                try:
                    result = await call_next(call)
                except McpError as exc:
                    error_type = str(exc.code)
                    span.set_attributes({conv.ERROR_TYPE: error_type, conv.STATUS_CODE: error_type})
                    span.set_status(StatusCode.ERROR, exc.message)
                    raise
                except Exception as exc:
                    error_type = type(exc).__qualname__
                    span.set_attribute(conv.ERROR_TYPE, error_type)
                    span.record_exception(exc)
                    span.set_status(StatusCode.ERROR, str(exc))
                    raise
                if conv.tool_failed(result):
                    error_type = "tool_error"
                    span.set_attribute(conv.ERROR_TYPE, error_type)
                    span.set_status(StatusCode.ERROR)
                return result
        finally:
            if call.is_request:
                instruments.active.add(-1, in_flight)
            recorded: dict[str, Any] = conv.metric_attributes(attributes)
            if error_type is not None:
                recorded[conv.ERROR_TYPE] = error_type
            instruments.duration.record(time.perf_counter() - started, recorded)
