"""The Markdown report: the run's meta, a table per transport, capacity, and the targets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.matrix import FLOOR, HANDSHAKE_COUNTERPART, STATELESS_LIBS, STATELESS_VERSION
from benchmarks.report import formatting
from benchmarks.report.document import (
    LIB_DESCRIPTIONS,
    Cell,
    Results,
    cells_by_key,
    failed,
    figure,
    handshake_libs,
    lib_title,
    lib_version,
    libs_in,
    loads_in,
    machine_summary,
    of_floor,
    ordered,
    peers,
    run_date,
    run_errors,
    speedup,
    transports_in,
    workloads_in,
)
from benchmarks.report.sweep import sweep_section
from benchmarks.report.targets import check_targets

TRANSPORT_TITLES: dict[str, str] = {
    "in-memory": "In memory (client and server in one process)",
    "stdio": "stdio (the server a subprocess)",
    "http-json": "Streamable HTTP, JSON answers (load from wrk)",
    "http-sse": "Streamable HTTP, SSE answers (load from wrk)",
    "websocket": "WebSocket",
}

#: The server CPU column of the capacity table is taken from these cells.
CPU_WORKLOAD, CPU_LOAD = "call", "x32"


def format_markdown(results: Results) -> str:
    """The whole report as Markdown (GitHub tables), from a Results document."""
    parts = [_meta(results)]
    for transport in transports_in(results):
        if any(
            c["transport"] == transport and c["lib"] not in STATELESS_LIBS
            for c in results.get("cells", [])
        ):
            parts.append(_transport_section(results, transport))
    if any(c["lib"] in STATELESS_LIBS for c in results.get("cells", [])):
        parts.append(_stateless_section(results))
    sweep = sweep_section(results, TRANSPORT_TITLES)
    if sweep is not None:
        parts.append(sweep)
    parts.append(_capacity_section(results))
    parts.append(_targets_section(results))
    return "\n\n".join(part.rstrip("\n") for part in parts) + "\n"


def _meta(results: Results) -> str:
    meta: Mapping[str, Any] = results.get("meta", {})
    versions: Mapping[str, Any] = meta.get("versions", {})
    lines = [
        "# Benchmark: mcptrio, the official MCP Python SDK and FastMCP",
        "",
        f"- Date: {run_date(results)}",
        f"- Machine: {machine_summary(results)}",
    ]
    if versions:
        listed = ", ".join(f"{name} {version}" for name, version in versions.items())
        lines.append(f"- Versions: {listed}")
    for lib in libs_in(results):
        version = lib_version(results, lib)
        described = LIB_DESCRIPTIONS.get(lib, lib)
        lines.append(f"- {lib_title(lib)}: {described}" + (f", {version}" if version else ""))
    repeat, duration, warmup = meta.get("repeat"), meta.get("duration_s"), meta.get("warmup_s")
    if repeat is not None and duration is not None:
        runs = f"the median of {repeat} runs" if repeat != 1 else "one run"
        runs += f" of {duration:g} s"
        warm = f", each after {warmup:g} s of warm-up" if warmup is not None else ""
        lines.append(f"- Each figure: {runs}{warm}; the libraries interleaved (A B A B ...)")
    load = meta.get("machine", {}).get("load_average")
    if isinstance(load, list) and load:
        lines.append(f"- Load average when the run began: {' / '.join(map(str, load))}")
    if meta.get("total_wall_s") is not None:
        lines.append(f"- Whole run: {formatting.wall_time(float(meta['total_wall_s']))}")
    if meta.get("quick"):
        lines += [
            "",
            "> **Quick smoke run**: short windows, one run per cell. The figures show that every"
            " cell works, not how fast it is.",
        ]
    lines += [
        "",
        "A cell reads *calls per second · p50 / p99 latency per call*. `xN` is N concurrent"
        " callers in one session (over HTTP: N wrk connections); `s100x20` is 100 sessions at"
        " once, each opened, used for 20 calls and closed. *vs X* is mcptrio's calls per second"
        " divided by X's (in the stateless era's table, mcptrio stateless's). *floor* is no"
        " library: the same cell with no MCP work (see above), and *of floor* is mcptrio's calls"
        " per second as a share of the floor's (the floor does no MCP work: 100% is the limit,"
        " and a share above it is the machine's noise)."
        ' "failed": no run of the cell succeeded (the errors follow the'
        f' table); "{formatting.NOT_MEASURED}": not measured.',
    ]
    return "\n".join(lines)


def _cell_text(cell: Cell | None) -> str:
    if cell is None:
        return formatting.NOT_MEASURED
    if failed(cell):
        return formatting.FAILED
    text = (
        f"{formatting.rate(figure(cell, 'calls_per_s'))} · "
        f"{formatting.latency(figure(cell, 'p50_us'))} / "
        f"{formatting.latency(figure(cell, 'p99_us'))}"
    )
    return text + ("*" if run_errors(cell) else "")


def _transport_section(results: Results, transport: str) -> str:
    cells = [
        c
        for c in results.get("cells", [])
        if c["transport"] == transport and c["lib"] not in STATELESS_LIBS
    ]
    by_key = cells_by_key(results)
    libs = handshake_libs(ordered((c["lib"] for c in cells), tuple(libs_in(results))))
    others = peers(libs)
    floored = "mcptrio" in libs and FLOOR in libs
    header = ["workload", "load", *(lib_title(lib) for lib in libs)]
    header += [f"vs {lib_title(lib)}" for lib in others] if "mcptrio" in libs else []
    header += [f"mcptrio of {lib_title(FLOOR)}"] if floored else []
    rows: list[list[str]] = []
    notes: list[str] = []
    for workload in workloads_in(cells):
        for load in loads_in(c for c in cells if c["workload"] == workload):
            row_cells = {lib: by_key.get((lib, transport, workload, load)) for lib in libs}
            row = [f"`{workload}`", load, *(_cell_text(row_cells[lib]) for lib in libs)]
            if "mcptrio" in libs:
                mine = row_cells["mcptrio"]
                row += [formatting.ratio(speedup(row_cells[lib], mine)) for lib in others]
            if floored:
                row.append(formatting.share(of_floor(row_cells["mcptrio"], row_cells[FLOOR])))
            rows.append(row)
            notes += _error_notes(row_cells, f"{workload} {load}")
    title = TRANSPORT_TITLES.get(transport, transport)
    text = f"## {title}\n\n" + _table(header, rows, numeric_from=2)
    if notes:
        text += "\n\nErrors (* marks a figure some of whose runs failed):\n\n" + "\n".join(notes)
    return text


def _stateless_section(results: Results) -> str:
    """The stateless era's cells, a row per transport, workload and load, with two ratios: over
    the SDK in the same era, and over the same library in the handshake era (``vs_handshake``,
    the cells of the transport tables above)."""
    cells = [c for c in results.get("cells", []) if c["lib"] in STATELESS_LIBS]
    by_key = cells_by_key(results)
    libs = [lib for lib in STATELESS_LIBS if any(c["lib"] == lib for c in cells)]
    header = ["transport", "workload", "load", *(lib_title(lib) for lib in libs)]
    if "mcptrio-stateless" in libs and "sdk-stateless" in libs:
        header.append(f"vs {lib_title('sdk-stateless')}")
    header += [
        f"{lib_title(lib)} / {lib_title(HANDSHAKE_COUNTERPART[lib])}"
        for lib in libs
        if lib in HANDSHAKE_COUNTERPART
    ]
    floored = "mcptrio-stateless" in libs and any(
        c["lib"] == FLOOR for c in results.get("cells", [])
    )
    if floored:
        header.append(f"{lib_title('mcptrio-stateless')} of {lib_title(FLOOR)}")
    rows: list[list[str]] = []
    notes: list[str] = []
    answered_json: dict[str, list[tuple[str, float]]] = {}
    for transport in ordered((c["transport"] for c in cells), tuple(transports_in(results))):
        here = [c for c in cells if c["transport"] == transport]
        for workload in workloads_in(here):
            for load in loads_in(c for c in here if c["workload"] == workload):
                row_cells = {lib: by_key.get((lib, transport, workload, load)) for lib in libs}
                row = [transport, f"`{workload}`", load]
                row += [_cell_text(row_cells[lib]) for lib in libs]
                if "mcptrio-stateless" in libs and "sdk-stateless" in libs:
                    row.append(
                        formatting.ratio(
                            speedup(row_cells["sdk-stateless"], row_cells["mcptrio-stateless"])
                        )
                    )
                row += [formatting.relative(_vs_handshake(row_cells[lib], by_key)) for lib in libs]
                if floored:
                    floor = by_key.get((FLOOR, transport, workload, load))
                    row.append(formatting.share(of_floor(row_cells["mcptrio-stateless"], floor)))
                rows.append(row)
                where = f"{transport} {workload} {load}"
                notes += _error_notes(row_cells, where)
                for lib, cell in row_cells.items():
                    share = _json_share(cell)
                    if share:
                        answered_json.setdefault(lib, []).append((f"{workload} {load}", share))
    text = (
        f"## Stateless era (revision {STATELESS_VERSION})\n\n"
        "The same servers, spoken to without a session: no `initialize`, every request"
        " carrying the client's `_meta`; over HTTP every call is a POST of its own with the"
        " era's headers and no `Mcp-Session-Id` (wrk, `benchmarks/http/stateless.lua`). No"
        " `s100x20`: there are no sessions to open and close. *vs SDK stateless* is mcptrio"
        " stateless's calls per second over the SDK's; *X stateless / X* is the library's"
        " calls per second in this era over its own in the handshake era's table above, for"
        " the same cell (the SDK's `auto` client already speaks 2026-07-28 in memory and over"
        " stdio, so there the SDK's ratio compares one path with itself); *of floor*: mcptrio"
        " stateless's calls per second as a share of the floor's in the same cell (the floor"
        " has no era).\n\n" + _table(header, rows, numeric_from=3)
    )
    if answered_json:
        text += (
            "\n\nAnswered as JSON in the `http-sse` cells (the era lets the server choose per"
            " request; the SDK's SSE mode answers a request as JSON when its handler finishes"
            " quickly):\n\n" + "\n".join(_json_notes(answered_json))
        )
    if notes:
        text += "\n\nErrors (* marks a figure some of whose runs failed):\n\n" + "\n".join(notes)
    return text


def _vs_handshake(cell: Cell | None, by_key: Mapping[Any, Cell]) -> float | None:
    """The cell's ``vs_handshake``, or computed from its handshake counterpart's cell."""
    given = figure(cell, "vs_handshake")
    if given is not None or cell is None:
        return given
    counterpart = HANDSHAKE_COUNTERPART.get(cell["lib"])
    theirs = by_key.get((counterpart, cell["transport"], cell["workload"], cell["load"]))
    mine, handshake = figure(cell, "calls_per_s"), figure(theirs, "calls_per_s")
    return mine / handshake if mine is not None and handshake else None


def _json_share(cell: Cell | None) -> float | None:
    """The share of the cell's calls answered as JSON, over its runs that counted them."""
    runs = [r for r in (cell or {}).get("runs", []) if r.get("json_answers") is not None]
    calls = sum(int(r.get("calls", 0)) for r in runs)
    return sum(int(r["json_answers"]) for r in runs) / calls if calls else None


