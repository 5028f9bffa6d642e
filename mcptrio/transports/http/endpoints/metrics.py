"""The Prometheus metrics of one HTTP endpoint and its server: :class:`EndpointMetrics`.

Made by :class:`~.app.McpHttpApp` when it is given ``metrics=True``, and served at ``/metrics``
(:mod:`.operations`). prometheus-client (the ``metrics`` extra) is imported only then.

What is measured, and where:

- ``mcptrio_requests_total{method, outcome}`` and ``mcptrio_request_duration_seconds{method}``:
  every request the server answers, told by the server's dispatch (a
  :class:`~mcptrio.server.dispatch.RequestObserver`), which every request passes through
  whichever placement runs it. ``outcome`` is ``ok``, ``tool_error`` (a tool's error result),
  ``input_required`` (a stateless-era round that asks the client first: neither done nor
  failed), ``cancelled``, or the JSON-RPC error code of the answer (``-32602``...).
- ``mcptrio_requests_in_flight``: requests whose handler runs now (one waiting for a slot is not
  counted yet).
- ``mcptrio_sessions_open``, ``mcptrio_tasks_running``, ``mcptrio_forwarded_requests_total``
  (requests this worker forwarded to the worker owning their session) and
  ``mcptrio_relay_served_total`` (those it served for others), and ``mcptrio_redis_errors_total``:
  counts the endpoint, the task supervisor, the session relay and the Redis stores keep anyway.

Everything is kept as plain numbers and turned into Prometheus metric families when scraped
(a :class:`prometheus_client.registry.Collector`): a request costs a few additions and a
bisection, not the locks prometheus-client's own ``Counter`` and ``Histogram`` take on every
update. That is correct because every update and every scrape runs in the one Trio thread.

Each endpoint has a registry of its own (not prometheus-client's global one): two apps in one
process, or in one test run, never share or clash. Each worker of ``--workers`` reports its own
numbers (see ``docs/explanation/operations.md``).
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Iterable
from typing import Any, Final, Protocol

from ....protocol.base import Request, Result
from ....protocol.errors import INTERNAL_ERROR, LocalError, McpError
from ....protocol.types.input_required import InputRequiredResult
from ....stores.errors import backend_failures

try:
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
    from prometheus_client.core import (
        CounterMetricFamily,
        GaugeMetricFamily,
        HistogramMetricFamily,
        Metric,
    )
    from prometheus_client.registry import Collector
    from prometheus_client.utils import floatToGoString
except ImportError:  # pragma: no cover - depends on what is installed
    raise ImportError(
        "metrics need prometheus-client: pip install 'mcptrio[metrics]'",
        name="prometheus_client",
    ) from None

__all__ = ["CONTENT_TYPE", "LATENCY_BUCKETS", "EndpointMetrics", "RequestMetrics", "outcome_of"]

#: The content type of the metrics' text form.
CONTENT_TYPE: Final = CONTENT_TYPE_LATEST.encode("ascii")

#: The latency histogram's upper bounds, in seconds: MCP answers range from well under a
#: millisecond (a list) to minutes (a long tool).
LATENCY_BUCKETS: Final = (
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
_BUCKET_NAMES: Final = (*map(floatToGoString, LATENCY_BUCKETS), "+Inf")


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


class _Latency:
    """One method's latency histogram: a count per bucket (not cumulative), and the sum."""

    __slots__ = ("counts", "total")

    def __init__(self) -> None:
        self.counts = [0] * (len(LATENCY_BUCKETS) + 1)
        self.total = 0.0


class EndpointMetrics:
    """The metrics of one endpoint (see the module docstring).

    ``sessions`` counts the endpoint's open sessions; ``server`` is watched through its
    ``observe_requests`` and ``tasks.live_count`` when it has them; ``relay`` is the endpoint's
    session relay, if any.
    """

    def __init__(self, sessions: Callable[[], int], server: object, relay: _Relay | None) -> None:
        #: Where the metrics are kept: give it to your own exposition if you serve them elsewhere.
        self.registry = CollectorRegistry()
        #: The requests' counts (the server's observer).
        self.requests = RequestMetrics()
        self.registry.register(self.requests)
        self.registry.register(_KeptCounts(sessions, getattr(server, "tasks", None), relay))
        observe = getattr(server, "observe_requests", None)
        if observe is not None:
            observe(self.requests)

    def exposition(self) -> bytes:
        """The metrics in Prometheus's text form."""
        return generate_latest(self.registry)


class RequestMetrics(Collector):
    """Counts the requests a server answers (a
    :class:`~mcptrio.server.dispatch.RequestObserver`), and reports them when collected."""

    def __init__(self) -> None:
        self._in_flight = 0
        self._answers: dict[tuple[str, str], int] = {}
        self._latencies: dict[str, _Latency] = {}

    def started(self, request: Request[Any]) -> float:
        self._in_flight += 1
        return time.perf_counter()

    def answered(self, request: Request[Any], began: float, result: Result) -> None:
        self._ended(request.METHOD, began, _outcome(result))

    def failed(self, request: Request[Any], began: float, error: BaseException) -> None:
        self._ended(request.METHOD, began, outcome_of(error))

    def _ended(self, method: str, began: float, outcome: str) -> None:
        elapsed = time.perf_counter() - began
        self._in_flight -= 1
        answers = self._answers
        key = (method, outcome)
        answers[key] = answers.get(key, 0) + 1
        latency = self._latencies.get(method)
        if latency is None:
            latency = self._latencies[method] = _Latency()
        latency.counts[bisect.bisect_left(LATENCY_BUCKETS, elapsed)] += 1
        latency.total += elapsed

    def collect(self) -> Iterable[Metric]:
        answers = CounterMetricFamily(
            "mcptrio_requests",
            "MCP requests answered, by method and outcome (ok, tool_error, input_required,"
            " cancelled, or the JSON-RPC error code)",
            labels=("method", "outcome"),
        )
        for (method, outcome), count in sorted(self._answers.items()):
            answers.add_metric((method, outcome), count)
        yield answers
        latencies = HistogramMetricFamily(
            "mcptrio_request_duration_seconds",
            "Seconds from a request's start to its answer, by method",
            labels=("method",),
        )
        for method, latency in sorted(self._latencies.items()):
            cumulative = 0
            buckets = []
            for name, count in zip(_BUCKET_NAMES, latency.counts, strict=True):
                cumulative += count
                buckets.append((name, float(cumulative)))
            latencies.add_metric((method,), buckets, latency.total)
        yield latencies
        yield GaugeMetricFamily(
            "mcptrio_requests_in_flight",
            "MCP requests whose handler is running",
            value=self._in_flight,
        )


def _outcome(result: Result) -> str:
    if isinstance(result, InputRequiredResult):
        return "input_required"
    return "tool_error" if getattr(result, "is_error", None) is True else "ok"


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
