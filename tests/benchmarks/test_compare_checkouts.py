"""The two-checkout comparison's table: medians per side and the ratio new / old."""

from __future__ import annotations

from benchmarks.compare_checkouts import table


def test_table_gives_each_sides_median_and_the_ratio_new_over_old() -> None:
    old = {("in-memory", "call", "x1"): [100.0, 300.0, 200.0]}
    new = {("in-memory", "call", "x1"): [190.0, 210.0, 250.0]}
    lines = table(old, new).splitlines()
    assert lines[2] == "| in-memory | call | x1 | 200 | 210 | 1.050 |"


def test_a_cell_only_one_side_measured_has_no_ratio() -> None:
    lines = table({("stdio", "call", "x32"): [10.0]}, {}).splitlines()
    assert lines[2] == "| stdio | call | x32 | 10 | 0 | - |"
