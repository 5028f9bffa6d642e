"""The official conformance suite's client scenarios, driving examples/everything_client.py.

Each scenario runs on its own (``conformance client --scenario X``): run together, the timing
checks of ``sse-retry`` fail from CPU contention alone on a small machine. Every scenario must
pass with no failure and no warning.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from real_servers import (
    LOCALHOST_ONLY,
    NODE_BIN,
    ROOT,
    check_conformance_passes,
    node_env,
    require_interop,
)

CONFORMANCE = NODE_BIN / "conformance"
require_interop(CONFORMANCE, NODE_BIN / "node", LOCALHOST_ONLY)

CLIENT = ROOT / "examples" / "everything_client.py"
SCENARIOS = ("initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry")


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_client_scenario_passes_without_warnings(scenario: str, tmp_path: Path) -> None:
    # A synchronous test: the suite runs the client itself and judges it; subprocess.run's
    # timeout is this test's deadline.
    check_conformance_passes(
        "client", "--command", f"{sys.executable} {CLIENT}", "--scenario", scenario, output=tmp_path
    )


def run_client_in(scenario: str) -> subprocess.CompletedProcess[str]:
    """The example client, told by the suite's variable to play ``scenario`` against a port
    nothing listens on."""
    return subprocess.run(
        [sys.executable, str(CLIENT), "http://127.0.0.1:9/mcp"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**node_env(), "MCP_CONFORMANCE_SCENARIO": scenario},
    )


def test_unknown_scenario_exits_2_with_a_message() -> None:
    completed = run_client_in("no-such-scenario")
    assert completed.returncode == 2
    assert "unknown scenario 'no-such-scenario'" in completed.stderr


def test_an_auth_scenario_the_client_cannot_complete_exits_1_with_the_reason() -> None:
    # Every auth/* scenario logs in with the authorization-code grant unless it names another;
    # nothing listens on port 9, so the failure is the connection's.
    completed = run_client_in("auth/a-future-scenario")
    assert completed.returncode == 1, completed.stderr
    assert "scenario auth/a-future-scenario failed" in completed.stderr
