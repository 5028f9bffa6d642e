"""The official conformance suite's client scenarios, driving examples/everything_client.py.

Each scenario runs on its own (``conformance client --scenario X``): run together, the timing
checks of ``sse-retry`` fail from CPU contention alone on a small machine. Every scenario must
pass with no failure and no warning.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from real_servers import INTEROP, LOCALHOST_ONLY, NODE_BIN, ROOT, node_env, require_interop

CONFORMANCE = NODE_BIN / "conformance"
require_interop(CONFORMANCE, NODE_BIN / "node", LOCALHOST_ONLY)

CLIENT = ROOT / "examples" / "everything_client.py"
SCENARIOS = ("initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry")


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_client_scenario_passes_without_warnings(scenario: str, tmp_path: Path) -> None:
    # A synchronous test: the suite runs the client itself and judges it; subprocess.run's
    # timeout is this test's deadline.
    completed = subprocess.run(
        [
            str(CONFORMANCE),
            "client",
            "--command",
            f"{sys.executable} {CLIENT}",
            "--scenario",
            scenario,
            "-o",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=node_env(),
        cwd=INTEROP,
    )
    checks = [
        check for path in tmp_path.glob("*/checks.json") for check in json.loads(path.read_text())
    ]
    client_stderr = "".join(path.read_text() for path in tmp_path.glob("*/stderr.txt"))
    assert completed.returncode == 0, completed.stdout + completed.stderr + client_stderr
    assert any(check["status"] == "SUCCESS" for check in checks), checks
    bad = [check for check in checks if check["status"] not in ("SUCCESS", "INFO")]
    assert bad == [], bad


def test_unknown_scenario_exits_2_with_a_message() -> None:
    completed = subprocess.run(
        [sys.executable, str(CLIENT), "http://127.0.0.1:9/mcp"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**node_env(), "MCP_CONFORMANCE_SCENARIO": "no-such-scenario"},
    )
    assert completed.returncode == 2
    assert "unknown scenario 'no-such-scenario'" in completed.stderr


def test_an_auth_scenario_the_client_cannot_complete_exits_1_with_the_reason() -> None:
    # Every auth/* scenario logs in with the authorization-code grant unless it names another;
    # nothing listens on port 9, so the failure is the connection's.
    completed = subprocess.run(
        [sys.executable, str(CLIENT), "http://127.0.0.1:9/mcp"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**node_env(), "MCP_CONFORMANCE_SCENARIO": "auth/a-future-scenario"},
    )
    assert completed.returncode == 1, completed.stderr
    assert "scenario auth/a-future-scenario failed" in completed.stderr
