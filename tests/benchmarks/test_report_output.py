"""The benchmark report: the files it writes and what its Markdown says (no timing asserted)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from synthetic_results import add_speedups, synthetic_results

from benchmarks.report import format_markdown, write_results
from benchmarks.report.__main__ import main

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
CHARTS = ("throughput-by-transport.png", "latency.png", "memory.png")


def _cell(doc: dict[str, Any], lib: str, transport: str, workload: str, load: str) -> Any:
    (found,) = [
        c
        for c in doc["cells"]
        if (c["lib"], c["transport"], c["workload"], c["load"]) == (lib, transport, workload, load)
    ]
    return found


def small_results() -> dict[str, Any]:
    """Two transports, three libraries; one failed cell, one library missing from a transport,
    one cell not measured, one capacity record that failed."""
    doc = synthetic_results(
        libs=("mcptrio", "sdk", "fastmcp"), transports=("in-memory", "http-json"), repeat=3
    )
    _cell(doc, "mcptrio", "in-memory", "call", "x32")["calls_per_s"] = 21_000.0
    _cell(doc, "sdk", "in-memory", "call", "x32")["calls_per_s"] = 5_000.0
    broken = _cell(doc, "sdk", "in-memory", "call", "x100")
    for field in ("calls_per_s", "p50_us", "p90_us", "p99_us", "p999_us", "cpu_us_per_call"):
        del broken[field]
    broken["runs"] = [{**run, "error": "answer was 'oops', expected '3'"} for run in broken["runs"]]
    unmeasured = ("fastmcp", "http-json", "list-50", "x32")
    doc["cells"] = [
        c
        for c in doc["cells"]
        if not (c["lib"] == "fastmcp" and c["transport"] == "in-memory")
        and (c["lib"], c["transport"], c["workload"], c["load"]) != unmeasured
    ]
    add_speedups(doc["cells"])
    doc["capacity"] = [r for r in doc["capacity"] if r["lib"] != "fastmcp"]
    doc["capacity"].append({"lib": "fastmcp", "sessions": 1000, "error": "server did not start"})
    return doc


def _row(markdown: str, section: str, workload: str, load: str) -> str:
    text = markdown.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    (row,) = [line for line in text.splitlines() if line.startswith(f"| `{workload}` | {load} |")]
    return row


def test_write_results_writes_json_markdown_and_png_charts(tmp_path: Path) -> None:
    doc = small_results()
    written = write_results(doc, tmp_path / "out")
    names = sorted(p.name for p in written)
    assert names == sorted(["results.json", "results.md", *CHARTS])
    for name in CHARTS:
        data = (tmp_path / "out" / name).read_bytes()
        assert data.startswith(PNG_MAGIC)
        assert len(data) > 10_000
    assert json.loads((tmp_path / "out" / "results.json").read_text()) == doc
    assert (tmp_path / "out" / "results.md").read_text() == format_markdown(doc)


def test_markdown_shows_speedups_failures_and_unmeasured_cells() -> None:
    markdown = format_markdown(small_results())
    in_memory = "In memory"
    row = _row(markdown, in_memory, "call", "x32")
    assert "21,000/s" in row and "5,000/s" in row and "| 4.2x |" in row
    failed_row = _row(markdown, in_memory, "call", "x100")
    assert "| failed |" in failed_row
    assert "SDK, `call x100`: 3 of 3 runs failed: `answer was 'oops', expected '3'`" in markdown
    # FastMCP has no in-memory cell: no column there, but one over HTTP.
    header = markdown.split(f"## {in_memory}", 1)[1].splitlines()[2]
    assert "FastMCP" not in header
    assert "| \u2013 |" in _row(markdown, "Streamable HTTP, JSON", "list-50", "x32")


def test_markdown_capacity_and_targets() -> None:
    markdown = format_markdown(small_results())
    capacity = markdown.split("## Capacity", 1)[1].split("\n## ", 1)[0]
    assert "| mcptrio | 3.4 KiB | 10.8 KiB | 240 µs / 610 µs | 0.14 s | 0.21 s |" in capacity
    assert "| FastMCP | failed | failed | failed | failed | failed |" in capacity
    assert "server did not start" in capacity
    targets = markdown.split("## Targets", 1)[1]
    assert "| 7 | memory per idle session ≤ 4 KiB | 3.4 KiB | **met** |" in targets
    assert "| 7 | in-memory, `call` x100: ≥ 10x the official SDK | \u2013 | **not measured** |" in (
        targets
    )
    assert "16 connections: ≥ 5x the official SDK |" in targets
    assert "| 20 | memory per idle Streamable HTTP session ≤ 8 KiB | 3.4 KiB | **met** |" in targets
    assert "| 20 | memory per session with an open GET stream ≤ 16 KiB | 10.8 KiB | **met** |" in (
        targets
    )
    assert "| 20 | Streamable HTTP (JSON), `read-100k` x1: ≥ 3x the official SDK |" in targets


def test_every_transport_of_a_full_run_gets_a_table() -> None:
    markdown = format_markdown(synthetic_results())
    for title in ("In memory", "stdio", "JSON answers", "SSE answers", "WebSocket", "Capacity"):
        assert f"## {title}" in markdown or title in markdown


def test_stateless_cells_get_their_own_table_with_both_ratios() -> None:
    doc = synthetic_results(transports=("in-memory", "http-json", "http-sse"), repeat=1)
    _cell(doc, "mcptrio", "http-json", "call", "x16")["calls_per_s"] = 8_000.0
    _cell(doc, "mcptrio-stateless", "http-json", "call", "x16")["calls_per_s"] = 10_000.0
    _cell(doc, "sdk-stateless", "http-json", "call", "x16")["calls_per_s"] = 2_500.0
    _cell(doc, "sdk", "http-json", "call", "x16")["calls_per_s"] = 1_500.0
    _cell(doc, "floor", "http-json", "call", "x16")["calls_per_s"] = 20_000.0
    add_speedups(doc["cells"])
    markdown = format_markdown(doc)
    # The handshake era's tables keep their columns.
    header = markdown.split("## Streamable HTTP, JSON", 1)[1].splitlines()[2]
    assert "stateless" not in header
    section = markdown.split("## Stateless era (revision 2026-07-28)", 1)[1].split("\n## ", 1)[0]
    lines = section.splitlines()
    (header,) = [line for line in lines if line.startswith("| transport |")]
    assert header == (
        "| transport | workload | load | mcptrio stateless | SDK stateless | vs SDK stateless"
        " | mcptrio stateless / mcptrio | SDK stateless / SDK | mcptrio stateless of floor |"
    )
    (row,) = [line for line in lines if line.startswith("| http-json | `call` | x16 |")]
    assert "10,000/s" in row and "2,500/s" in row
    assert row.endswith("| 4.0x | 1.25x | 1.67x | 50% |")
    assert not any("s100x20" in line for line in lines if line.startswith("| "))
    assert "- SDK stateless: every answer, in 16 cell(s)" in section


def test_charts_leave_the_stateless_libraries_out(tmp_path: Path) -> None:
    from benchmarks.report.charts import latency_chart, throughput_chart

    doc = synthetic_results(transports=("in-memory", "http-json"), repeat=1)
    for fig in (throughput_chart(doc), latency_chart(doc)):
        labels = [text.get_text() for legend in fig.legends for text in legend.get_texts()]
        assert labels and not any("stateless" in label for label in labels)


def test_command_line_regenerates_the_report_from_saved_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "run" / "results.json"
    saved.parent.mkdir()
    saved.write_text(json.dumps(small_results()))
    assert main([str(saved), "--out", str(tmp_path / "again")]) == 0
    printed = capsys.readouterr().out.split()
    assert sorted(Path(p).name for p in printed) == sorted(["results.json", "results.md", *CHARTS])
    assert (tmp_path / "again" / "memory.png").read_bytes().startswith(PNG_MAGIC)


def test_command_line_rejects_a_file_that_is_not_results(tmp_path: Path) -> None:
    bad = tmp_path / "results.json"
    bad.write_text("[1, 2]")
    with pytest.raises(SystemExit) as exit_info:
        main([str(bad)])
    assert exit_info.value.code == 2


def test_publish_replaces_only_the_marked_section_and_draws_the_charts_beside_it(
    tmp_path: Path,
) -> None:
    page = tmp_path / "benchmarks.md"
    page.write_text(
        "# Benchmarks\n\nbefore\n\n<!-- latest-results: begin. notes -->\n\nold table\n\n"
        "<!-- latest-results: end -->\n\nafter\n"
    )
    saved = tmp_path / "results.json"
    saved.write_text(json.dumps(small_results()))
    assert main([str(saved), "--out", str(tmp_path / "run"), "--publish", "--page", str(page)]) == 0
    text = page.read_text()
    assert text.startswith("# Benchmarks\n\nbefore\n\n<!-- latest-results: begin. notes -->\n")
    assert text.endswith("<!-- latest-results: end -->\n\nafter\n")
    assert "old table" not in text
    assert "### In memory" in text and "| 4.2x |" in text
    assert "![" in text and "(benchmarks/latency.png)" in text
    for name in CHARTS:
        assert (tmp_path / "benchmarks" / name).read_bytes().startswith(PNG_MAGIC)


def test_publish_refuses_a_quick_run(tmp_path: Path) -> None:
    doc = small_results()
    doc["meta"]["quick"] = True
    saved = tmp_path / "results.json"
    saved.write_text(json.dumps(doc))
    page = tmp_path / "page.md"
    page.write_text("<!-- latest-results: begin -->\n<!-- latest-results: end -->\n")
    with pytest.raises(SystemExit):
        main([str(saved), "--out", str(tmp_path / "run"), "--publish", "--page", str(page)])
    assert page.read_text() == "<!-- latest-results: begin -->\n<!-- latest-results: end -->\n"


def floor_results() -> dict[str, Any]:
    """mcptrio, the SDK, mcptrio stateless and the floor; HTTP JSON `call` x16 set by hand."""
    doc = synthetic_results(
        libs=("mcptrio", "sdk", "mcptrio-stateless", "floor"),
        transports=("in-memory", "http-json", "websocket"),
        repeat=1,
    )
    for lib, rate, cpu in (
        ("mcptrio", 12_000.0, 100.0),
        ("mcptrio-stateless", 9_000.0, 105.0),
        ("sdk", 2_000.0, 400.0),
        ("floor", 30_000.0, 25.0),
    ):
        cell = _cell(doc, lib, "http-json", "call", "x16")
        cell["calls_per_s"], cell["cpu_us_per_call"] = rate, cpu
    add_speedups(doc["cells"])
    return doc


def test_the_floor_is_a_column_beside_the_libraries_and_each_mcptrio_cell_a_share_of_it() -> None:
    markdown = format_markdown(floor_results())
    assert "- floor: no library: the least each transport costs" in markdown
    http = markdown.split("## Streamable HTTP, JSON", 1)[1].split("\n## ", 1)[0]
    assert http.splitlines()[2] == (
        "| workload | load | mcptrio | SDK | floor | vs SDK | mcptrio of floor |"
    )
    row = _row(markdown, "Streamable HTTP, JSON", "call", "x16")
    assert "| 30,000/s · " in row and row.endswith("| 6.0x | 40% |")
    assert "vs floor" not in markdown
    # No floor over WebSocket: neither its column nor a share.
    websocket = markdown.split("## WebSocket", 1)[1].split("\n## ", 1)[0]
    assert websocket.splitlines()[2] == "| workload | load | mcptrio |"
    stateless = markdown.split("## Stateless era", 1)[1].split("\n## ", 1)[0]
    (stateless_row,) = [
        ln for ln in stateless.splitlines() if ln.startswith("| http-json | `call` | x16 |")
    ]
    assert stateless_row.endswith("| 0.75x | 30% |")


def test_the_targets_of_issue_42_are_measured_against_the_floor() -> None:
    doc = floor_results()
    targets = format_markdown(doc).split("## Targets", 1)[1]
    assert "| 42 | Streamable HTTP (JSON), `call`, 16 connections: ≥ 50% of the floor | 40% |" in (
        targets
    )
    assert "| 42 | the same, stateless era: ≥ 50% of the floor | 30% | **not met** |" in targets
    assert "stateless era ≤ 1.1x the handshake era's | 1.05x | **met** |" in targets
    assert "| 42 | in-memory, `call` x100: ≥ 15x the official SDK |" in targets
    # Issue 42's memory bounds are stated for 10,000 sessions: 1,000 do not measure them.
    assert "with 10,000 sessions (`--capacity-sessions 10000`) | \u2013 | **not measured** |" in (
        targets
    )
    doc["capacity"][0]["sessions"] = 10_000
    targets = format_markdown(doc).split("## Targets", 1)[1]
    assert "with 10,000 sessions (`--capacity-sessions 10000`) | 3.4 KiB | **met** |" in targets


def test_charts_mark_the_floor_and_draw_no_bar_for_it() -> None:
    from benchmarks.report.charts import latency_chart, throughput_chart

    doc = floor_results()
    for fig in (throughput_chart(doc), latency_chart(doc)):
        labels = [text.get_text() for legend in fig.legends for text in legend.get_texts()]
        assert labels[-1] == "floor: the transport, no MCP work"
        assert not any(label.startswith("floor ") for label in labels)
    texts = [t.get_text() for ax in throughput_chart(doc).axes for t in ax.texts]
    assert any(text.startswith("floor ") and "mcptrio " in text for text in texts)
