"""What operators ask an HTTP endpoint, beside MCP: :class:`OperationsEndpoints`.

- ``GET /healthz``: 200 ``ok`` as long as the process serves HTTP (a liveness probe).
- ``GET /readyz``: 200 ``ready`` when the endpoint can serve MCP: its ``run`` has started (the
  sessions have somewhere to live) and, when its server keeps its state in Redis, Redis answered
  a ``PING`` within ``ready_timeout`` seconds; otherwise 503 and a one-line reason (a readiness
  probe: a load balancer sends no new clients to a worker that cannot serve them). The reason
  names no address; Redis's own error is logged.
- ``GET /metrics`` (only with ``metrics=True``): the Prometheus metrics (:mod:`.metrics`), to
  clients whose address is in ``metrics_allow`` (addresses or networks; loopback by default);
  403 for any other. A request a proxy forwarded (``X-Forwarded-For``, ``Forwarded``) is judged
  by the client a trusted proxy names, and refused from a proxy that is not trusted.

These answer before the MCP checks (Host, Origin, credentials, session limits): a probe comes
with whatever ``Host`` the orchestrator uses, and none of them tells anything about the MCP
server's contents. Nothing is logged per request but a failed readiness check. The MCP path is
matched first, so these cost the MCP requests nothing.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Awaitable, Callable, Collection
from typing import TYPE_CHECKING, Final

from ....stores.errors import StoreUnavailable
from ..engine.exchange import HttpRequest, HttpResponder
from .address_networks import AddressNetworks
from .forwarded import is_forwarded

if TYPE_CHECKING:
    from .app import McpHttpApp

__all__ = [
    "METRICS_ALLOW",
    "READY_TIMEOUT",
    "OperationsEndpoints",
    "parse_networks",
    "require_metrics",
]

log = logging.getLogger("mcptrio.http")

#: Who may read ``/metrics`` unless told otherwise: this machine only.
METRICS_ALLOW: Final = ("127.0.0.1", "::1")
#: Seconds Redis has to answer the readiness check's ``PING``.
READY_TIMEOUT: Final = 0.5

_TEXT: Final = ((b"content-type", b"text/plain; charset=utf-8"), (b"cache-control", b"no-store"))

Operation = Callable[[HttpRequest, HttpResponder], Awaitable[None]]


def parse_networks(allow: Collection[str]) -> AddressNetworks:
    """``allow``'s addresses and networks (``10.0.0.0/8``, ``::1``); a ``ValueError`` naming the
    first that is neither."""
    return AddressNetworks(allow, "metrics_allow")


def require_metrics() -> None:
    """Load what ``metrics=True`` needs now: ``ImportError`` naming the ``metrics`` extra when
    prometheus-client is missing (checked once, before workers start, rather than in each)."""
    importlib.import_module(f"{__package__}.metrics")


class OperationsEndpoints:
    """``/healthz``, ``/readyz`` and ``/metrics`` of ``app`` (see the module docstring)."""

    def __init__(
        self,
        app: McpHttpApp,
        *,
        metrics: bool = False,
        metrics_allow: Collection[str] = METRICS_ALLOW,
        ready_timeout: float = READY_TIMEOUT,
    ) -> None:
        self._app = app
        self._ready_timeout = ready_timeout
        self._allowed = parse_networks(metrics_allow)
        self.routes: dict[str, Operation] = {"/healthz": self._health, "/readyz": self._readiness}
        if metrics:
            # Imported here: prometheus-client is the optional ``metrics`` extra.
            from .metrics import EndpointMetrics

            #: The endpoint's metrics (``None`` unless asked for).
            self.metrics: EndpointMetrics | None = EndpointMetrics(
                lambda: app.session_count, app.server, app.relay
            )
            self.routes["/metrics"] = self._metrics
        else:
            self.metrics = None

    async def _health(self, request: HttpRequest, responder: HttpResponder) -> None:
        await _answer(request, responder, 200, b"ok\n")

    async def _readiness(self, request: HttpRequest, responder: HttpResponder) -> None:
        reason = await self.unready_reason()
        if reason is None:
            await _answer(request, responder, 200, b"ready\n")
        else:
            await _answer(request, responder, 503, f"not ready: {reason}\n".encode())

    async def unready_reason(self) -> str | None:
        """Why the endpoint cannot serve MCP now, in one line; ``None`` when it can."""
        if not self._app.registry.running:
            return "the endpoint's sessions are not hosted (its run() has not started)"
        stores = getattr(self._app.server, "stores", None)
        redis = getattr(stores, "redis", None)
        if redis is None:
            return None
        from ....stores.redis_calls import redis_call

        try:
            with redis_call("readiness check", self._ready_timeout):
                await redis.ping()
        except StoreUnavailable as exc:
            # The details (Redis's address, its error) are for the operator's log, not for
            # whoever asks: the probe is answered before any check of the caller.
            log.warning("not ready: %s", exc)
            return "Redis does not answer"
        return None

    async def _metrics(self, request: HttpRequest, responder: HttpResponder) -> None:
        if not self._allowed_client(request):
            log.debug("metrics refused to %s: not in metrics_allow", request.client)
            await _answer(request, responder, 403, b"metrics are not served to this address\n")
            return
        from .metrics import CONTENT_TYPE

        assert self.metrics is not None
        body = self.metrics.exposition() if request.method == "GET" else b""
        await _answer(request, responder, 200, body, content_type=CONTENT_TYPE)

    def _allowed_client(self, request: HttpRequest) -> bool:
        client = request.client
        if client is None:
            return False
        peer = client[0]
        if not is_forwarded(request.headers):
            return self._allowed.holds(peer)
        # A forwarded request is its client's, not the proxy's: a proxy on an allowed address
        # (an Ingress controller in the cluster's network) would otherwise pass the metrics
        # on to whoever it serves. Only a trusted proxy is believed about who that is.
        proxies = self._app.security.trusted_proxies
        if not proxies.trusts(peer):
            return False
        named = proxies.client_of(peer, request.headers)
        return named is not None and self._allowed.holds(named)


async def _answer(
    request: HttpRequest,
    responder: HttpResponder,
    status: int,
    body: bytes,
    *,
    content_type: bytes = b"text/plain; charset=utf-8",
) -> None:
    """``body`` with ``status`` to a GET (no body to a HEAD); 405 to any other method."""
    if request.method not in ("GET", "HEAD"):
        headers = [*_TEXT, (b"allow", b"GET, HEAD")]
        await responder.send_response(405, headers, b"use GET or HEAD\n")
        return
    headers = [(b"content-type", content_type), (b"cache-control", b"no-store")]
    await responder.send_response(status, headers, b"" if request.method == "HEAD" else body)
