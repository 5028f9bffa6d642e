"""The Prometheus metrics of one HTTP endpoint and its server: :class:`EndpointMetrics`.

Made by :class:`~.app.McpHttpApp` when it is given ``metrics=True``, and served at ``/metrics``
(:mod:`.operations`). prometheus-client (the ``metrics`` extra) is imported only then.

What is measured, and where:

- ``mcptrio_requests_total{method, outcome}`` and ``mcptrio_request_duration_seconds{method}``:
  every request the server answers, told by the server's dispatch (a
  :class:`~mcptrio.server.dispatch.RequestObserver`), which every request passes through
  whichever placement runs it. ``outcome`` is ``ok``, ``tool_error`` (a tool's error result),
  ``cancelled``, or the JSON-RPC error code of the answer (``-32602``...).
- ``mcptrio_requests_in_flight``: requests whose handler runs now (one waiting for a slot is not
  counted yet).
- ``mcptrio_sessions_open``, ``mcptrio_tasks_running``, ``mcptrio_forwarded_requests_total``
  (requests this worker forwarded to the worker owning their session) and
  ``mcptrio_relay_served_total`` (those it served for others), and ``mcptrio_redis_errors_total``:
  counts the endpoint, the task supervisor, the session relay and the Redis stores keep anyway,
  read when the metrics are scraped, so they cost nothing between scrapes.

Each endpoint has a registry of its own (not prometheus-client's global one): two apps in one
process, or in one test run, never share or clash. Each worker of ``--workers`` reports its own
numbers (see ``docs/explanation/operations.md``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any, Final, Protocol

from ....protocol.base import Request, Result
from ....protocol.errors import INTERNAL_ERROR, LocalError, McpError
from ....stores.errors import backend_failures

try:
    from prometheus_client import (
        CONTENT_TYPE_LATEST,
        CollectorRegistry,
        Counter,
        Gauge,
        Histogram,
        generate_latest,
    )
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
    from prometheus_client.registry import Collector
except ImportError:  # pragma: no cover - depends on what is installed
    raise ImportError(
        "metrics need prometheus-client: pip install 'mcptrio[metrics]'",
        name="prometheus_client",
    ) from None

__all__ = ["CONTENT_TYPE", "EndpointMetrics", "outcome_of"]

#: The content type of the metrics' text form.
CONTENT_TYPE: Final = CONTENT_TYPE_LATEST.encode("ascii")

# Seconds: MCP answers range from well under a millisecond (a list) to minutes (a long tool).
_LATENCY_BUCKETS: Final = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
)


class _Relay(Protocol):
    forwarded: int
    served: int


def outcome_of(error: BaseException) -> str:
    """The ``outcome`` label of a request whose handler raised ``error``: the code of the error
    answer it gets (see :mod:`mcptrio.runtime.lifecycle`), or ``cancelled``."""
    if isinstance(error, LocalError):
        return str(error.error_answer().code)
    if isinstance(error, McpError):
        return str(error.code)
    if isinstance(error, Exception):
        return str(INTERNAL_ERROR)
    return "cancelled"


class EndpointMetrics:
    """The metrics of one endpoint (see the module docstring).

    ``sessions`` counts the endpoint's open sessions; ``server`` is watched through its
    ``observe_requests`` and ``tasks.live_count`` when it has them; ``relay`` is the endpoint's
    session relay, if any.
    """

    def __init__(self, sessions: Callable[[], int], server: object, relay: _Relay | None) -> None:
        #: Where the metrics are kept: give it to your own exposition if you serve them elsewhere.
        self.registry = CollectorRegistry()
        self._requests = Counter(
            "mcptrio_requests",
            "MCP requests answered, by method and outcome (ok, tool_error, cancelled, or the"
            " JSON-RPC error code)",
            ("method", "outcome"),
            registry=self.registry,
        )
        self._latency = Histogram(
            "mcptrio_request_duration_seconds",
            "Seconds from a request's start to its answer, by method",
            ("method",),
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self._in_flight = Gauge(
            "mcptrio_requests_in_flight",
            "MCP requests whose handler is running",
            registry=self.registry,
        )
        # Each label set's child, found once: labels() takes a lock and checks its arguments.
        self._counted: dict[tuple[str, str], Any] = {}
        self._timed: dict[str, Any] = {}
        tasks = getattr(server, "tasks", None)
        self.registry.register(_KeptCounts(sessions, tasks, relay))
        observe = getattr(server, "observe_requests", None)
        if observe is not None:
            observe(self)

    def exposition(self) -> bytes:
        """The metrics in Prometheus's text form."""
        return generate_latest(self.registry)

    # ------------------------------------------------------------ RequestObserver

    def started(self, request: Request[Any]) -> float:
        self._in_flight.inc()
        return time.perf_counter()

    def answered(self, request: Request[Any], began: float, result: Result) -> None:
        self._ended(request.METHOD, began, "tool_error" if _is_error(result) else "ok")

    def failed(self, request: Request[Any], began: float, error: BaseException) -> None:
        self._ended(request.METHOD, began, outcome_of(error))

    def _ended(self, method: str, began: float, outcome: str) -> None:
        self._in_flight.dec()
        counted = self._counted.get((method, outcome))
        if counted is None:
            counted = self._counted[method, outcome] = self._requests.labels(method, outcome)
        counted.inc()
        timed = self._timed.get(method)
        if timed is None:
            timed = self._timed[method] = self._latency.labels(method)
        timed.observe(time.perf_counter() - began)


def _is_error(result: Result) -> bool:
    return getattr(result, "is_error", None) is True


class _KeptCounts(Collector):
    """What others count anyway, read at each scrape."""

    def __init__(self, sessions: Callable[[], int], tasks: object, relay: _Relay | None) -> None:
        self._sessions = sessions
        self._tasks = tasks
        self._relay = relay

    def collect(self) -> Iterable[Metric]:
        yield GaugeMetricFamily(
            "mcptrio_sessions_open", "Open MCP sessions of this endpoint", value=self._sessions()
        )
        running = getattr(self._tasks, "live_count", None)
        if isinstance(running, int):
            yield GaugeMetricFamily(
                "mcptrio_tasks_running", "Tasks running in this process", value=running
            )
        relay = self._relay
        yield CounterMetricFamily(
            "mcptrio_forwarded_requests",
            "Requests this worker forwarded to the worker owning their session",
            value=0 if relay is None else relay.forwarded,
        )
        yield CounterMetricFamily(
            "mcptrio_relay_served",
            "Requests this worker served for another worker that forwarded them",
            value=0 if relay is None else relay.served,
        )
        yield CounterMetricFamily(
            "mcptrio_redis_errors",
            "Calls to Redis that failed in this process (any store, and lost subscriptions)",
            value=backend_failures.value,
        )
