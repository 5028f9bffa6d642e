"""The HTTP client benchmark's figures: a process's CPU and scheduled time from /proc, and the
tables."""

from __future__ import annotations

import os
import time

from benchmarks.http_client import scheduled_s, server_cpu_s, table


def test_server_cpu_counts_the_cpu_time_a_process_spends() -> None:
    before = server_cpu_s(os.getpid())
    deadline = time.process_time() + 0.05
    while time.process_time() < deadline:
        pass
    # /proc counts in clock ticks: at least one of them passed in 50 ms of CPU.
    assert server_cpu_s(os.getpid()) > before


def test_scheduled_time_counts_cpu_time_and_not_sleep() -> None:
    before = scheduled_s(os.getpid())
    time.sleep(0.3)
    slept = scheduled_s(os.getpid()) - before
    deadline = time.process_time() + 0.05
    while time.process_time() < deadline:
        pass
    busy = scheduled_s(os.getpid()) - before - slept
    # Asleep, a process is neither on a CPU nor in the run queue (but for the wake-up, which
    # waits for a CPU on a busy machine).
    assert slept < 0.15
    assert busy >= 0.05


def _cell(
    era: str, load: int, rate: float, client_us: float, server_us: float = 100.0
) -> dict[str, float | int | str]:
    return {
        "era": era,
        "load": load,
        "calls_per_s": rate,
        "client_us": client_us,
        "server_us": server_us,
        "client_blocked": 0.0 if load > 1 else 0.1,
        "server_blocked": 0.4,
    }


def test_table_gives_medians_the_client_over_server_ratio_and_x32_over_x1() -> None:
    records = [_cell("handshake", 1, rate, 150.0) for rate in (900.0, 1000.0, 1100.0)]
    records += [_cell("handshake", 32, 3000.0, 120.0)]
    lines = table({"new": records}, ["handshake"], [1, 32]).splitlines()
    assert "| new | handshake | x1 | 1,000 | 150 | 100 | 1.50 | 10% | 40% |" in lines
    assert "| new | handshake | x32 | 3,000 | 120 | 100 | 1.20 | 0% | 40% |" in lines
    # The ceiling: (150 + 100) µs a call at x1 over the busier process's 120 µs at x32.
    assert "| new | handshake | 3.00 | 2.08 |" in lines


def test_the_ceiling_is_bound_by_the_busier_process_at_x32() -> None:
    records = [_cell("stateless", 1, 1000.0, 100.0, 100.0)]
    records += [_cell("stateless", 32, 2000.0, 50.0, 100.0)]
    lines = table({"new": records}, ["stateless"], [1, 32]).splitlines()
    assert "| new | stateless | 2.00 | 2.00 |" in lines


def test_a_comparison_adds_the_ratios_new_over_old() -> None:
    old = [_cell("stateless", 1, 1000.0, 200.0)]
    new = [_cell("stateless", 1, 1500.0, 150.0)]
    lines = table({"old": old, "new": new}, ["stateless"], [1]).splitlines()
    assert "| stateless | x1 | 1.50 | 0.75 |" in lines
