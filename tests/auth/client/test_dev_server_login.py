"""mcptrio's OAuth client logs in to a protected mcptrio server through mcptrio's development
authorization server: the two halves of the OAuth issue against each other.

The server half (``mcptrio.auth.server``, ``mcptrio.auth.dev_server``) comes from its own branch;
until both are merged this module is skipped.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

import pytest
import trio

pytest.importorskip("mcptrio.auth.dev_server")

import mcptrio
from mcptrio.auth.client import AuthorizationCode, HeadlessUserAgent, OAuthClient, RedirectSession

from oauth_servers import IO_LIMIT, open_protected  # the server half's fixtures (tests/)


@dataclass
class RecordingUserAgent(HeadlessUserAgent):
    """The headless user agent, keeping every authorization URL it was sent to."""

    redirect_uri: str = "http://127.0.0.1:1/callback"
    urls: list[str] = field(default_factory=list)

    def asked(self, index: int) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.urls[index]).query)

    @asynccontextmanager
    async def open(self) -> AsyncIterator[RedirectSession]:
        async with super().open() as session:
            yield _Recording(session, self.urls)


class _Recording:
    def __init__(self, session: RedirectSession, urls: list[str]) -> None:
        self._session = session
        self._urls = urls
        self.redirect_uri = session.redirect_uri

    async def run(self, authorization_url: str) -> dict[str, str]:
        self._urls.append(authorization_url)
        return await self._session.run(authorization_url)


def login_with(agent: RecordingUserAgent) -> OAuthClient:
    return OAuthClient(AuthorizationCode(agent))


async def call_logged_in(url: str, tool: str) -> tuple[str, RecordingUserAgent]:
    """Call ``tool`` at ``url`` with a client that logs in as needed; the text it answers, and
    the user agent that was sent to every authorization URL."""
    agent = RecordingUserAgent()
    async with mcptrio.open_client(mcptrio.client.http(url, auth=login_with(agent))) as client:
        result = await client.call_tool(tool, {})
    return result.content[0].text, agent  # type: ignore[union-attr]


async def test_the_mcptrio_client_logs_in_through_the_dev_server_and_calls_a_tool() -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_protected() as protected:
            answer, agent = await call_logged_in(protected.url, "whoami")
            assert answer == "dev-user"
            assert len(agent.urls) == 1
            asked = agent.asked(0)
            assert asked["code_challenge_method"] == ["S256"]
            assert asked["resource"] == [protected.url]
            assert asked["scope"] == ["mcp offline_access"]


async def test_the_mcptrio_client_steps_up_when_a_tool_needs_another_scope() -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_protected() as protected:
            answer, agent = await call_logged_in(protected.url, "reset")
            assert answer == "reset"
            assert len(agent.urls) == 2
            assert set(agent.asked(1)["scope"][0].split()) >= {"mcp", "admin"}
            assert [call[:2] for call in protected.calls] == [("reset", "dev-user")]
