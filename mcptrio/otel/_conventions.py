"""What the MCP semantic conventions of OpenTelemetry name, and what both sides share.

The conventions (OpenTelemetry's GenAI semantic conventions, "Model Context Protocol", status
Development) are followed as the official Python SDK follows them: a span named
``{mcp.method.name} {target}`` (the tool or prompt name, when there is one), the attributes
below, the W3C trace context in the request's ``params._meta`` (``traceparent``,
``tracestate``, ``baggage``), and duration histograms per side.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.context import Context
from opentelemetry.propagate import extract, inject

from .. import __version__
from ..protocol.base import Notification, Request
from ..protocol.types import CallToolRequest, CallToolResult, GetPromptRequest

__all__ = [
    "DURATION_BUCKETS",
    "Instruments",
    "attributes_of",
    "context_from_meta",
    "meta_with_context",
    "span_name",
    "tool_failed",
]

METHOD = "mcp.method.name"
PROTOCOL_VERSION = "mcp.protocol.version"
SESSION_ID = "mcp.session.id"
RESOURCE_URI = "mcp.resource.uri"
REQUEST_ID = "jsonrpc.request.id"
OPERATION = "gen_ai.operation.name"
TOOL_NAME = "gen_ai.tool.name"
PROMPT_NAME = "gen_ai.prompt.name"
ERROR_TYPE = "error.type"
STATUS_CODE = "rpc.response.status_code"
#: The key an input-required result asks under (stateless era; mcptrio's own attribute).
INPUT_KEY = "mcptrio.input_request.key"

#: The bucket boundaries (seconds) the conventions advise for the operation durations.
DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
#: The attributes the metrics keep (the spans have them all): low cardinality only.
METRIC_ATTRIBUTES = (METHOD, PROTOCOL_VERSION, TOOL_NAME, PROMPT_NAME, ERROR_TYPE)


class Instruments:
    """The tracer and the metric instruments of one side (``"server"`` or ``"client"``)."""

    def __init__(
        self,
        side: str,
        tracer_provider: trace.TracerProvider | None,
        meter_provider: metrics.MeterProvider | None,
    ) -> None:
        self.tracer = trace.get_tracer("mcptrio", __version__, tracer_provider=tracer_provider)
        meter = metrics.get_meter("mcptrio", __version__, meter_provider=meter_provider)
        peer = "receiver" if side == "server" else "sender"
        #: Calls and their durations (a call is one record: the histogram's count).
        self.duration = meter.create_histogram(
            f"mcp.{side}.operation.duration",
            unit="s",
            description=f"MCP request or notification duration, as observed on the {peer}",
            explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
        )
        #: Requests in flight (started, not answered yet).
        self.active = meter.create_up_down_counter(
            f"mcptrio.{side}.operation.active",
            unit="{request}",
            description=f"MCP requests in flight on the {side}",
        )


def target_of(params: Request[Any] | Notification) -> str | None:
    """The low-cardinality target of a span's name: the tool or prompt name."""
    if isinstance(params, CallToolRequest | GetPromptRequest):
        return params.name
    return None


def span_name(method: str, target: str | None) -> str:
    return method if target is None else f"{method} {target}"


def attributes_of(params: Request[Any] | Notification, target: str | None) -> dict[str, Any]:
    """The attributes a request's params give its span (both sides)."""
    attributes: dict[str, Any] = {METHOD: params.METHOD}
    if isinstance(params, CallToolRequest):
        attributes[OPERATION] = "execute_tool"
        attributes[TOOL_NAME] = target
    elif isinstance(params, GetPromptRequest):
        attributes[PROMPT_NAME] = target
    uri = getattr(params, "uri", None)
    if isinstance(uri, str):
        attributes[RESOURCE_URI] = uri
    return attributes


def metric_attributes(attributes: Mapping[str, Any]) -> dict[str, Any]:
    return {key: attributes[key] for key in METRIC_ATTRIBUTES if key in attributes}


def context_from_meta(meta: Any) -> Context | None:
    """The remote parent a request's ``_meta`` carries; ``None`` when it carries none (the span
    then nests under whatever is current)."""
    if not isinstance(meta, dict) or "traceparent" not in meta:
        return None
    try:
        context = extract(meta)
    except (TypeError, ValueError):
        return None
    if not trace.get_current_span(context).get_span_context().is_valid:
        return None
    return context


def meta_with_context(meta: Any) -> dict[str, Any]:
    """``meta`` (a request's ``_meta``, or absent) with the current trace context added."""
    carrier: dict[str, Any] = dict(meta) if isinstance(meta, dict) else {}
    inject(carrier)
    return carrier


def tool_failed(result: Any) -> bool:
    """Whether ``result`` is a tool's error (``isError: true``), an error for the span too."""
    return isinstance(result, CallToolResult) and result.is_error is True


def session_id_of(transport: Any) -> str | None:
    """The transport's MCP session id (Streamable HTTP), if it has one; a client's HTTP
    transport holds it in the transport it settled on (``inner``)."""
    session_id = getattr(transport, "session_id", None)
    if session_id is None and hasattr(transport, "inner"):
        session_id = getattr(transport.inner, "session_id", None)
    return session_id if isinstance(session_id, str) and session_id else None
