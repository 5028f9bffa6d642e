"""The issue's targets, checked against a run's figures (reported, never asserted)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from benchmarks.report import formatting
from benchmarks.report.document import Results, cells_by_key, speedup


@dataclass(frozen=True)
class Target:
    """One goal: ``measure`` returns the figure (None if the run lacks it); met if at least /
    at most ``threshold``."""

    description: str
    threshold: float
    at_most: bool
    measure: Callable[[Results], float | None]
    show: Callable[[float | None], str]


@dataclass(frozen=True)
class TargetResult:
    target: Target
    measured: float | None

    @property
    def status(self) -> str:
        if self.measured is None:
            return "not measured"
        if self.target.at_most:
            met = self.measured <= self.target.threshold
        else:
            met = self.measured >= self.target.threshold
        return "met" if met else "not met"


def _speedup_over(lib: str, transport: str, load: str) -> Callable[[Results], float | None]:
    def measure(results: Results) -> float | None:
        cells = cells_by_key(results)
        mine = cells.get(("mcptrio", transport, "call", load))
        return speedup(cells.get((lib, transport, "call", load)), mine)

    return measure


def _capacity(field: str) -> Callable[[Results], float | None]:
    def measure(results: Results) -> float | None:
        for record in results.get("capacity", []):
            value = record.get(field)
            if record.get("lib") == "mcptrio" and isinstance(value, int | float):
                return float(value)
        return None

    return measure


#: The memory targets (KiB per session), also drawn on the memory chart.
IDLE_TARGET_KIB = 4.0
GET_STREAM_TARGET_KIB = 12.0

TARGETS: tuple[Target, ...] = (
    Target(
        "in-memory, `call` x100: ≥ 10x the official SDK",
        10,
        False,
        _speedup_over("sdk", "in-memory", "x100"),
        formatting.ratio,
    ),
    Target(
        "in-memory, `call` x100: ≥ 20x FastMCP",
        20,
        False,
        _speedup_over("fastmcp", "in-memory", "x100"),
        formatting.ratio,
    ),
    Target(
        "stdio, `call` x32: ≥ 10x the official SDK",
        10,
        False,
        _speedup_over("sdk", "stdio", "x32"),
        formatting.ratio,
    ),
    Target(
        "Streamable HTTP (JSON), `call`, 16 connections: ≥ 5x the official SDK",
        5,
        False,
        _speedup_over("sdk", "http-json", "x16"),
        formatting.ratio,
    ),
    Target(
        "memory per idle session ≤ 4 KiB",
        IDLE_TARGET_KIB,
        True,
        _capacity("rss_idle_kib_per_session"),
        formatting.kib,
    ),
    Target(
        "memory per session with an open GET stream ≤ 12 KiB",
        GET_STREAM_TARGET_KIB,
        True,
        _capacity("rss_get_stream_kib_per_session"),
        formatting.kib,
    ),
)


def check_targets(results: Results) -> list[TargetResult]:
    return [TargetResult(target, target.measure(results)) for target in TARGETS]