def _json_notes(shares: Mapping[str, list[tuple[str, float]]]) -> list[str]:
    notes: list[str] = []
    for lib, cells in shares.items():
        if all(share == 1.0 for _, share in cells):
            notes.append(f"- {lib_title(lib)}: every answer, in {len(cells)} cell(s)")
        else:
            listed = ", ".join(f"`{where}` {share:.0%}" for where, share in cells)
            notes.append(f"- {lib_title(lib)}: {listed}")
    return notes


def _error_notes(row_cells: Mapping[str, Cell | None], where: str) -> list[str]:
    notes: list[str] = []
    for lib, cell in row_cells.items():
        if cell is None:
            continue
        retried = [str(r["retried"]) for r in cell.get("runs", []) if r.get("retried")]
        if retried:
            first = formatting.one_line(retried[0])
            notes.append(
                f"- {lib_title(lib)}, `{where}`: {len(retried)} run(s) measured again after a"
                f" failed attempt: `{first}`"
            )
        errors = run_errors(cell)
        if not errors:
            continue
        runs = len(cell.get("runs", []))
        count = f"{len(errors)} of {runs} runs failed" if runs else "failed"
        distinct = list(dict.fromkeys(formatting.one_line(e) for e in errors))
        shown = "; ".join(f"`{e}`" for e in distinct[:2])
        more = f" (+{len(distinct) - 2} other errors)" if len(distinct) > 2 else ""
        notes.append(f"- {lib_title(lib)}, `{where}`: {count}: {shown}{more}")
    return notes


