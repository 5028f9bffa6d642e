"""The official conformance suite's transport scenarios, against the everything server.

``server-sse-multiple-streams``, ``server-sse-polling`` and ``dns-rebinding-protection`` must
pass with no warnings on the built-in front end with either parser. The suite comes from
``interop/`` (``npm install --prefix interop``, done by ``.ci/run``); without it these tests
skip, unless ``MCPTRIO_REQUIRE_INTEROP=1`` makes its absence a failure.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from client.real_servers import (
    NODE_BIN,
    ROOT,
    check_conformance_passes,
    require_interop,
    running_http_server,
)
from programs import free_port

SCENARIOS = ("server-sse-multiple-streams", "server-sse-polling", "dns-rebinding-protection")

require_interop(NODE_BIN / "conformance")


@pytest.fixture(params=["h11", "httptools"])
def server_url(request: pytest.FixtureRequest) -> Iterator[str]:
    port = free_port()
    command = [
        sys.executable,
        str(ROOT / "examples" / "everything_server.py"),
        "--transport",
        "http",
        "--port",
        str(port),
        "--parser",
        request.param,
    ]
    with running_http_server(command, port):
        yield f"http://localhost:{port}/mcp"


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_transport_scenario_passes_without_warnings(
    server_url: str, scenario: str, tmp_path: Path
) -> None:
    check_conformance_passes("server", "--url", server_url, "--scenario", scenario, output=tmp_path)
