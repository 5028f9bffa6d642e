"""``mcptrio call --login``: an OAuth login through the browser, kept per server and refreshed
by the commands after it, against the development authorization server and a protected
mcptrio server; ``mcptrio logout`` forgets it.

The browser is ``browser_stand_in.py`` (through ``BROWSER``, which Python's ``webbrowser``
obeys): it logs in on the development server's form as a user would.
"""

from __future__ import annotations

import json
import shlex
import stat
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio
from cli_runner import mcptrio

pytest.importorskip("mcptrio.auth.dev_server")

from mcptrio.auth.dev_server import DevAuthorizationServer
from mcptrio.transports.http.endpoints.app import McpHttpApp
from mcptrio.transports.http.serve import serve_http

from oauth_servers import Protected, open_protected, protected_server

BROWSER = Path(__file__).with_name("browser_stand_in.py")
LIMIT = 90.0


class User:
    """A user's machine: a cache directory, and a browser that logs in as ada."""

    def __init__(self, home: Path) -> None:
        self.cache = home / "cache"
        self.visits = home / "browser.log"
        self.visits.touch()
        self.env = {
            "XDG_CACHE_HOME": str(self.cache),
            "BROWSER": f"{shlex.quote(sys.executable)} {shlex.quote(str(BROWSER))} %s",
            "MCPTRIO_TEST_LOGIN": "ada:lovelace",
            "MCPTRIO_TEST_BROWSER_LOG": str(self.visits),
        }

    @property
    def tokens_file(self) -> Path:
        return self.cache / "mcptrio" / "tokens.json"

    def kept(self) -> dict:
        return json.loads(self.tokens_file.read_text())

    def keep(self, kept: dict) -> None:
        """Replace what is kept (as another program might)."""
        self.tokens_file.write_text(json.dumps(kept))

    def browser_visits(self) -> int:
        return len(self.visits.read_text().splitlines())

    async def mcptrio(self, *args: str):
        return await mcptrio(*args, env=self.env)


def users_server() -> DevAuthorizationServer:
    return DevAuthorizationServer(
        scopes=("mcp", "admin", "offline_access"), auto_approve=False, users={"ada": "lovelace"}
    )


async def log_in(user: User, protected: Protected) -> None:
    called = await user.mcptrio("call", protected.url, "whoami", "--login")
    assert called.code == 0, called.stderr
    assert called.stdout == "ada\n"


@asynccontextmanager
async def logged_in(home: Path) -> AsyncIterator[tuple[User, Protected]]:
    """A protected server, and a user who logged in to it with ``--login`` (in the browser
    once), for the block; under the test's time limit."""
    user = User(home)
    with trio.fail_after(LIMIT):
        async with open_protected(auth=users_server()) as protected:
            await log_in(user, protected)
            yield user, protected


async def test_login_logs_in_through_the_browser_and_the_next_commands_use_the_kept_token(
    tmp_path: Path,
) -> None:
    user = User(tmp_path)
    with trio.fail_after(LIMIT):
        async with open_protected(auth=users_server()) as protected:
            called = await user.mcptrio("call", protected.url, "whoami", "--login")
            assert called.code == 0, called.stderr
            assert called.stdout == "ada\n"
            said = called.stderr.splitlines()
            assert len(said) == 2, called.stderr
            assert said[0].startswith("mcptrio: log in in your browser; if none opens, visit ")
            authorization_url = said[0].rsplit(" ", 1)[1]
            assert authorization_url == user.visits.read_text().strip()
            assert said[1] == (
                f"mcptrio: logged in to {protected.url} at {protected.auth.issuer}"
                f" (kept in {user.tokens_file})"
            )
            # Kept for the server, with the client's registration, readable by the user only.
            assert stat.S_IMODE(user.tokens_file.stat().st_mode) == 0o600
            assert stat.S_IMODE(user.tokens_file.parent.stat().st_mode) == 0o700
            kept = user.kept()
            assert list(kept["tokens"]) == [protected.url]
            assert kept["tokens"][protected.url]["refresh_token"]
            assert list(kept["registrations"]) == [protected.auth.issuer]

            # The next commands, without --login, send the kept token: no browser.
            listed = await user.mcptrio("list", protected.url)
            assert listed.code == 0, listed.stderr
            assert "whoami" in [tool["name"] for tool in listed.json()["tools"]]
            called = await user.mcptrio("call", protected.url, "whoami")
            assert (called.code, called.stdout, called.stderr) == (0, "ada\n", "")
            assert user.browser_visits() == 1
            assert [call[:2] for call in protected.calls] == [("whoami", "ada")] * 2


async def test_an_expired_kept_token_is_refreshed_without_the_browser(tmp_path: Path) -> None:
    async with logged_in(tmp_path) as (user, protected):
        kept = user.kept()
        before = kept["tokens"][protected.url]
        expired = protected.auth.issue_token(
            "ada", scopes=("mcp",), resource=protected.url, lifetime=-120
        )
        before.update(access_token=expired, expires_at=time.time() - 60)
        user.keep(kept)

        called = await user.mcptrio("call", protected.url, "whoami")
        assert (called.code, called.stdout, called.stderr) == (0, "ada\n", "")
        after = user.kept()["tokens"][protected.url]
        assert after["access_token"] != expired
        assert after["expires_at"] > time.time()
        # The development server rotates refresh tokens: the new one was kept.
        assert after["refresh_token"] != before["refresh_token"]
        assert user.browser_visits() == 1


