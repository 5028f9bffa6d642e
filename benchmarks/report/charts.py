"""The PNG charts: throughput by transport (the headline), latency percentiles, memory per session.

Drawn with matplotlib's object API on the Agg canvas (no pyplot, no screen, no global figure
state). Every library keeps one colour across the charts; mcptrio's is always the vermilion.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from benchmarks.matrix import FLOOR, LIBS, callers
from benchmarks.report import formatting
from benchmarks.report.document import (
    Results,
    cells_by_key,
    failed,
    figure,
    handshake_libs,
    lib_label,
    libs_in,
    machine_summary,
    of_floor,
    ordered,
    run_date,
    speedup,
    transports_in,
)
from benchmarks.report.targets import GET_STREAM_TARGET_KIB, IDLE_TARGET_KIB

#: Okabe-Ito colours (told apart with the common colour-vision deficiencies).
LIB_COLOURS: dict[str, str] = {
    "mcptrio": "#D55E00",
    "sdk": "#0072B2",
    "sdk-legacy": "#56B4E9",
    "fastmcp": "#009E73",
    "mcptrio-stateless": "#E69F00",
    "sdk-stateless": "#CC79A7",
}
#: The floor is drawn as a mark, never a bar: it is no library.
FLOOR_COLOUR = "#444444"
FLOOR_STYLE = (0, (4, 2))
_SPARE_COLOURS = ("#999999", "#F0E442", "#000000")

TRANSPORT_LABELS: dict[str, str] = {
    "in-memory": "in memory",
    "stdio": "stdio",
    "http-json": "HTTP (JSON)",
    "http-sse": "HTTP (SSE)",
    "websocket": "WebSocket",
}

#: The headline chart's panels: the `call` workload at these loads.
THROUGHPUT_LOADS = ("x32", "x100")
LATENCY_LOAD = "x32"
PERCENTILES = (("p50", "p50_us"), ("p90", "p90_us"), ("p99", "p99_us"), ("p99.9", "p999_us"))
DPI = 120


def lib_colour(lib: str) -> str:
    if lib in LIB_COLOURS:
        return LIB_COLOURS[lib]
    return _SPARE_COLOURS[sum(map(ord, lib)) % len(_SPARE_COLOURS)]


def write_charts(results: Results, out_dir: Path) -> list[Path]:
    """Write the three charts into ``out_dir``; return their paths."""
    written = []
    for name, draw in (
        ("throughput-by-transport.png", throughput_chart),
        ("latency.png", latency_chart),
        ("memory.png", memory_chart),
    ):
        path = out_dir / name
        fig = draw(results)
        FigureCanvasAgg(fig)
        fig.savefig(path, dpi=DPI, bbox_inches="tight", metadata={"Software": None})
        written.append(path)
    return written


def throughput_chart(results: Results) -> Figure:
    """Calls/s of the `call` workload per transport, grouped by library, one panel per load."""
    cells = _charted_cells(results)
    panels = [
        load for load in THROUGHPUT_LOADS if any(k[2] == "call" and k[3] == load for k in cells)
    ] or [THROUGHPUT_LOADS[0]]
    fig = Figure(figsize=(6.2 * len(panels), 5.4), layout="constrained")
    axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    floors = _floor_cells(results)
    values = [
        v
        for key, cell in [*cells.items(), *floors.items()]
        if key[2] == "call" and key[3] in panels
        for v in [figure(cell, "calls_per_s")]
        if v
    ]
    log = bool(values) and max(values) / min(values) > 15
    for ax, load in zip(axes, panels, strict=True):
        _throughput_panel(ax, results, load, log=log)
        if values:
            ax.set_ylim(*_rate_limits(values, log))
    axes[0].set_ylabel("tool calls per second" + (" (log scale)" if log else ""))
    floored = any(k[2] == "call" and k[3] in panels for k in floors)
    explanation = "Above each bar: how many times faster mcptrio is than that library"
    if floored:
        explanation += "; dashed: the floor (the transport with no MCP work), mcptrio's share of it"
    _titles(
        fig,
        results,
        "Trivial tool call (add): calls per second by transport",
        explanation,
        repeats=True,
    )
    _legend(
        fig,
        results,
        [lib for lib in _charted(results) if _has_cells(cells, lib, "call")],
        extra=[_floor_handle()] if floored else [],
    )
    return fig


def _throughput_panel(ax: Axes, results: Results, load: str, *, log: bool) -> None:
    cells = _charted_cells(results)
    charted = _charted(results)
    transports = [
        t for t in transports_in(results) if any(k[1:] == (t, "call", load) for k in cells)
    ]
    groups = [[lib for lib in charted if (lib, t, "call", load) in cells] for t in transports]
    width = 0.8 / max((len(g) for g in groups), default=1)
    floors = _floor_cells(results)
    for x, (transport, libs) in enumerate(zip(transports, groups, strict=True)):
        mine = cells.get(("mcptrio", transport, "call", load))
        floor = floors.get((FLOOR, transport, "call", load))
        _floor_mark(
            ax,
            x,
            width * max(len(libs), 1) / 2,
            figure(floor, "calls_per_s"),
            of_floor(mine, floor),
        )
        for i, lib in enumerate(libs):
            cell = cells[(lib, transport, "call", load)]
            centre = x + (i - (len(libs) - 1) / 2) * width
            rate = figure(cell, "calls_per_s")
            if failed(cell) or rate is None:
                ax.text(
                    centre,
                    0.02,
                    "failed",
                    transform=ax.get_xaxis_transform(),
                    rotation=90,
                    ha="center",
                    va="bottom",
                    fontsize=8,
                    color=lib_colour(lib),
                    weight="bold",
                )
                continue
            ax.bar(centre, rate, width * 0.92, color=lib_colour(lib), zorder=2)
            label = _compact(rate) if lib == "mcptrio" else formatting.ratio(speedup(cell, mine))
            if lib == "mcptrio" or speedup(cell, mine) is not None:
                # Upright labels stay within their bar's width: neighbours never overlap.
                ax.annotate(
                    label,
                    (centre, rate),
                    xytext=(0, 2),
                    rotation=90,
                    textcoords="offset points",
                    ha="center",
                    va="bottom",
                    fontsize=8,
                    weight="normal" if lib == "mcptrio" else "bold",
                    color="#333333",
                )
    ax.set_xticks(range(len(transports)), [TRANSPORT_LABELS.get(t, t) for t in transports])
    if log:
        _log_axis(ax)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: _compact(v)))
    ax.grid(axis="y", color="#dddddd", zorder=0, which="major")
    ax.set_axisbelow(True)
    n = callers(load)
    ax.set_title(f"{n} concurrent callers in one session (HTTP: {n} wrk connections)", fontsize=10)
    ax.set_xlabel("transport")
    ax.spines[["top", "right"]].set_visible(False)


def latency_chart(results: Results) -> Figure:
    """p50/p90/p99/p99.9 of the `call` workload at x32, a panel per transport, log scale."""
    cells = _charted_cells(results)
    transports = [
        t for t in transports_in(results) if any(k[1:] == (t, "call", LATENCY_LOAD) for k in cells)
    ] or ["in-memory"]
    columns = min(3, len(transports))
    rows = math.ceil(len(transports) / columns)
    fig = Figure(figsize=(4.3 * columns, 3.6 * rows + 1.0), layout="constrained")
    grid = fig.subplots(rows, columns, sharey=True, squeeze=False)
    axes = [ax for row in grid for ax in row]
    shown: list[str] = []
    floor_shown = False
    for ax, transport in zip(axes, transports, strict=False):
        failures = []
        for lib in _charted(results):
            cell = cells.get((lib, transport, "call", LATENCY_LOAD))
            if cell is None:
                continue
            if failed(cell):
                failures.append(lib)
                continue
            points = [(i, figure(cell, f)) for i, (_, f) in enumerate(PERCENTILES)]
            xs = [i for i, v in points if v is not None]
            ys = [v / 1_000 for _, v in points if v is not None]
            ax.plot(
                xs,
                ys,
                marker="o",
                color=lib_colour(lib),
                linewidth=2.2 if lib == "mcptrio" else 1.6,
                label=lib_label(results, lib),
                zorder=3,
            )
            shown.append(lib)
        floor = _floor_cells(results).get((FLOOR, transport, "call", LATENCY_LOAD))
        floor_points = [(i, figure(floor, f)) for i, (_, f) in enumerate(PERCENTILES)]
        if any(v is not None for _, v in floor_points):
            ax.plot(
                [i for i, v in floor_points if v is not None],
                [v / 1_000 for _, v in floor_points if v is not None],
                color=FLOOR_COLOUR,
                linestyle=FLOOR_STYLE,
                linewidth=1.4,
                zorder=2,
            )
            floor_shown = True
        _log_axis(ax)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: _ms(v)))
        ax.set_xticks(range(len(PERCENTILES)), [name for name, _ in PERCENTILES])
        ax.set_xlim(-0.3, len(PERCENTILES) - 0.7)
        ax.grid(color="#dddddd", axis="y", zorder=0)
        ax.set_title(TRANSPORT_LABELS.get(transport, transport), fontsize=11)
        ax.set_xlabel("percentile")
        ax.spines[["top", "right"]].set_visible(False)
        if failures:
            ax.text(
                0.02,
                0.97,
                "failed: " + ", ".join(lib_label(results, f) for f in failures),
                transform=ax.transAxes,
                va="top",
                fontsize=8,
                color="#aa0000",
            )
    for row in grid:
        row[0].set_ylabel("latency per call (ms, log scale)")
    for ax in axes[len(transports) :]:
        ax.set_visible(False)
    _titles(
        fig,
        results,
        f"Latency of the trivial tool call, {callers(LATENCY_LOAD)} concurrent callers",
        "From sending a request to reading its answer; lower is better",
        repeats=True,
    )
    _legend(fig, results, ordered(shown, LIBS), extra=[_floor_handle()] if floor_shown else [])
    return fig


def memory_chart(results: Results) -> Figure:
    """KiB per idle session and per session with an open GET stream, with the targets."""
    records = [r for r in results.get("capacity", []) if "lib" in r]
    libs = ordered((r["lib"] for r in records), LIBS)
    by_lib = {r["lib"]: r for r in records}
    fig = Figure(figsize=(8.5, 5.2), layout="constrained")
    ax = fig.subplots()
    groups = (
        ("idle session", "rss_idle_kib_per_session", IDLE_TARGET_KIB),
        (
            "session with an open GET stream",
            "rss_get_stream_kib_per_session",
            GET_STREAM_TARGET_KIB,
        ),
    )
    width = 0.8 / max(len(libs), 1)
    for x, (_, field, target) in enumerate(groups):
        for i, lib in enumerate(libs):
            centre = x + (i - (len(libs) - 1) / 2) * width
            value = by_lib[lib].get(field)
            if not isinstance(value, int | float):
                ax.text(
                    centre,
                    0.02,
                    "failed" if by_lib[lib].get("error") else "not measured",
                    transform=ax.get_xaxis_transform(),
                    rotation=90,
                    ha="center",
                    va="bottom",
                    fontsize=8,
                    color=lib_colour(lib),
                    weight="bold",
                )
                continue
            ax.bar(centre, value, width * 0.92, color=lib_colour(lib), zorder=2)
            ax.annotate(
                formatting.kib(float(value)),
                (centre, value),
                xytext=(0, 2),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=8,
            )
        ax.hlines(
            target, x - 0.45, x + 0.45, colors="#D55E00", linestyles="--", linewidth=1.5, zorder=3
        )
        ax.annotate(
            f"target ≤ {target:g} KiB",
            (x + 0.45, target),
            xytext=(0, 3),
            textcoords="offset points",
            ha="right",
            va="bottom",
            fontsize=8,
            color="#D55E00",
            zorder=4,
            bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1},
        )
    ax.set_xticks(range(len(groups)), [name for name, _, _ in groups])
    ax.set_ylabel("resident memory per session (KiB)")
    ax.set_ylim(0, None)
    ax.grid(axis="y", color="#dddddd", zorder=0)
    ax.set_axisbelow(True)
    ax.spines[["top", "right"]].set_visible(False)
    sessions = sorted({r["sessions"] for r in records if r.get("sessions")})
    counted = f" with {' / '.join(f'{n:,}' for n in sessions)} sessions open" if sessions else ""
    if not libs:
        ax.text(
            0.5,
            0.5,
            "no capacity figures in this run",
            transform=ax.transAxes,
            ha="center",
            fontsize=12,
            color="#666666",
        )
    _titles(
        fig,
        results,
        "Server memory per MCP session",
        f"Growth of the server's resident set divided by the sessions{counted}; lower is better",
    )
    target_line = Line2D([], [], color="#D55E00", linestyle="--", label="mcptrio's targets")
    _legend(fig, results, libs, extra=[target_line])
    return fig


def _titles(
    fig: Figure, results: Results, title: str, explanation: str, *, repeats: bool = False
) -> None:
    meta = results.get("meta", {})
    run = f"{machine_summary(results)} · {run_date(results)}"
    if repeats and meta.get("repeat") is not None and meta.get("duration_s") is not None:
        repeat = int(meta["repeat"])
        runs = f"median of {repeat} runs" if repeat != 1 else "one run"
        run += f" · {runs} of {meta['duration_s']:g} s"
    if meta.get("quick"):
        run += " · QUICK SMOKE RUN: not a measurement"
    # The blank lines reserve room (constrained layout sees the title, not free text) for the
    # two smaller lines drawn under it.
    fig.suptitle(f"{title}\n\n", fontsize=13, weight="bold")
    fig.text(
        0.5,
        1.0,
        f"\n\n{run}\n{explanation}",
        ha="center",
        va="top",
        fontsize=8.5,
        color="#444444",
        transform=fig.transFigure,
    )


def _legend(
    fig: Figure, results: Results, libs: Sequence[str], extra: Sequence[Artist] = ()
) -> None:
    if not libs:
        return
    handles: list[Artist] = [
        Patch(color=lib_colour(lib), label=lib_label(results, lib)) for lib in libs
    ]
    handles += extra
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), frameon=False)


def _charted(results: Results) -> list[str]:
    """The libraries the charts show: the handshake era's. The stateless era's cells are in a
    table of their own, with their own ratios (a bar's label is a ratio over mcptrio); the
    floor is a mark (``_floor_mark``), not a library."""
    return [lib for lib in handshake_libs(libs_in(results)) if lib != FLOOR]


def _floor_cells(results: Results) -> dict[Any, Any]:
    return {key: cell for key, cell in cells_by_key(results).items() if key[0] == FLOOR}


def _floor_mark(
    ax: Axes, x: float, half_width: float, rate: float | None, share: float | None
) -> None:
    """The floor's calls/s as a dashed line across a transport's bars, labelled with it and
    mcptrio's share of it."""
    if not rate:
        return
    left, right = x - half_width, x + half_width
    ax.hlines(rate, left, right, colors=FLOOR_COLOUR, linestyles=[FLOOR_STYLE], zorder=3)
    label = f"floor {_compact(rate)}"
    if share is not None:
        label += f"\nmcptrio {formatting.share(share)}"
    ax.annotate(
        label,
        (right, rate),
        xytext=(0, 2),
        textcoords="offset points",
        ha="right",
        va="bottom",
        fontsize=7,
        color=FLOOR_COLOUR,
        zorder=4,
    )


def _floor_handle() -> Line2D:
    return Line2D(
        [],
        [],
        color=FLOOR_COLOUR,
        linestyle=FLOOR_STYLE,
        label="floor: the transport, no MCP work",
    )


def _charted_cells(results: Results) -> dict[Any, Any]:
    charted = set(_charted(results))
    return {key: cell for key, cell in cells_by_key(results).items() if key[0] in charted}


def _has_cells(cells: dict[Any, Any], lib: str, workload: str) -> bool:
    return any(k[0] == lib and k[2] == workload for k in cells)


def _log_axis(ax: Axes) -> None:
    """A log axis labelled at 1, 2, 5 of each decade (plain numbers, not powers of ten)."""
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_minor_formatter(NullFormatter())


def _rate_limits(values: Sequence[float], log: bool) -> tuple[float, float]:
    if log:
        return min(values) / 2, max(values) * 3.5
    return 0, max(values) * 1.3


def _compact(value: float) -> str:
    """``950``, ``1.5k``, ``24k``: an axis tick or a bar's label."""
    if value >= 10_000:
        return f"{value / 1_000:.0f}k"
    if value >= 1_000:
        return f"{value / 1_000:.1f}k".replace(".0k", "k")
    return f"{value:.0f}" if value >= 1 else f"{value:.2g}"


def _ms(value: float) -> str:
    return f"{value:g}" if value >= 0.01 else f"{value:.1g}"
