"""The shipped lifespan example (``examples/lifespan.py``) prints what the how-to shows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_lifespan_program_prints_what_the_howto_shows() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "lifespan.py")],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "counter: store opened",
        "visits: {'result': 1}",
        "visits: {'result': 2}",
        "counter: store closed, counts {'visits': 2}",
        "served and stopped",
    ]
