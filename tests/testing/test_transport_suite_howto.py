"""docs/how-to/test-your-transport.md: its example runs the suite against a transport of its
own as written, with the outcome the page shows, and its table names every check."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from mcptrio.testing import CHECKS

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "how-to" / "test-your-transport.md"


def test_the_example_passes_as_the_page_shows(tmp_path: Path) -> None:
    page = PAGE.read_text(encoding="utf-8")
    programs = re.findall(r"```python\n# (\S+\.py)\n(.*?)```", page, re.S)
    assert [name for name, _ in programs] == ["tcp_transport.py", "test_tcp_transport.py"]
    for name, source in programs:
        (tmp_path / name).write_text(source, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\ntrio_mode = true\n")
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    run = subprocess.run(
        [*pytest, "-W", "error", "test_tcp_transport.py"],
        cwd=tmp_path,
        # This checkout's mcptrio, whichever is installed.
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    shown = re.search(
        r"```text\n\$ python -m pytest -q test_tcp_transport.py\n(.*?)```", page, re.S
    )
    assert shown is not None
    dots, summary = shown.group(1).splitlines()
    assert run.stdout.splitlines()[0].split()[0] == dots.split()[0]
    assert summary.rsplit(" in ", 1)[0] in run.stdout


def test_the_page_describes_every_check() -> None:
    page = PAGE.read_text(encoding="utf-8")
    described = re.findall(r"^\| `(\w+)` \|", page, re.M)
    assert described == [check.name for check in CHECKS]
