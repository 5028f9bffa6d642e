"""The conformance suite's authorization-server scenarios against mcptrio's development server.

``conformance authorization`` (0.2.0-alpha.12 and later) tests an OAuth authorization server
rather than an MCP peer: ``authorization-server-metadata-endpoint`` reads its RFC 8414 metadata,
and ``authorization-code-grant`` plays a client of the code grant with PKCE. For the second it
opens a callback server on ``--port``, prints the authorization URL, and waits for a person to
log in in a browser. Here that person is played headlessly: the development server (started
with a client pre-registered for that callback, approving at once) answers the printed URL with
a redirect to the callback, which this script follows.

Used by ``scripts/conformance.py``; it needs only the standard library.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Protocol

#: The suite's authorization-server scenarios, which one ``conformance authorization`` runs.
SCENARIOS = ("authorization-server-metadata-endpoint", "authorization-code-grant")
CLIENT_ID = "conformance-client"
#: The resource the token is asked for (RFC 8707): no MCP server needs to listen there.
RESOURCE = "http://127.0.0.1:9/mcp"
START_DEADLINE = 30.0
RUN_DEADLINE = 120.0


class Starter(Protocol):
    def start(
        self, command: Sequence[str], *, env: dict[str, str], output: IO[bytes]
    ) -> subprocess.Popen[bytes]: ...

    def stop(self, process: subprocess.Popen[bytes]) -> None: ...


def free_port() -> int:
    """A loopback port free a moment ago (the suite's callback server binds it by number)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _wait_for(log: Path, pattern: str, process: subprocess.Popen[bytes], what: str) -> str:
    deadline = time.monotonic() + START_DEADLINE
    while True:
        match = re.search(pattern, log.read_text(errors="replace"), re.MULTILINE)
        if match:
            return match.group(0)
        if process.poll() is not None or time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"{what} did not show up (see {log}):\n{tail}")
        time.sleep(0.05)


def run_authorization_suite(
    processes: Starter,
    command: Callable[..., list[str]],
    env: dict[str, str],
    results: Path,
) -> int:
    """Run ``conformance authorization`` against a fresh development server; its exit code.

    The checks land in ``results`` (``authorization-server-<scenario>-<timestamp>/``); the
    server's and the suite's output in ``results/server.log`` and ``results/harness.log``.
    """
    port = free_port()
    server_log = results / "server.log"
    with server_log.open("wb") as output:
        server = processes.start(
            [
                sys.executable,
                "-m",
                "mcptrio.auth.dev_server",
                "--client-id",
                CLIENT_ID,
                "--redirect-uri",
                f"http://127.0.0.1:{port}/callback",
            ],
            env=env,
            output=output,
        )
    try:
        issuer = _wait_for(server_log, r"^http://127\.0\.0\.1:\d+$", server, "the issuer URL")
        harness_log = results / "harness.log"
        with harness_log.open("wb") as output:
            suite = processes.start(
                command(
                    "authorization",
                    "--url",
                    issuer,
                    "--client-id",
                    CLIENT_ID,
                    "--port",
                    str(port),
                    "--resource",
                    RESOURCE,
                    "-o",
                    str(results),
                ),
                env=env,
                output=output,
            )
        try:
            url = _wait_for(
                harness_log, "^" + re.escape(issuer) + r"/authorize\?\S+$", suite, "the login URL"
            )
            _wait_for(harness_log, "Callback server started", suite, "the callback server")
            # The "browser": the development server redirects to the suite's callback at once.
            with urllib.request.urlopen(url, timeout=10) as answer:
                answer.read()
            return suite.wait(timeout=RUN_DEADLINE)
        finally:
            processes.stop(suite)
    finally:
        processes.stop(server)
