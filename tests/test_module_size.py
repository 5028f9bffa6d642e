"""No module of the package grows past 600 lines: one concept per module, split by concept
before it does (the project's rule, and issue 35's)."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "mcptrio"
MAX_LINES = 600


def test_no_module_is_over_600_lines() -> None:
    sizes = {
        path.relative_to(PACKAGE.parent).as_posix(): len(path.read_text("utf-8").splitlines())
        for path in PACKAGE.rglob("*.py")
    }
    assert sizes, "no module found"
    over = {name: lines for name, lines in sizes.items() if lines > MAX_LINES}
    assert not over, f"modules over {MAX_LINES} lines: {over}"
