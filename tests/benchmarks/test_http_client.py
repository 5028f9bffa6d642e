"""The HTTP client benchmark's figures: a process's CPU from /proc, and the tables."""

from __future__ import annotations

import os
import time

from benchmarks.http_client import server_cpu_s, table


def test_server_cpu_counts_the_cpu_time_a_process_spends() -> None:
    before = server_cpu_s(os.getpid())
    deadline = time.process_time() + 0.05
    while time.process_time() < deadline:
        pass
    # /proc counts in clock ticks: at least one of them passed in 50 ms of CPU.
    assert server_cpu_s(os.getpid()) > before


def _cell(era: str, load: int, rate: float, client_us: float) -> dict[str, float | int | str]:
    return {
        "era": era,
        "load": load,
        "calls_per_s": rate,
        "client_us": client_us,
        "server_us": 100.0,
    }


def test_table_gives_medians_the_client_over_server_ratio_and_x32_over_x1() -> None:
    records = [_cell("handshake", 1, rate, 150.0) for rate in (900.0, 1000.0, 1100.0)]
    records += [_cell("handshake", 32, 3000.0, 120.0)]
    lines = table({"new": records}, ["handshake"], [1, 32]).splitlines()
    assert "| new | handshake | x1 | 1,000 | 150 | 100 | 1.50 |" in lines
    assert "| new | handshake | 3.00 |" in lines


def test_a_comparison_adds_the_ratios_new_over_old() -> None:
    old = [_cell("stateless", 1, 1000.0, 200.0)]
    new = [_cell("stateless", 1, 1500.0, 150.0)]
    lines = table({"old": old, "new": new}, ["stateless"], [1]).splitlines()
    assert "| stateless | x1 | 1.50 | 0.75 |" in lines
