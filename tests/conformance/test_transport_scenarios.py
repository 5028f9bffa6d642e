"""The official conformance suite's transport scenarios, against the everything server.

``server-sse-multiple-streams``, ``server-sse-polling`` and ``dns-rebinding-protection`` must
pass with no warnings on the built-in front end with either parser. The suite comes from
``interop/`` (``npm install --prefix interop``, done by ``.ci/run``); without it these tests
skip, unless ``MCPTRIO_REQUIRE_INTEROP=1`` makes its absence a failure.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from client.real_servers import require_interop

ROOT = Path(__file__).resolve().parents[2]
INTEROP = ROOT / "interop"
BIN = INTEROP / "node_modules" / ".bin"
SCENARIOS = ("server-sse-multiple-streams", "server-sse-polling", "dns-rebinding-protection")

require_interop(BIN / "conformance")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(params=["h11", "httptools"])
def server_url(request: pytest.FixtureRequest) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "examples" / "everything_server.py"),
            "--transport",
            "http",
            "--port",
            str(port),
            "--parser",
            request.param,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the server did not start: {process.stderr}") from None
                time.sleep(0.05)
        yield f"http://localhost:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_transport_scenario_passes_without_warnings(
    server_url: str, scenario: str, tmp_path: Path
) -> None:
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "NODE_OPTIONS": f"--require {INTEROP / 'localhost-only.cjs'}",
    }
    completed = subprocess.run(
        [
            str(BIN / "conformance"),
            "server",
            "--url",
            server_url,
            "--scenario",
            scenario,
            "-o",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=INTEROP,
    )
    checks = [
        check for path in tmp_path.glob("*/checks.json") for check in json.loads(path.read_text())
    ]
    assert completed.returncode == 0, completed.stdout + completed.stderr
    statuses = [check["status"] for check in checks]
    assert "SUCCESS" in statuses, checks
    bad = [c for c in checks if c["status"] not in ("SUCCESS", "INFO")]
    assert bad == [], bad
