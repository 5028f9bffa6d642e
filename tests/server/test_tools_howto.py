"""The tools how-to runs as written and prints what it says it prints.

Each python block of docs/how-to/write-tools.md is a whole program whose first line names it
(``# first_tool.py``); the ``text`` block right after it is its expected output.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "write-tools.md"
_BLOCK = re.compile(r"```python\n(.*?)```\s*```text\n(.*?)```", re.S)


def programs() -> list[tuple[str, str, str]]:
    """(file name, source, expected output) of every program on the page."""
    text = PAGE.read_text(encoding="utf-8")
    found = []
    for source, output in _BLOCK.findall(text):
        header = re.match(r"# (\S+\.py)\n", source)
        assert header, f"a python block must start with '# name.py':\n{source[:80]}"
        found.append((header.group(1), source, output))
    assert len(found) == text.count("```python"), "a python block has no output block"
    return found


CASES = [pytest.param(name, source, output, id=name) for name, source, output in programs()]


def test_the_page_has_every_program() -> None:
    assert [case.id for case in CASES] == [
        "first_tool.py",
        "parameters.py",
        "results.py",
        "structured.py",
        "errors.py",
        "context_tool.py",
        "metadata.py",
    ]


@pytest.mark.parametrize(("name", "source", "expected"), CASES)
def test_program_prints_what_the_page_says(
    name: str, source: str, expected: str, tmp_path: Path
) -> None:
    (tmp_path / name).write_text(source, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, name], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == expected
