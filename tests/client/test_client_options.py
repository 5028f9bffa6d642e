"""The client's options, declared once: every call takes the same per-call keywords and refuses
a misspelt one; open_client, open_client_group and connect take the same grouped records."""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing

import mcptrio
from mcptrio.client import (
    CallOptions,
    ClientIdentity,
    ClientOptions,
    Handlers,
    NotificationCallbacks,
    Revisions,
    Timeouts,
)
from mcptrio.protocol.types import Implementation, PromptReference
from mcptrio.server.context import Context

from conftest import open_recorded_client


def slow_server() -> mcptrio.Server:
    server = mcptrio.Server("slow")

    @server.tool()
    async def slow(ctx: Context, steps: int = 3) -> str:
        for i in range(steps):
            await trio.sleep(1)
            await ctx.report_progress(i + 1, steps)
        return "done"

    @server.tool()
    def whoami(ctx: Context) -> str:
        return ctx.client_info.name

    @server.prompt(completions={"code": ["print(1)"]})
    def review(code: str) -> str:
        return f"Review {code}"

    server.add_resource("hello", "note://hello", name="hello")
    return server


# Every request method of a Client, called with the per-call keywords given as **options.
CALLS: dict[str, Any] = {
    "request": lambda c, **o: c.request(mcptrio.protocol.types.ListPromptsRequest(), **o),
    "ping": lambda c, **o: c.ping(**o),
    "list_tools": lambda c, **o: c.list_tools(**o),
    "call_tool": lambda c, **o: c.call_tool("slow", {"steps": 0}, **o),
    "list_resources": lambda c, **o: c.list_resources(**o),
    "list_resource_templates": lambda c, **o: c.list_resource_templates(**o),
    "read_resource": lambda c, **o: c.read_resource("note://hello", **o),
    "list_prompts": lambda c, **o: c.list_prompts(**o),
    "get_prompt": lambda c, **o: c.get_prompt("review", {"code": "x"}, **o),
    "complete": lambda c, **o: c.complete(PromptReference(name="review"), "code", "", **o),
    "set_logging_level": lambda c, **o: c.set_logging_level("info", **o),
}
ITERATORS = ["iter_tools", "iter_resources", "iter_resource_templates", "iter_prompts"]


def test_the_per_call_keywords_are_declared_once() -> None:
    assert CallOptions.__optional_keys__ == {
        "timeout",
        "max_total_timeout",
        "on_progress",
        "cache",
    }
    assert ClientOptions.__optional_keys__ == {
        "identity",
        "revisions",
        "timeouts",
        "handlers",
        "notifications",
        "cache",
    }


@pytest.mark.parametrize("call", sorted(CALLS))
async def test_every_call_takes_the_per_call_keywords_and_refuses_a_misspelt_one(
    call: str,
) -> None:
    seen: list[float] = []
    with trio.fail_after(10):
        async with mcptrio.open_client(slow_server()) as client:
            await CALLS[call](
                client, timeout=5, max_total_timeout=5, on_progress=lambda p, t, m: seen.append(p)
            )
            with pytest.raises(TypeError, match=r"unexpected keyword arguments \['timout'\]"):
                await CALLS[call](client, timout=5)


@pytest.mark.parametrize("iterator", ITERATORS)
async def test_every_iterator_takes_the_per_call_keywords_and_refuses_a_misspelt_one(
    iterator: str,
) -> None:
    with trio.fail_after(10):
        async with mcptrio.open_client(slow_server()) as client:
            [item async for item in getattr(client, iterator)(timeout=5, max_total_timeout=5)]
            with pytest.raises(TypeError, match="timout"):
                [item async for item in getattr(client, iterator)(timout=5)]


async def test_a_calls_timeout_overrides_the_connections_and_none_means_the_connections(
    autojump_clock: trio.testing.MockClock,
) -> None:
    with trio.fail_after(100):
        async with mcptrio.open_client(slow_server(), timeouts=Timeouts(request=1.5)) as client:
            with pytest.raises(mcptrio.RequestTimeout):
                await client.call_tool("slow", {"steps": 2})
            with pytest.raises(mcptrio.RequestTimeout):
                await client.call_tool("slow", {"steps": 2}, timeout=None)
            result = await client.call_tool("slow", {"steps": 2}, timeout=5)
            assert result.is_error is not True


