"""The capacity benchmark produces every figure (sizes and timings are never asserted)."""

from __future__ import annotations

from benchmarks.capacity import measure

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
