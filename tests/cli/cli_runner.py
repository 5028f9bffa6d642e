"""Running the ``mcptrio`` command as a user would: a subprocess, ``python -m mcptrio``.

mcptrio is not installed into the test virtualenv, so the subprocess gets this checkout on
``PYTHONPATH`` (``.ci/run`` installs the package, where the ``mcptrio`` script exists as well).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / "examples" / "everything_server.py"


def mcptrio_env() -> dict[str, str]:
    """Our environment, with this checkout importable."""
    paths = [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)

    @property
    def error_line(self) -> str:
        """stderr, which must be exactly one line."""
        lines = self.stderr.splitlines()
        assert len(lines) == 1, f"expected one line on stderr, got:\n{self.stderr}"
        return lines[0]


async def mcptrio(
    *args: str | os.PathLike[str],
    cwd: Path = ROOT,
    timeout: float = 60,
    env: dict[str, str] | None = None,
) -> Ran:
    """Run ``python -m mcptrio ARGS`` to its end (``env``: variables added to ours)."""
    with trio.fail_after(timeout):
        done = await trio.run_process(
            [sys.executable, "-m", "mcptrio", *map(str, args)],
            cwd=cwd,
            env={**mcptrio_env(), **(env or {})},
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    return Ran(done.returncode, done.stdout.decode(), done.stderr.decode())


@asynccontextmanager
async def served(
    *args: str | os.PathLike[str], cwd: Path = ROOT, command: str = "run"
) -> AsyncIterator[str]:
    """``mcptrio COMMAND ARGS`` (``run``, ``gateway``) in the background; yields the URL it
    prints on stderr."""
    async with trio.open_nursery() as nursery:
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "mcptrio", command, *map(str, args)],
            cwd=cwd,
            env=mcptrio_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            assert process.stderr is not None
            received = b""
            # Hypercorn announces itself too: the line to read is mcptrio's own.
            with trio.fail_after(30):
                while not (announced := announced_url(received)):
                    chunk = await process.stderr.receive_some()
                    assert chunk, f"mcptrio run ended before serving: {received.decode()}"
                    received += chunk
            # Keep reading stderr so that the server never blocks on a full pipe.
            nursery.start_soon(_drain, process.stderr)
            yield announced
        finally:
            with trio.CancelScope(shield=True):
                process.terminate()
                with trio.move_on_after(5) as waited:
                    await process.wait()
                if waited.cancelled_caught:
                    process.kill()
                    await process.wait()
            nursery.cancel_scope.cancel()


def announced_url(received: bytes | bytearray) -> str | None:
    """The URL of a complete ``Serving NAME over TRANSPORT at URL`` line, if one came."""
    for line in received.decode(errors="replace").splitlines(keepends=True):
        if line.startswith("Serving ") and line.endswith("\n"):
            return line.split()[-1]
    return None


async def _drain(stream: trio.abc.ReceiveStream) -> None:
    while await stream.receive_some():
        pass
