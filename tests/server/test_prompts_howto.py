"""The prompts and completion how-tos run as written and print what they say they print.

Each python block of docs/how-to/prompts.md and docs/how-to/completion.md is a whole program
whose first line names it (``# review_prompt.py``); the ``text`` block right after it is its
expected output.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

HOW_TO = Path(__file__).resolve().parents[2] / "docs" / "how-to"
_BLOCK = re.compile(r"```python\n(.*?)```\s*```text\n(.*?)```", re.S)


def programs(page: str) -> list[tuple[str, str, str]]:
    """(file name, source, expected output) of every program on a how-to page."""
    text = (HOW_TO / page).read_text(encoding="utf-8")
    found = []
    for source, output in _BLOCK.findall(text):
        header = re.match(r"# (\S+\.py)\n", source)
        assert header, f"{page}: a python block must start with '# name.py':\n{source[:80]}"
        found.append((header.group(1), source, output))
    # Every python block on the page is one of the programs checked here.
    assert len(found) == text.count("```python"), f"{page}: a python block has no output block"
    return found


CASES = [
    pytest.param(page, name, source, output, id=name)
    for page in ("prompts.md", "completion.md")
    for name, source, output in programs(page)
]


def test_every_how_to_has_its_programs() -> None:
    names = [case.id for case in CASES]
    assert names == [
        "review_prompt.py",
        "typed_prompt.py",
        "debug_prompt.py",
        "context_prompt.py",
        "completion_demo.py",
        "completion_handler.py",
    ]


@pytest.mark.parametrize(("page", "name", "source", "output"), CASES)
def test_how_to_program_prints_what_the_page_says(
    page: str, name: str, source: str, output: str, tmp_path: Path
) -> None:
    (tmp_path / name).write_text(source, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, name], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, f"{page} {name} failed:\n{run.stderr}"
    assert run.stdout.splitlines() == output.splitlines()
