"""The how-to "Serve over HTTP" runs as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

HOWTO = Path(__file__).resolve().parents[3] / "docs" / "how-to" / "serve-over-http.md"

EXPECTED = {
    "serve_builtin.py": ["5"],
    "serve_several.py": ["sunny in Oslo", "42"],
    "serve_hypercorn.py": ["42"],
    "quart_mount.py": ["HI"],
}


def _programs() -> dict[str, str]:
    text = HOWTO.read_text()
    return dict(re.findall(r"```python\n# (\S+\.py)\n(.*?)```", text, re.S))


def test_the_howto_has_every_program() -> None:
    assert list(_programs()) == list(EXPECTED)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_serve_over_http_program_runs(name: str, tmp_path: Path) -> None:
    (tmp_path / name).write_text(_programs()[name])
    done = subprocess.run(
        [sys.executable, name], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == EXPECTED[name]
