"""A ``tools/call`` marked with a call key runs at most once on a server with stores: a re-issue
gets the first run's answer, waits for it, or learns that its outcome is unknown."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing

import mcptrio
from mcptrio import Client, Context, McpError, RequestContext, Server, open_stores
from mcptrio.client import Handlers, Revisions
from mcptrio.protocol.call_key import CALL_KEY
from mcptrio.protocol.errors import InternalError
from mcptrio.protocol.revisions import SUPPORTED
from mcptrio.protocol.types import (
    CallToolRequest,
    CallToolResult,
    ElicitRequest,
    ElicitResult,
    TextContent,
    ToolAnnotations,
)
from mcptrio.server.middleware import Call, CallNext

STATELESS = Revisions(protocol_version="2026-07-28", supported=SUPPORTED)
HANDSHAKE = Revisions(protocol_version="2025-11-25", supported=SUPPORTED)


class Ledger:
    """A server whose tools record every run."""

    def __init__(self) -> None:
        self.runs: list[str] = []
        self.release = trio.Event()
        self.server = Server("ledger")
        self.keys: list[Any] = []

        @self.server.tool()
        async def charge(amount: int) -> str:
            self.runs.append(f"charge {amount}")
            return f"charged {amount}"

        @self.server.tool()
        async def slow_charge(amount: int) -> str:
            self.runs.append(f"slow {amount}")
            await self.release.wait()
            return f"charged {amount} slowly"

        @self.server.tool()
        async def refuse(amount: int) -> str:
            self.runs.append(f"refuse {amount}")
            raise McpError("Card declined", code=-31001)

        @self.server.tool()
        async def ask_then_charge(ctx: Context) -> str:
            self.runs.append("asked")
            answer = await ctx.elicit("Amount?", AMOUNT, key="amount")
            amount = (answer.content or {}).get("amount")
            self.runs.append(f"charge {amount}")
            return f"charged {amount}"

        @self.server.tool(annotations=ToolAnnotations(read_only_hint=True))
        async def balance() -> int:
            self.runs.append("balance")
            return 3

        @self.server.tool(annotations=ToolAnnotations(idempotent_hint=True))
        async def set_limit(limit: int) -> int:
            self.runs.append(f"limit {limit}")
            return limit

        async def keys_seen(call: Call, call_next: CallNext) -> Any:
            if call.method == "tools/call":
                meta = call.params.meta
                self.keys.append(meta.get(CALL_KEY) if isinstance(meta, dict) else None)
            return await call_next(call)

        self.server.add_middleware(keys_seen)

    @asynccontextmanager
    async def client(self) -> AsyncIterator[Client]:
        async with open_stores() as stores:
            self.server.use_stores(stores)
            handlers = Handlers(elicitation=answer_amount)
            async with mcptrio.open_client(self.server, handlers=handlers) as client:
                yield client


AMOUNT = {"type": "object", "properties": {"amount": {"type": "integer"}}}


async def answer_amount(ctx: RequestContext, request: ElicitRequest) -> ElicitResult:
    return ElicitResult(action="accept", content={"amount": 4})


def marked(name: str, arguments: dict[str, Any] | None, key: str) -> CallToolRequest:
    return CallToolRequest(name=name, arguments=arguments, meta={CALL_KEY: key})


def text(result: CallToolResult) -> str:
    content = result.content[0]
    assert isinstance(content, TextContent)
    return content.text


async def test_the_client_marks_each_call_with_a_key_of_its_own() -> None:
    ledger = Ledger()
    with trio.fail_after(10):
        async with ledger.client() as client:
            await client.call_tool("charge", {"amount": 1})
            await client.call_tool("charge", {"amount": 1})
    assert ledger.runs == ["charge 1", "charge 1"]
    first, second = ledger.keys
    assert isinstance(first, str) and isinstance(second, str) and first != second


async def test_a_reissued_call_gets_the_first_runs_answer_and_runs_once() -> None:
    ledger = Ledger()
    with trio.fail_after(10):
        async with ledger.client() as client:
            first = await client.request(marked("charge", {"amount": 5}, "k1"))
            again = await client.request(marked("charge", {"amount": 5}, "k1"))
    assert text(first) == text(again) == "charged 5"
    assert ledger.runs == ["charge 5"]


async def test_a_reissue_while_the_first_run_goes_waits_for_its_answer() -> None:
    ledger = Ledger()
    answers: list[str] = []
    with trio.fail_after(10):
        async with ledger.client() as client:

            async def call() -> None:
                answers.append(
                    text(await client.request(marked("slow_charge", {"amount": 2}, "k")))
                )

            async with trio.open_nursery() as nursery:
                nursery.start_soon(call)
                await trio.testing.wait_all_tasks_blocked()
                nursery.start_soon(call)
                await trio.sleep(0.2)
                assert answers == []
                ledger.release.set()
    assert answers == ["charged 2 slowly"] * 2
    assert ledger.runs == ["slow 2"]


async def test_a_reissue_of_a_call_cancelled_mid_run_learns_its_outcome_is_unknown() -> None:
    ledger = Ledger()
    with trio.fail_after(10):
        async with ledger.client() as client:
            with trio.move_on_after(0.2):
                await client.request(marked("slow_charge", {"amount": 9}, "k"))
            await trio.sleep(0.1)
            with pytest.raises(
                InternalError, match="outcome of tools/call 'slow_charge' is unknown"
            ):
                await client.request(marked("slow_charge", {"amount": 9}, "k"))
    assert ledger.runs == ["slow 9"]


async def test_a_reissue_gets_the_first_runs_error_answer() -> None:
    ledger = Ledger()
    with trio.fail_after(10):
        async with ledger.client() as client:
            for _ in range(2):
                with pytest.raises(McpError, match="Card declined") as raised:
                    await client.request(marked("refuse", {"amount": 1}, "k"))
                assert raised.value.code == -31001
    assert ledger.runs == ["refuse 1"]


async def test_read_only_and_idempotent_tools_and_unmarked_calls_run_every_time() -> None:
    ledger = Ledger()
    with trio.fail_after(10):
        async with ledger.client() as client:
            for _ in range(2):
                await client.request(marked("balance", None, "b"))
                await client.request(marked("set_limit", {"limit": 4}, "l"))
                await client.request(CallToolRequest(name="charge", arguments={"amount": 1}))
    assert ledger.runs == ["balance", "limit 4", "charge 1"] * 2


@pytest.mark.parametrize("revisions", [STATELESS, HANDSHAKE], ids=["stateless", "handshake"])
async def test_a_call_that_asks_for_input_runs_its_rounds_and_then_once(
    revisions: Revisions,
) -> None:
    ledger = Ledger()
    with trio.fail_after(10):
        async with open_stores() as stores:
            ledger.server.use_stores(stores)
            handlers = Handlers(elicitation=answer_amount)
            async with mcptrio.open_client(
                ledger.server, handlers=handlers, revisions=revisions
            ) as client:
                for _ in range(2):
                    result = await client.request(marked("ask_then_charge", None, "k"))
                    assert text(result) == "charged 4"
    # The stateless era runs the handler again with the answer (MRTR); the handshake era asks
    # the client in the middle of the one run. Either way, the copy runs nothing.
    rounds = ["asked", "asked", "charge 4"] if revisions is STATELESS else ["asked", "charge 4"]
    assert ledger.runs == rounds


async def test_a_server_without_stores_runs_a_reissue_again() -> None:
    ledger = Ledger()
    with trio.fail_after(10):
        async with mcptrio.open_client(ledger.server) as client:
            for _ in range(2):
                await client.request(marked("charge", {"amount": 5}, "k"))
    assert ledger.runs == ["charge 5"] * 2