def _capacity_section(results: Results) -> str:
    records = {r["lib"]: r for r in results.get("capacity", []) if "lib" in r}
    by_key = cells_by_key(results)
    transports = transports_in(results)
    header = [
        "library",
        "KiB / idle session",
        "KiB / session with GET stream",
        "session open (HTTP) p50 / p99",
        "import",
        "stdio server start",
        *(f"CPU / call, {t}" for t in transports),
    ]
    rows: list[list[str]] = []
    notes: list[str] = []
    scoped_both = False
    for lib in libs_in(results):
        record = records.get(lib)
        row = [lib_title(lib), *_capacity_figures(record)]
        for transport in transports:
            cell = by_key.get((lib, transport, CPU_WORKLOAD, CPU_LOAD))
            cpu = formatting.micros(figure(cell, "cpu_us_per_call"))
            if (
                cell is not None
                and cell.get("cpu_scope") == "client+server"
                and figure(cell, "cpu_us_per_call")
            ):
                cpu += "†"
                scoped_both = True
            row.append(cpu)
        rows.append(row)
        if record is not None and record.get("error"):
            error = formatting.one_line(str(record["error"]), limit=300)
            notes.append(f"- {lib_title(lib)}: failed: `{error}`")
        if record is not None and record.get("notes"):
            remark = formatting.one_line(str(record["notes"]), limit=300)
            notes.append(f"- {lib_title(lib)}: {remark}")
    sessions = sorted({r["sessions"] for r in records.values() if r.get("sessions")})
    measured_with = (
        f" Memory is the growth of the server's resident set per session, measured with"
        f" {' / '.join(f'{n:,}' for n in sessions)} sessions open."
        if sessions
        else ""
    )
    text = (
        "## Capacity\n\n"
        f"CPU per call is the server process's, taken from the `{CPU_WORKLOAD}` {CPU_LOAD}"
        f" cells.{measured_with}"
        "\n\n" + _table(header, rows, numeric_from=1)
    )
    if scoped_both:
        text += (
            "\n\n† client and server CPU together: they share one process (in memory), so the"
            " figure includes the client's work."
        )
    if notes:
        text += "\n\nNotes:\n\n" + "\n".join(notes)
    return text


