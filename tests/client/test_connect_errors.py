"""Why a connection failed during the handshake, as :func:`mcptrio.open_client` raises it: a
stdio server that exited is named by its exit code and the last words of its stderr."""

from __future__ import annotations

import signal
import ssl
import sys
from pathlib import Path

import pytest
import trio

from mcptrio.client import open_client
from mcptrio.protocol.errors import ConnectionClosed
from mcptrio.transports.http.engine.client_connect import connect_failure
from mcptrio.transports.stdio import exit_message


async def test_a_server_that_exits_at_start_raises_its_exit_code_and_last_line(
    tmp_path: Path,
) -> None:
    script = tmp_path / "server.py"
    script.write_text("import missing_dependency_of_the_server\n")
    with trio.fail_after(30), pytest.raises(ConnectionClosed) as raised:
        async with open_client([sys.executable, script]):
            pass  # pragma: no cover - never connected
    assert raised.value.message == (
        "the server exited with code 1: ModuleNotFoundError: No module named"
        " 'missing_dependency_of_the_server'"
    )


NODE_CRASH = [
    "/srv/server.js:3",
    "throw new Error('no token')",
    "^",
    "",
    "Error: no token",
    "    at Object.<anonymous> (/srv/server.js:3:7)",
    "    at node:internal/main/run_main_module:28:49",
    "",
    "Node.js v20.11.0",
]


@pytest.mark.parametrize(
    ("returncode", "tail", "message"),
    [
        (
            2,
            ["usage: server [-h]", "server: error: unrecognized arguments: --bad"],
            "the server exited with code 2: server: error: unrecognized arguments: --bad",
        ),
        (1, NODE_CRASH, "the server exited with code 1: Error: no token"),
        (-signal.SIGKILL, [], "the server was killed by SIGKILL (nothing on stderr)"),
        (0, ["", "   "], "the server exited with code 0 (nothing on stderr)"),
        (1, ["x" * 1000], f"the server exited with code 1: {'x' * 297}..."),
    ],
    ids=["last-line", "node-crash", "signal", "blank-stderr", "long-line"],
)
def test_the_exit_message_quotes_the_last_unindented_line(
    returncode: int, tail: list[str], message: str
) -> None:
    assert exit_message(returncode, tail) == message


def _broken_by(cause: BaseException) -> trio.BrokenResourceError:
    """What a failed TLS handshake raises: Trio's error, OpenSSL's as its cause."""
    broken = trio.BrokenResourceError()
    broken.__cause__ = cause
    return broken


def _verify_failure() -> ssl.SSLCertVerificationError:
    failure = ssl.SSLCertVerificationError(1, "certificate verify failed")
    failure.verify_message = "self-signed certificate"
    return failure


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (
            _broken_by(_verify_failure()),
            "TLS handshake failed: certificate verify failed (self-signed certificate)",
        ),
        (trio.BrokenResourceError(), "TLS handshake failed: the server closed the connection"),
        (ConnectionRefusedError(111, "Connection refused"), "[Errno 111] Connection refused"),
    ],
    ids=["certificate", "closed-during-handshake", "refused"],
)
def test_a_connect_failure_says_why_in_words(error: BaseException, reason: str) -> None:
    assert connect_failure(error) == reason
