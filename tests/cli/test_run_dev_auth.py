"""``mcptrio run --auth dev``: a protected server with its development authorization server
beside it, for local use, that ``mcptrio call --login`` and the official SDK's OAuth client log
in to by themselves (issue 39, item 1)."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
from cli_runner import mcptrio
from programs import free_port
from redis_servers import RedisServer
from test_login import User
from test_login_to_a_deployment import sdk_whoami
from test_run_serving_options import discover
from test_run_workers import SERVER, supervised

pytest.importorskip("mcptrio.auth.dev_server")
pytest.importorskip("mcp")

from oauth_servers import HeadlessBrowser, MemoryStorage, oauth_provider


def issuer_announced(stderr: bytes | bytearray) -> str:
    """The URL of the ``Development authorization server at URL`` line."""
    for line in stderr.decode().splitlines():
        if line.startswith("Development authorization server at "):
            return line.split()[4]
    raise AssertionError(f"no authorization server announced: {stderr.decode()}")


async def test_auth_dev_serves_a_protected_endpoint_that_call_login_uses(tmp_path: Path) -> None:
    user = User(tmp_path)
    port = free_port()
    with trio.fail_after(90):
        async with supervised("--port", str(port), "--auth", "dev") as server:
            assert server.url == f"http://127.0.0.1:{port}/mcp"
            issuer = issuer_announced(server.stderr)
            assert issuer.startswith("http://127.0.0.1:")
            status, headers, _ = await discover(server.url)
            assert status == 401
            assert headers[b"www-authenticate"].startswith(b"Bearer ")

            called = await user.mcptrio("call", server.url, "whoami", "--login")
            assert called.code == 0, called.stderr
            again = await user.mcptrio("call", server.url, "whoami")
            assert (again.code, again.stderr) == (0, "")
            assert user.browser_visits() == 1


async def test_auth_dev_with_workers_serves_the_sdk_client_and_call_login(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    user = User(tmp_path)
    port = free_port()
    with trio.fail_after(120):
        async with supervised(
            "--port", str(port), "--workers", "2", "--redis", redis_server.url, "--auth", "dev",
            "--scope", "mcp",
        ) as supervisor:  # fmt: skip
            url = supervisor.url
            assert url == f"http://127.0.0.1:{port}/mcp"
            called = await user.mcptrio("call", url, "whoami", "--login")
            assert called.code == 0, called.stderr
            # Both workers verify the supervisor's tokens: calls on new connections land on
            # either of them.
            workers: set[str] = set()
            while workers != {"w0", "w1"}:
                again = await user.mcptrio("call", url, "whoami")
                assert (again.code, again.stderr) == (0, "")
                workers.add(again.stdout.split()[0])
            assert user.browser_visits() == 1

            browser = HeadlessBrowser()
            assert await sdk_whoami(url, oauth_provider(url, browser, MemoryStorage()))
            assert len(browser.authorization_urls) == 1


async def test_auth_dev_logs_in_again_after_a_restart(tmp_path: Path) -> None:
    """A restart makes a new key and forgets registrations: the kept token is refused, and
    ``--login`` logs in again by itself."""
    user = User(tmp_path)
    port = free_port()
    with trio.fail_after(120):
        for visits in (1, 2):
            async with supervised("--port", str(port), "--auth", "dev") as server:
                called = await user.mcptrio("call", server.url, "whoami", "--login")
                assert called.code == 0, called.stderr
                assert user.browser_visits() == visits


@pytest.mark.parametrize(
    ("options", "line"),
    [
        (
            ["--host", "0.0.0.0", "--port", "8123", "--auth", "dev"],
            "mcptrio: error: --auth dev approves anyone, so it serves loopback only, not"
            " --host 0.0.0.0: use --auth jwt with a real authorization server",
        ),
        (
            ["--port", "0", "--auth", "dev"],
            "mcptrio: error: --auth dev needs a fixed --port (or --resource): tokens name the"
            " endpoint's URL",
        ),
        (
            ["--auth", "dev", "--issuer", "https://auth.example.com"],
            "mcptrio: error: --auth dev runs its own authorization server: drop --issuer",
        ),
        (
            ["--transport", "websocket", "--auth", "dev"],
            "mcptrio: error: --auth dev protects HTTP: serve --transport http (it takes"
            " WebSocket connections on the same endpoint, authorized), not --transport websocket",
        ),
    ],
)
async def test_auth_options_that_cannot_protect_are_one_line(options: list[str], line: str) -> None:
    transport = [] if "--transport" in options else ["--transport", "http"]
    with trio.fail_after(60):
        ran = await mcptrio("run", SERVER, *transport, *options)
    assert ran.code == 2
    assert ran.stderr.strip().splitlines() == [line]


async def test_auth_jwt_is_refused_on_the_websocket_transport() -> None:
    """The standalone WebSocket transport has no authorization: protecting it is refused,
    rather than serving it open."""
    with trio.fail_after(60):
        ran = await mcptrio(
            "run", SERVER, "--transport", "websocket", "--auth", "jwt",
            "--resource", "http://127.0.0.1:8000/mcp", "--issuer", "https://auth.example.com",
            "--jwks-url", "https://auth.example.com/jwks",
        )  # fmt: skip
    assert ran.code == 2
    assert ran.stderr.strip().startswith("mcptrio: error: --auth jwt protects HTTP:")