def _capacity_figures(record: Mapping[str, Any] | None) -> list[str]:
    if record is None:
        return [formatting.NOT_MEASURED] * 5

    def value(field: str) -> float | None:
        raw = record.get(field)
        return float(raw) if isinstance(raw, int | float) else None

    missing = formatting.FAILED if record.get("error") else formatting.NOT_MEASURED

    def shown(text: str) -> str:
        return missing if text == formatting.NOT_MEASURED else text

    p50, p99 = value("session_open_p50_us"), value("session_open_p99_us")
    opening = (
        f"{formatting.latency(p50)} / {formatting.latency(p99)}"
        if p50 is not None or p99 is not None
        else missing
    )
    return [
        shown(formatting.kib(value("rss_idle_kib_per_session"))),
        shown(formatting.kib(value("rss_get_stream_kib_per_session"))),
        opening,
        shown(formatting.seconds(value("import_s"))),
        shown(formatting.seconds(value("stdio_start_s"))),
    ]


def _targets_section(results: Results) -> str:
    rows = [
        [str(r.target.issue), r.target.description, r.target.show(r.measured), f"**{r.status}**"]
        for r in check_targets(results)
    ]
    sdk = lib_version(results, "sdk")
    fastmcp = lib_version(results, "fastmcp")
    against = ", ".join(
        f"{name} {version}"
        for name, version in (("mcp", sdk), ("fastmcp", fastmcp))
        if version is not None
    )
    text = (
        "## Targets\n\n"
        "The issues' targets for mcptrio"
        + (f" (against {against})" if against else "")
        + "; reported here, never asserted.\n\n"
        + _table(["issue", "target", "measured", "status"], rows, numeric_from=2)
    )
    if results.get("meta", {}).get("quick"):
        text += "\n\nA quick smoke run's figures say nothing about the targets."
    return text


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], *, numeric_from: int) -> str:
    """A GitHub table; columns from ``numeric_from`` on are right-aligned."""
    align = ["---" if i < numeric_from else "---:" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)
