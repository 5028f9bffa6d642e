"""The payload sweep (``python -m benchmarks --sweep``): its cells, its floor, its table.

No timing is asserted: the floor is checked for being a figure, the table with made-up ones.
"""

from __future__ import annotations

from synthetic_results import synthetic_results

from benchmarks.__main__ import parse_args
from benchmarks.floor import floor_us
from benchmarks.harness import WrongAnswer, check_blob
from benchmarks.matrix import FIXTURES, SWEEP_SIZES, SWEEP_WORKLOADS, WORKLOADS, cells_for
from benchmarks.orchestrate import plan
from benchmarks.report import format_markdown
from benchmarks.report.formatting import NOT_MEASURED
from benchmarks.servers.fixtures import BLOB_URI, SWEEP_BLOBS


def test_sweep_reads_one_resource_per_size_from_1_kib_to_1_mib() -> None:
    assert SWEEP_SIZES == {
        "read-1k": 1024,
        "read-10k": 10_240,
        "read-100k": 102_400,
        "read-1m": 1_048_576,
    }
    uris = {FIXTURES[w][1]["uri"] for w in SWEEP_WORKLOADS}
    assert uris == {"bench://blob/1k", "bench://blob/10k", BLOB_URI, "bench://blob/1m"}
    served = {uri: len(text) for uri, _, text in SWEEP_BLOBS}
    assert served == {
        "bench://blob/1k": 1024,
        "bench://blob/10k": 10_240,
        "bench://blob/1m": 1 << 20,
    }


def test_sweep_workloads_run_at_one_caller_only_and_not_in_the_default_matrix() -> None:
    cells = cells_for("mcptrio", "stdio")
    assert [load for w, load in cells if w == "read-1m"] == ["x1"]
    assert [load for w, load in cells if w == "read-100k"] == ["x1", "x32", "x100"]
    default = {w for tp in plan(("mcptrio", "sdk")) for w, _ in tp.cells}
    assert default == set(WORKLOADS)


def test_sweep_option_selects_the_sweep_without_capacity() -> None:
    args = parse_args(["--sweep", "--quick"])
    assert args.workloads == list(SWEEP_WORKLOADS)
    assert args.loads == ["x1"]
    assert args.libs == ["mcptrio", "sdk"]
    assert args.no_capacity
    narrowed = parse_args(["--sweep", "--quick", "--transports", "stdio", "--libs", "mcptrio"])
    assert narrowed.transports == ["stdio"] and narrowed.libs == ["mcptrio"]
    assert parse_args([]).workloads == list(WORKLOADS)


def test_a_wrong_blob_is_a_wrong_answer() -> None:
    check_blob("y" * 1024, "read-1k")
    for wrong in ("y" * 1023, "y" * 1023 + "z", None):
        try:
            check_blob(wrong, "read-1k")
        except WrongAnswer as error:
            assert "bench://blob/1k" in str(error)
        else:
            raise AssertionError(f"{wrong!r} passed the check")


def test_floor_is_a_positive_figure_per_workload() -> None:
    assert floor_us("read-1k", batches=1, batch_s=0.001) > 0


def test_report_sets_each_library_beside_the_floor() -> None:
    results = synthetic_results(
        libs=("mcptrio", "sdk"), transports=("stdio",), workloads=SWEEP_WORKLOADS
    )
    results["sweep"] = {"floor_us": {"read-1k": 2.0, "read-10k": 8.0, "read-100k": 80.0}}
    cells = {(c["lib"], c["workload"], c["load"]): c for c in results["cells"]}
    cells["mcptrio", "read-100k", "x1"]["p50_us"] = 200.0  # 2.5x the floor
    cells["sdk", "read-100k", "x1"]["p50_us"] = 1000.0
    text = format_markdown(results)
    section = text.split("## Payload sweep", 1)[1].split("\n## ", 1)[0]
    assert "| size | mcptrio | SDK | floor | vs SDK | over floor |" in section
    (row,) = [line for line in section.splitlines() if line.startswith("| 100 KiB |")]
    assert row == "| 100 KiB | 200 µs | 1.00 ms | 80 µs | 5.0x | 2.5x |"
    (row_1m,) = [line for line in section.splitlines() if line.startswith("| 1 MiB |")]
    assert f"| {NOT_MEASURED} |" in row_1m  # no floor measured for it


def test_report_has_no_sweep_section_without_sweep_cells() -> None:
    results = synthetic_results(libs=("mcptrio", "sdk"), transports=("stdio",))
    assert "## Payload sweep" not in format_markdown(results)
