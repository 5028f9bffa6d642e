"""The capacity benchmark produces every figure (sizes and timings are never asserted)."""

from __future__ import annotations

from benchmarks.capacity import measure
from benchmarks.capacity.held import held_idle

FIGURES = (
    "rss_idle_kib_per_session",
    "rss_get_stream_kib_per_session",
    "session_open_p50_us",
    "session_open_p99_us",
    "import_s",
    "stdio_start_s",
)


def test_quick_mcptrio_measurement_gives_every_figure() -> None:
    record = measure("mcptrio", sessions=20, quick=True)
    assert "error" not in record, record["error"]
    assert record["lib"] == "mcptrio"
    assert record["sessions"] == 20
    for figure in FIGURES:
        assert record.get(figure, 0) > 0, (figure, record)  # type: ignore[operator]


def test_the_held_sessions_cell_holds_every_session_asked_for_within_the_budget() -> None:
    record = measure("mcptrio", sessions=20, quick=True, held=300)
    assert "error" not in record, record["error"]
    assert record["held_sessions_asked"] == 300
    assert record["held_sessions"] == 300
    assert record["held_within_budget"] is True
    assert record.get("held_rss_mib", 0) > 0


def test_the_held_sessions_cell_stops_at_the_budget() -> None:
    # A budget no process fits in: the first batch passes it and the run stops there.
    cell = held_idle("mcptrio", 2500, budget_mib=1)
    assert cell.sessions == 1000
    assert cell.asked == 2500
    assert not cell.within_budget