async def test_a_kept_login_that_cannot_be_refreshed_asks_for_login_in_one_line(
    tmp_path: Path,
) -> None:
    async with logged_in(tmp_path) as (user, protected):
        kept = user.kept()
        kept["tokens"][protected.url].update(access_token="revoked", refresh_token="revoked")
        user.keep(kept)

        called = await user.mcptrio("call", protected.url, "whoami")
        assert called.code == 3
        assert called.error_line == (
            f"mcptrio: error: {protected.url} refused the kept login and it could not be"
            " refreshed: run again with --login"
        )
        assert user.browser_visits() == 1
        # --login logs in afresh, and replaces what was kept.
        await log_in(user, protected)
        assert user.kept()["tokens"][protected.url]["access_token"] != "revoked"
        assert user.browser_visits() == 2


async def test_a_tool_that_needs_another_scope_asks_for_login_then_steps_up_with_it(
    tmp_path: Path,
) -> None:
    async with logged_in(tmp_path) as (user, protected):
        refused = await user.mcptrio("call", protected.url, "reset")
        assert refused.code == 3
        assert refused.error_line == (
            f"mcptrio: error: {protected.url} asks for scope admin, which the kept login"
            " lacks: run again with --login"
        )
        assert user.browser_visits() == 1
        # --login logs in, and again for the scope the tool needs (a step-up).
        stepped = await user.mcptrio("call", protected.url, "reset", "--login")
        assert stepped.code == 0, stepped.stderr
        assert stepped.stdout == "reset\n"
        assert user.browser_visits() == 3
        kept = user.kept()["tokens"][protected.url]
        assert {"mcp", "admin"} <= set(kept["scopes"])
        again = await user.mcptrio("call", protected.url, "reset")
        assert (again.code, again.stdout, again.stderr) == (0, "reset\n", "")


async def test_logout_forgets_the_login_and_the_server_then_asks_for_one(
    tmp_path: Path,
) -> None:
    async with logged_in(tmp_path) as (user, protected):
        out = await user.mcptrio("logout", protected.url)
        assert out.code == 0
        assert out.error_line == f"mcptrio: forgot the login to {protected.url}"
        assert user.kept()["tokens"] == {}
        # The registration with the authorization server is kept for the next login.
        assert list(user.kept()["registrations"]) == [protected.auth.issuer]

        called = await user.mcptrio("call", protected.url, "whoami")
        assert called.code == 3
        assert called.error_line == (
            f"mcptrio: error: {protected.url} asks for a login (HTTP 401): add --login"
        )
        again = await user.mcptrio("logout", protected.url)
        assert again.error_line == f"mcptrio: no login was kept for {protected.url}"
        every = await user.mcptrio("logout", "--all")
        assert every.code == 0
        assert not user.tokens_file.exists()
        assert user.browser_visits() == 1


async def test_a_protected_server_without_a_login_is_one_line_and_exit_3(tmp_path: Path) -> None:
    user = User(tmp_path)
    with trio.fail_after(LIMIT):
        async with open_protected() as protected:
            called = await user.mcptrio("call", protected.url, "whoami")
            assert called.code == 3
            assert called.stdout == ""
            assert called.error_line == (
                f"mcptrio: error: {protected.url} asks for a login (HTTP 401): add --login"
            )
            assert not user.tokens_file.exists()
            assert user.browser_visits() == 0


async def test_login_to_a_server_that_asks_for_none_says_so_and_goes_on(tmp_path: Path) -> None:
    user = User(tmp_path)
    with trio.fail_after(LIMIT):
        async with trio.open_nursery() as nursery:
            app = McpHttpApp(protected_server([]))
            url = await nursery.start(serve_http, app) + "/mcp"
            called = await user.mcptrio("call", url, "whoami", "--login")
            nursery.cancel_scope.cancel()
    assert called.code == 0, called.stderr
    assert called.stdout == "nobody\n"
    assert called.error_line == f"mcptrio: {url} asks for no login; none was kept"
    assert user.browser_visits() == 0
    assert not user.tokens_file.exists()


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ("list", "ws://127.0.0.1:9/mcp", "--login"),
            "--login is for http(s):// servers: a WebSocket upgrade gets no OAuth challenge"
            " to answer",
        ),
        (
            ("call", "--login", "--", sys.executable, "server.py", "whoami"),
            "--login is for http(s):// servers: a server started after -- is spoken to over stdio",
        ),
        (
            ("list", "http://127.0.0.1:9/mcp", "--login", "-H", "Authorization: Bearer t"),
            "--login and --header Authorization both authorize: give one",
        ),
        (("logout",), "give the URL of a server to forget its login (or --all)"),
    ],
)
async def test_login_where_it_cannot_apply_is_a_usage_error(
    tmp_path: Path, args: tuple[str, ...], line: str
) -> None:
    with trio.fail_after(LIMIT):
        ran = await User(tmp_path).mcptrio(*args)
    assert ran.code == 2
    assert ran.error_line == f"mcptrio: error: {line}"
