"""The tutorial's code runs as written."""

from __future__ import annotations

import re
from pathlib import Path

from programs import run_python

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_tutorial_programs_run(tmp_path: Path) -> None:
    text = (DOCS / "tutorials" / "first-server.md").read_text()
    blocks = re.findall(r"```python\n# (\S+\.py)\n(.*?)```", text, re.S)
    assert [name for name, _ in blocks] == [
        "greet_server.py",
        "greet_in_memory.py",
        "greet_stdio.py",
    ]
    for name, body in blocks:
        (tmp_path / name).write_text(body)
    in_memory = run_python("greet_in_memory.py", cwd=tmp_path)
    assert in_memory.returncode == 0, in_memory.stderr
    assert in_memory.stdout.splitlines() == ["greeter 2026-07-28", "Hello, Ada!"]
    stdio = run_python("greet_stdio.py", cwd=tmp_path)
    assert stdio.returncode == 0, stdio.stderr
    assert stdio.stdout.splitlines() == ["['greet']", "Hello, Grace."]
