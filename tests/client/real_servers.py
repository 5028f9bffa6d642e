"""Finding and starting the real MCP peers (Node packages, the official SDK) the client tests use.

The Node packages come from ``interop/`` (``npm ci --prefix interop``, which ``.ci/run`` does).
Without them a test module calls :func:`require_interop`, which skips the module with the
reason printed, unless ``MCPTRIO_REQUIRE_INTEROP=1`` (set by CI) makes the absence a failure.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import pytest
from processes import stop_process

ROOT = Path(__file__).resolve().parents[2]
INTEROP = ROOT / "interop"
NODE_BIN = INTEROP / "node_modules" / ".bin"
EVERYTHING_SERVER = (
    INTEROP / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
)
#: Keeps every listener a Node process opens on 127.0.0.1.
LOCALHOST_ONLY = INTEROP / "localhost-only.cjs"


def require_interop(*paths: Path) -> None:
    """Skip the calling test module unless every path exists (fail under CI instead)."""
    missing = [str(path) for path in paths if not path.exists()]
    if missing:
        _skip_module(f"{', '.join(missing)} missing: run `npm ci --prefix interop`")


def require_module(name: str) -> None:
    """Skip the calling test module unless ``name`` imports (fail under CI instead)."""
    if importlib.util.find_spec(name) is None:
        _skip_module(
            f"the {name!r} package is missing: install the dev extra (pip install -e .[dev])"
        )


def _skip_module(reason: str) -> None:
    if os.environ.get("MCPTRIO_REQUIRE_INTEROP") == "1":
        raise RuntimeError(reason)
    print(f"skipping: {reason}", file=sys.stderr)
    pytest.skip(reason, allow_module_level=True)


def node() -> str:
    """The Node 22 binary from ``interop/`` (the system one may be older)."""
    return str(NODE_BIN / "node")


def node_env(**extra: str) -> dict[str, str]:
    """The environment for a Node process: Node 22 first on PATH, loopback-only listeners."""
    return {
        **os.environ,
        "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "NODE_OPTIONS": f"--require {LOCALHOST_ONLY}",
        **extra,
    }


def check_conformance_passes(*args: str, output: Path) -> None:
    """Run the official conformance suite (``conformance ARGS``, its results written under
    ``output``) and check that it passed: at least one check succeeded and every other was
    informational, with no failure and no warning. ``subprocess.run``'s timeout is the
    caller's deadline."""
    completed = subprocess.run(
        [str(NODE_BIN / "conformance"), *args, "-o", str(output)],
        capture_output=True,
        text=True,
        timeout=120,
        env=node_env(),
        cwd=INTEROP,
    )
    checks = [
        check for path in output.glob("*/checks.json") for check in json.loads(path.read_text())
    ]
    # A client scenario keeps the client's stderr next to its checks.
    client_stderr = "".join(path.read_text() for path in output.glob("*/stderr.txt"))
    assert completed.returncode == 0, completed.stdout + completed.stderr + client_stderr
    assert any(check["status"] == "SUCCESS" for check in checks), checks
    bad = [check for check in checks if check["status"] not in ("SUCCESS", "INFO")]
    assert bad == [], bad


@contextmanager
def running_http_server(
    command: Sequence[str], port: int, *, env: Mapping[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``command`` (an HTTP server that listens on ``port``) for the block.

    Synchronous, for module-scoped fixtures: a server starts once per test module and serves
    every test's sessions. Waits (30 s at most) until the port accepts connections; the process
    is terminated (killed after 5 s) when the block ends.
    """
    # stderr goes to a file, not a pipe nobody reads (a full pipe would stall the server).
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            list(command),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            env=dict(env) if env is not None else None,
            cwd=str(ROOT),
        )
        try:
            _wait_until_listening(process, port, errors)
            yield process
        finally:
            stop_process(process)


def _wait_until_listening(
    process: subprocess.Popen[bytes], port: int, errors: IO[bytes], timeout: float = 30.0
) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                process.wait(timeout=5)
                errors.seek(0)
                output = errors.read().decode(errors="replace")[-2000:]
                raise RuntimeError(
                    f"{process.args!r} did not start listening on {port}: {output}"
                ) from None
            time.sleep(0.05)
