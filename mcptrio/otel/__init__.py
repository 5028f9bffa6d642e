"""OpenTelemetry for mcptrio servers and clients (the ``otel`` extra: ``opentelemetry-api``).

::

    import mcptrio.otel

    mcptrio.otel.instrument_server(server)           # a span per request received or sent
    async with mcptrio.open_client(target) as client:
        mcptrio.otel.instrument_client(client)       # a span per request sent or answered,
        ...                                          # trace context carried in params._meta

Spans, attributes and metrics follow OpenTelemetry's semantic conventions for MCP (see
:mod:`._conventions`); the providers are OpenTelemetry's global ones unless given. Nothing here
runs unless you instrument: a server or client that is not instrumented never imports
OpenTelemetry and pays nothing for it. See ``docs/how-to/trace-with-opentelemetry.md``.
"""

from __future__ import annotations

try:
    import opentelemetry.trace  # noqa: F401
except ImportError as exc:  # pragma: no cover - what a user without the extra sees
    raise ImportError(
        "mcptrio.otel needs OpenTelemetry's API: pip install 'mcptrio[otel]'"
    ) from exc

from opentelemetry import metrics, trace

from ..client import Client
from ..server import Server
from .client import ClientTelemetry
from .server import ServerTelemetry

__all__ = ["ClientTelemetry", "ServerTelemetry", "instrument_client", "instrument_server"]


def instrument_server(
    server: Server,
    *,
    tracer_provider: trace.TracerProvider | None = None,
    meter_provider: metrics.MeterProvider | None = None,
) -> ServerTelemetry:
    """Trace and measure every request and notification ``server`` receives, from now on: a
    :class:`ServerTelemetry` middleware, installed outermost (so it times the other middleware
    and sees their refusals), and every request its handlers send to the client (its
    ``requests`` hook, as ``server.request_hook``). Returns it (``server.remove_middleware``
    and ``server.request_hook = None`` take it off)."""
    telemetry = ServerTelemetry(tracer_provider=tracer_provider, meter_provider=meter_provider)
    server.add_middleware(telemetry, outermost=True)
    server.request_hook = telemetry.requests
    return telemetry


def instrument_client(
    client: Client,
    *,
    tracer_provider: trace.TracerProvider | None = None,
    meter_provider: metrics.MeterProvider | None = None,
) -> ClientTelemetry:
    """Trace and measure every request ``client`` sends from now on, and carry each span's
    trace context to the server in the request's ``_meta``; and every request from the server
    it answers (sampling, elicitation, roots), as the child of the server's span. Returns the
    hook (``client.send_hook = None`` and ``client.receive_hook = None`` take it off)."""
    telemetry = ClientTelemetry(
        client, tracer_provider=tracer_provider, meter_provider=meter_provider
    )
    client.send_hook = telemetry
    client.receive_hook = telemetry.answer
    return telemetry