async def test_a_calls_progress_is_its_own_not_the_tool_listing_before_it(
    autojump_clock: trio.testing.MockClock,
) -> None:
    seen: list[float] = []
    with trio.fail_after(100):
        async with open_recorded_client(slow_server()) as (client, wire, _):
            # The tool is not known yet: the client lists the tools first, without a token.
            await client.call_tool("slow", {"steps": 2}, on_progress=lambda p, t, m: seen.append(p))
    listing, call = (
        m for m in wire.client_to_server if m.get("method") in ("tools/list", "tools/call")
    )
    assert "progressToken" not in listing.get("params", {}).get("_meta", {})
    assert "progressToken" in call["params"]["_meta"]
    assert seen == [1, 2]


async def test_subscribe_passes_the_per_call_keywords_on() -> None:
    server = slow_server()
    with trio.fail_after(10):
        async with open_recorded_client(server) as (client, _wire, _):
            with pytest.raises(TypeError, match="timout"):
                async with client.subscribe("note://hello", timout=5):
                    pytest.fail("the block must not run")  # pragma: no cover


@pytest.mark.parametrize(
    "opener",
    [
        lambda **o: mcptrio.open_client(slow_server(), **o),
        lambda **o: mcptrio.open_client_group({"a": slow_server()}, **o),
    ],
)
async def test_open_client_and_groups_refuse_a_misspelt_or_ungrouped_keyword(opener: Any) -> None:
    for wrong in ({"identty": ClientIdentity()}, {"request_timeout": 5}, {"sampling": None}):
        with pytest.raises(TypeError, match="unexpected keyword arguments") as caught:
            async with opener(**wrong):
                pytest.fail("the block must not run")  # pragma: no cover
        assert "timeouts" in str(caught.value)  # the message lists what is accepted


async def test_connect_refuses_a_misspelt_keyword_before_connecting() -> None:
    with trio.fail_after(10):
        async with mcptrio.open_client_group() as group:
            with pytest.raises(TypeError, match="handler"):
                await group.connect("a", slow_server(), handler=Handlers())  # type: ignore[call-arg]
            assert "a" not in group


async def test_every_group_of_options_configures_what_it_names() -> None:
    logged: list[str] = []
    with trio.fail_after(10):
        async with open_recorded_client(
            slow_server(),
            identity=ClientIdentity(info=Implementation(name="grouped", version="9")),
            revisions=Revisions(protocol_version="2025-06-18"),
            timeouts=Timeouts(request=5),
            handlers=Handlers(roots=[]),
            notifications=NotificationCallbacks(on_log=lambda m: logged.append(str(m.data))),
        ) as (client, wire, _):
            assert client.request_timeout == 5
            assert client.protocol_version == "2025-06-18"
            assert client.roots == []
            whoami = (await client.call_tool("whoami")).content[0]
            assert getattr(whoami, "text", None) == "grouped"
    initialize = wire.client_to_server[0]["params"]
    assert initialize["capabilities"] == {"roots": {"listChanged": True}}
    assert initialize["protocolVersion"] == "2025-06-18"


def test_option_records_check_their_values_when_made() -> None:
    with pytest.raises(ValueError, match="not one of supported"):
        Revisions(protocol_version="2025-11-25", supported=("2025-06-18",))
    with pytest.raises(ValueError, match="names no revision"):
        Revisions(supported=())
    assert Revisions(supported=("2025-06-18", "2025-03-26")).offered == "2025-06-18"
    assert Revisions(protocol_version="2025-03-26", supported=("2025-06-18", "2025-03-26")) == (
        Revisions(protocol_version="2025-03-26", supported=("2025-06-18", "2025-03-26"))
    )
    with pytest.raises(TypeError):
        Timeouts(5)  # type: ignore[misc]  # keywords only: Timeouts(5) would say nothing
