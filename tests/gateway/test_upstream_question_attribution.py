"""A handshake-era upstream's question (sampling, elicitation, roots) names no call: the gateway
puts it only to a client whose call may have caused it, never to the next client that happens to
wait on the upstream after the call that caused it was cancelled or timed out."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
from eras import HANDSHAKE_ERA

import mcptrio
from mcptrio.client import Handlers, Revisions
from mcptrio.gateway import Gateway, Upstream, UpstreamConnection
from mcptrio.protocol.types import ElicitRequest, ElicitResult, PromptReference
from mcptrio.runtime.context import RequestContext
from mcptrio.server.context import Context

ERAS = {"handshake": HANDSHAKE_ERA, "stateless": Revisions(protocol_version="2026-07-28")}
SECRET = "Approve the transfer for alice-secret-4242?"
APPROVAL = {"type": "object", "properties": {"ok": {"type": "boolean"}}}


class Bank:
    """An upstream that, as many do, finishes what it started: a cancelled transfer still asks
    for its approval once ``go`` is set."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.go = trio.Event()
        self.release = trio.Event()
        self.server = mcptrio.Server("bank")

        @self.server.tool
        async def transfer(ctx: Context) -> str:
            self.log.append("transfer started")
            with trio.CancelScope(shield=True):
                await self.go.wait()
                try:
                    answer = await ctx.elicit(SECRET, APPROVAL)
                except mcptrio.McpError:
                    self.log.append("transfer refused")
                    return "refused"
                self.log.append(f"transfer {answer.action}")
                return "done"

        @self.server.tool
        async def balance() -> str:
            self.log.append("balance started")
            await self.release.wait()
            return "100"

        @self.server.tool
        async def quick() -> str:
            return "quick"

        async def accounts(value: str, _arguments: dict[str, str]) -> list[str]:
            self.log.append("completing")
            await self.release.wait()
            return [value + "-1"]

        @self.server.prompt(completions={"account": accounts})
        def statement(account: str) -> str:
            return f"The statement of {account}"

    def upstream(self, **options: Any) -> Upstream:
        return Upstream(
            name="bank", target=self.server, in_process=False, revisions=HANDSHAKE_ERA, **options
        )


class Asked:
    """A client's elicitation handler: records what it was asked, accepts everything."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    async def __call__(self, _ctx: RequestContext, request: ElicitRequest) -> ElicitResult:
        self.messages.append(request.message)
        return ElicitResult(action="accept", content={"ok": True})


async def wait_for(predicate: Any) -> None:
    while not predicate():  # noqa: ASYNC110
        await trio.sleep(0.01)


@asynccontextmanager
async def two_clients(
    gateway: Gateway, first_era: str = "handshake"
) -> AsyncIterator[tuple[mcptrio.Client, mcptrio.Client, Asked]]:
    """``gateway`` serving two clients, the second of the handshake era; and what the second is
    asked (the first accepts every question too)."""
    asked = Asked()
    async with trio.open_nursery() as nursery:
        await nursery.start(gateway.serve_upstreams)
        async with (
            mcptrio.open_client(
                gateway, revisions=ERAS[first_era], handlers=Handlers(elicitation=Asked())
            ) as first,
            mcptrio.open_client(
                gateway, revisions=HANDSHAKE_ERA, handlers=Handlers(elicitation=asked)
            ) as second,
        ):
            yield first, second, asked
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("ending", ["cancelled", "timed out"])
@pytest.mark.parametrize("first_era", ["handshake", "stateless"])
async def test_a_question_of_an_abandoned_call_never_reaches_the_next_client(
    first_era: str, ending: str, autojump_clock: trio.testing.MockClock
) -> None:
    bank = Bank()
    gateway = Gateway(upstreams=[bank.upstream(timeout=5)])
    with trio.fail_after(60):
        async with two_clients(gateway, first_era) as (first, following, asked):
            if ending == "cancelled":
                with trio.move_on_after(1):
                    await first.call_tool("bank_transfer")
            else:
                result = await first.call_tool("bank_transfer")
                assert result.is_error
            assert bank.log == ["transfer started"]
            async with trio.open_nursery() as calls:
                calls.start_soon(following.call_tool, "bank_balance")
                await wait_for(lambda: "balance started" in bank.log)
                bank.go.set()
                await wait_for(lambda: len(bank.log) == 3)
                bank.release.set()
            assert asked.messages == []
            assert bank.log[-1] == "transfer refused"


@pytest.mark.parametrize("before", ["another client's call answered", "its own call cancelled"])
async def test_a_client_is_asked_when_only_its_own_calls_may_have_caused_the_question(
    before: str, autojump_clock: trio.testing.MockClock
) -> None:
    bank = Bank()
    bank.go.set()
    with trio.fail_after(60):
        async with two_clients(Gateway(upstreams=[bank.upstream()])) as (other, client, asked):
            if before == "another client's call answered":
                assert (await other.call_tool("bank_quick")).content[0].text == "quick"
            else:
                # The question may be the cancelled call's or the new call's: either way, its own.
                with trio.move_on_after(1):
                    await client.call_tool("bank_balance")
            assert (await client.call_tool("bank_transfer")).content[0].text == "done"
            assert asked.messages == [SECRET]


async def test_a_question_is_refused_while_another_clients_completion_may_have_caused_it(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # An upstream may ask while completing as while calling: with one client's completion and
    # another's call in flight, either may be the question's cause.
    bank = Bank()
    bank.go.set()
    with trio.fail_after(60):
        async with two_clients(Gateway(upstreams=[bank.upstream()])) as (other, client, asked):
            async with trio.open_nursery() as calls:
                ref = PromptReference(name="bank_statement")
                calls.start_soon(other.complete, ref, "account", "a")
                await wait_for(lambda: "completing" in bank.log)
                assert (await client.call_tool("bank_transfer")).content[0].text == "refused"
                bank.release.set()
            assert asked.messages == []


async def test_an_abandoned_call_stops_counting_once_the_upstream_reconnects(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # A new connection carries nothing the gateway abandoned on the old one.
    bank = Bank()
    gateway = Gateway(upstreams=[bank.upstream()])
    connection = gateway.upstreams["bank"]
    assert isinstance(connection, UpstreamConnection)
    with trio.fail_after(60):
        async with two_clients(gateway) as (first, client, asked):
            with trio.move_on_after(1):
                await first.call_tool("bank_transfer")
            upstream_client = connection._client
            assert upstream_client is not None
            await upstream_client.session.transport.aclose()
            bank.go.set()  # the abandoned transfer asks on the closed connection, and ends
            await wait_for(lambda: connection.connections == 2 and connection.state == "up")
            assert (await client.call_tool("bank_transfer")).content[0].text == "done"
            assert asked.messages == [SECRET]
