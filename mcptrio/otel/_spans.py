"""The two spans of a request, shared by both sides: sending it (``CLIENT``: the client's
requests, and the server's requests to the client) and answering it (``SERVER``)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, StatusCode

from ..protocol.base import Request, RequestId
from ..protocol.errors import LocalError, McpError
from . import _conventions as conv

__all__ = ["answer_in_span", "send_in_span"]


async def send_in_span(
    instruments: conv.Instruments,
    request: Request[Any],
    attributes: dict[str, Any],
    send: Callable[..., Awaitable[Any]],
) -> Any:
    """``send(request)`` in a ``CLIENT`` span whose trace context goes in ``request``'s
    ``_meta`` (what either side does with the requests it sends)."""
    target = conv.target_of(request)
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

            carried = msgspec.structs.replace(request, meta=conv.meta_with_context(request.meta))
            try:
                result = await send(carried, on_id=named)
            except LocalError as exc:
                error_type = type(exc).__qualname__
                span.set_attribute(conv.ERROR_TYPE, error_type)
                span.set_status(StatusCode.ERROR, exc.message)
                raise
            except McpError as exc:
                error_type = _error_answer(span, exc)
                raise
            error_type = _tool_error(span, result)
            return result
    finally:
        instruments.active.add(-1, in_flight)
        _record_duration(instruments, attributes, started, error_type)


async def answer_in_span(
    instruments: conv.Instruments,
    name: str,
    attributes: dict[str, Any],
    parent: Context | None,
    answer: Callable[[], Awaitable[Any]],
    *,
    is_request: bool = True,
) -> Any:
    """``answer()`` in a ``SERVER`` span, the child of ``parent`` (the sender's span, from the
    request's ``_meta``) when there is one."""
    in_flight = {conv.METHOD: attributes[conv.METHOD]}
    if is_request:
        instruments.active.add(1, in_flight)
    started = time.perf_counter()
    error_type: str | None = None
    try:
        with instruments.tracer.start_as_current_span(
            name,
            kind=SpanKind.SERVER,
            context=parent,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                result = await answer()
            except McpError as exc:
                error_type = _error_answer(span, exc)
                raise
            except Exception as exc:
                error_type = type(exc).__qualname__
                span.set_attribute(conv.ERROR_TYPE, error_type)
                span.record_exception(exc)
                span.set_status(StatusCode.ERROR, str(exc))
                raise
            error_type = _tool_error(span, result)
            return result
    finally:
        if is_request:
            instruments.active.add(-1, in_flight)
        _record_duration(instruments, attributes, started, error_type)


def _error_answer(span: Span, exc: McpError) -> str:
    """Mark ``span`` failed by the error response ``exc``; its ``error.type`` (the code)."""
    error_type = str(exc.code)
    span.set_attributes({conv.ERROR_TYPE: error_type, conv.STATUS_CODE: error_type})
    span.set_status(StatusCode.ERROR, exc.message)
    return error_type


def _tool_error(span: Span, result: Any) -> str | None:
    """Mark ``span`` failed when ``result`` is a tool's error result; its ``error.type``."""
    if not conv.tool_failed(result):
        return None
    span.set_attribute(conv.ERROR_TYPE, "tool_error")
    span.set_status(StatusCode.ERROR)
    return "tool_error"


def _record_duration(
    instruments: conv.Instruments,
    attributes: dict[str, Any],
    started: float,
    error_type: str | None,
) -> None:
    recorded: dict[str, Any] = conv.metric_attributes(attributes)
    if error_type is not None:
        recorded[conv.ERROR_TYPE] = error_type
    instruments.duration.record(time.perf_counter() - started, recorded)
