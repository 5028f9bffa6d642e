"""Figures as text for the tables: rates, latencies, ratios, sizes, durations."""

from __future__ import annotations

#: A cell or figure that was not measured (an en dash).
NOT_MEASURED = "\u2013"
FAILED = "failed"


def rate(calls_per_s: float | None) -> str:
    """``48,210/s``: whole calls per second with thousands separators (one decimal below 10)."""
    if calls_per_s is None:
        return NOT_MEASURED
    if calls_per_s < 10:
        return f"{calls_per_s:.1f}/s"
    return f"{calls_per_s:,.0f}/s"


def latency(us: float | None) -> str:
    """A latency in the unit that keeps it short: ``850 µs``, ``1.25 ms``, ``12.5 ms``."""
    if us is None:
        return NOT_MEASURED
    if us < 1_000:
        return f"{us:.0f} µs"
    if us < 10_000:
        return f"{us / 1_000:.2f} ms"
    if us < 1_000_000:
        return f"{us / 1_000:.1f} ms"
    return f"{us / 1_000_000:.2f} s"


def ratio(value: float | None) -> str:
    """mcptrio's speedup: ``4.3x``, ``0.8x``, ``123x``."""
    if value is None:
        return NOT_MEASURED
    if value >= 100:
        return f"{value:.0f}x"
    return f"{value:.1f}x"


def relative(value: float | None) -> str:
    """A ratio near 1 (one era over the other): ``0.93x``, ``1.18x``."""
    if value is None:
        return NOT_MEASURED
    return f"{value:.2f}x"


def share(value: float | None) -> str:
    """A fraction of the floor: ``27%``, ``4.5%``, ``0.8%``."""
    if value is None:
        return NOT_MEASURED
    percent = value * 100
    return f"{percent:.0f}%" if percent >= 10 else f"{percent:.1f}%"


def kib(value: float | None) -> str:
    if value is None:
        return NOT_MEASURED
    return f"{value:.1f} KiB" if value < 100 else f"{value:,.0f} KiB"


def seconds(value: float | None) -> str:
    if value is None:
        return NOT_MEASURED
    return f"{value:.2f} s" if value < 10 else f"{value:.1f} s"


def micros(value: float | None) -> str:
    """A CPU cost per call in microseconds, without switching units (columns compare)."""
    if value is None:
        return NOT_MEASURED
    return f"{value:,.0f} µs" if value >= 10 else f"{value:.1f} µs"


def wall_time(total_s: float | None) -> str:
    """``12 min 3 s`` / ``48 s``."""
    if total_s is None:
        return NOT_MEASURED
    minutes, rest = divmod(round(total_s), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


def one_line(text: str, limit: int = 160) -> str:
    """An error message on one line, cut to ``limit`` characters, safe inside a table."""
    flat = " ".join(text.split()).replace("|", "\\|")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
