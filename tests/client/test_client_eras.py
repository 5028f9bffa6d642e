"""The client's era: the stateless era's probe (server/discover), its fallback to initialize,
pinning, and input-required results answered by the same handlers as server requests."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from eras import HANDSHAKE_ERA
from programs import free_port
from real_servers import running_http_server

import mcptrio
from mcptrio import Context
from mcptrio.client.options import Handlers, Revisions, Timeouts
from mcptrio.protocol.revisions import HANDSHAKE_SUPPORTED, SUPPORTED
from mcptrio.protocol.types import (
    CreateMessageResult,
    ElicitRequest,
    ElicitResult,
    Root,
    TextContent,
)
from mcptrio.runtime.context import RequestContext

from conftest import open_recorded_client

ROOT = Path(__file__).resolve().parents[2]
SDK_SERVER = [sys.executable, str(ROOT / "tests" / "servers" / "sdk_everything_server.py"), "stdio"]
STATELESS = "2026-07-28"
NEWEST_HANDSHAKE = HANDSHAKE_SUPPORTED[0]


async def elicit(ctx: RequestContext, request: ElicitRequest) -> ElicitResult:
    return ElicitResult(action="accept", content={"name": "Ada", "age": 36})


async def sample(ctx: RequestContext, request: Any) -> CreateMessageResult:
    return CreateMessageResult(role="assistant", content=TextContent(text="Paris"), model="m")


HANDLERS = Handlers(elicitation=elicit, sampling=sample, roots=[Root(uri="file:///work")])


def make_server(supported: tuple[str, ...] = SUPPORTED) -> mcptrio.Server:
    server = mcptrio.Server("eras", version="1.0", supported_revisions=supported)

    @server.tool
    async def three_asks(ctx: Context) -> str:
        """Elicits, samples and lists roots: three rounds in the stateless era."""
        who = await ctx.elicit(
            "Who?", {"type": "object", "properties": {"name": {"type": "string"}}}
        )
        said = await ctx.sample("Capital of France?", max_tokens=10)
        found = await ctx.list_roots()
        text = said.content.text if isinstance(said.content, TextContent) else "?"
        return f"{(who.content or {}).get('name')} / {text} / {found[0].uri}"

    return server


def text(result: Any) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


@pytest.mark.parametrize(
    ("revisions", "era"),
    [
        (Revisions(supported=SUPPORTED), STATELESS),
        (Revisions(protocol_version=STATELESS, supported=SUPPORTED), STATELESS),
        (Revisions(), STATELESS),
        (HANDSHAKE_ERA, NEWEST_HANDSHAKE),
    ],
)
async def test_the_same_handlers_answer_in_both_eras(revisions: Revisions, era: str) -> None:
    with trio.fail_after(10):
        async with mcptrio.open_client(
            make_server(), revisions=revisions, handlers=HANDLERS
        ) as client:
            assert client.protocol_version == era
            assert client.server_info.name == "eras"
            result = await client.call_tool("three_asks")
    assert text(result) == "Ada / Paris / file:///work"


async def test_a_handshake_only_server_makes_the_probe_fall_back_to_initialize() -> None:
    server = make_server(HANDSHAKE_SUPPORTED)
    with trio.fail_after(10):
        async with mcptrio.open_client(
            server, revisions=Revisions(supported=SUPPORTED), handlers=HANDLERS
        ) as client:
            assert client.protocol_version == NEWEST_HANDSHAKE
            assert text(await client.call_tool("three_asks")) == "Ada / Paris / file:///work"


async def test_a_pinned_stateless_revision_does_not_fall_back() -> None:
    server = make_server(HANDSHAKE_SUPPORTED)
    with trio.fail_after(10), pytest.raises(mcptrio.McpError):
        async with mcptrio.open_client(
            server, revisions=Revisions(protocol_version=STATELESS, supported=SUPPORTED)
        ):
            pass


async def test_the_log_level_travels_with_each_request_in_the_stateless_era() -> None:
    server = mcptrio.Server("logs", version="1.0")

    @server.tool
    async def chatty(ctx: Context) -> str:
        """Logs twice."""
        await ctx.debug("detail")
        await ctx.warning("careful")
        return "ok"

    seen: list[str] = []
    with trio.fail_after(10):
        async with (
            mcptrio.open_client(server, revisions=Revisions(supported=SUPPORTED)) as client,
            client.log_messages() as messages,
        ):
            # Reading the log, the client names "debug" until told otherwise (every level,
            # as in the handshake era); then each request carries the level set.
            await client.call_tool("chatty")
            await client.set_logging_level("warning")
            await client.call_tool("chatty")
            async for message in messages:
                seen.append(message.data)
                if len(seen) == 3:
                    break
    assert seen == ["detail", "careful", "careful"]


async def test_a_client_that_reads_no_log_names_no_level_and_gets_no_log() -> None:
    server = mcptrio.Server("logs", version="1.0")

    @server.tool
    async def chatty(ctx: Context) -> str:
        """Logs once."""
        await ctx.warning("careful")
        return "ok"

    with trio.fail_after(10):
        async with open_recorded_client(server) as (client, wire, _):
            await client.call_tool("chatty")
    sent = [m for m in wire.client_to_server if m.get("method") == "tools/call"]
    assert "io.modelcontextprotocol/logLevel" not in sent[0]["params"]["_meta"]
    assert "notifications/message" not in wire.methods_sent_by_server()


@pytest.mark.parametrize("revisions", [Revisions(), HANDSHAKE_ERA])
async def test_the_official_sdks_server_in_both_eras(revisions: Revisions) -> None:
    with trio.fail_after(30):
        async with mcptrio.open_client(
            SDK_SERVER, revisions=revisions, handlers=HANDLERS
        ) as client:
            stateless = revisions.stateless != ()
            assert client.protocol_version == (STATELESS if stateless else NEWEST_HANDSHAKE)
            assert text(await client.call_tool("add", {"a": 2, "b": 3})) == "5"
            weather = await client.call_tool("weather", {"city": "Oslo"})
            assert weather.structured_content
            if not stateless:
                # These tools send requests to the client, which the SDK's server can only do
                # in the handshake era (its stateless era refuses them: no back-channel).
                assert "Paris" in text(await client.call_tool("ask_llm", {"question": "Capital?"}))
                assert text(await client.call_tool("ask_user")) == "Hello Ada, 36"
                assert text(await client.call_tool("roots")) == "file:///work"


async def test_a_probe_answered_late_settles_the_era_when_initialize_is_refused() -> None:
    # The SDK's server takes far longer than this probe's timeout to start. It then answers the
    # probe, in order, and refuses the fallback's initialize on that connection (it serves
    # 2026-07-28 there): the late answer settles the era instead of the refusal.
    with trio.fail_after(30):
        async with mcptrio.open_client(
            SDK_SERVER, timeouts=Timeouts(probe=0.001), handlers=HANDLERS
        ) as client:
            assert client.protocol_version == STATELESS
            assert text(await client.call_tool("add", {"a": 2, "b": 3})) == "5"


async def test_a_probe_answered_late_leaves_the_handshake_era_when_initialize_succeeds() -> None:
    # mcptrio's server speaks both eras on one connection: the late probe is answered, and so
    # is initialize, which decides.
    everything = [sys.executable, str(ROOT / "examples" / "everything_server.py")]
    with trio.fail_after(30):
        async with mcptrio.open_client(everything, timeouts=Timeouts(probe=0.001)) as client:
            assert client.protocol_version == NEWEST_HANDSHAKE
            assert text(await client.call_tool("test_simple_text")) != ""


@pytest.mark.parametrize(
    "revisions",
    [Revisions(supported=SUPPORTED), Revisions(protocol_version=STATELESS, supported=SUPPORTED)],
)
async def test_the_stateless_era_over_http_sends_its_headers(revisions: Revisions) -> None:
    server = make_server()

    @server.tool(
        input_schema={
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
            "required": ["region"],
        }
    )
    def place(region: str) -> str:
        """Runs in a region (the region travels in Mcp-Param-Region)."""
        return f"in {region}"

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(server.serve_http, "127.0.0.1", 0)
            async with mcptrio.open_client(
                f"{url}/mcp", revisions=revisions, handlers=HANDLERS
            ) as client:
                assert client.protocol_version == STATELESS
                # Not listed yet: the server refuses the missing header, the client lists the
                # tools and sends the call again with it.
                assert text(await client.call_tool("place", {"region": "Zürich"})) == "in Zürich"
                assert text(await client.call_tool("three_asks")) == "Ada / Paris / file:///work"
            nursery.cancel_scope.cancel()


async def test_the_official_sdks_http_server_in_the_stateless_era() -> None:
    port = free_port()
    command = [*SDK_SERVER[:2], "http", str(port)]
    with running_http_server(command, port):
        with trio.fail_after(30):
            async with mcptrio.open_client(
                f"http://127.0.0.1:{port}/mcp", revisions=Revisions(supported=SUPPORTED)
            ) as client:
                assert client.protocol_version == STATELESS
                assert text(await client.call_tool("add", {"a": 2, "b": 3})) == "5"
                assert (await client.call_tool("weather", {"city": "Oslo"})).structured_content
                # Cancelling closes the POST's stream (no notifications/cancelled in this era);
                # the client carries on.
                with trio.move_on_after(0.3):
                    await client.call_tool("countdown", {"start": 50})
                assert text(await client.call_tool("add", {"a": 1, "b": 1})) == "2"


def test_the_era_cache_is_bounded_and_keyed_by_command_or_url() -> None:
    from mcptrio.client.eras import EraCache, era_key
    from mcptrio.client.targets import resolve_target

    cache = EraCache(size=2)
    for key in ("a", "b", "c"):
        cache.remember(key, "handshake")
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (None, "handshake", "handshake")
    cache.remember(None, "handshake")
    assert cache.get(None) is None
    assert era_key(resolve_target("http://h/mcp")) == "http://h/mcp"
    assert era_key(resolve_target(["python", "s.py"])) == "python\0s.py"
    assert era_key(resolve_target(make_server())) is None


async def test_a_server_found_to_be_of_the_handshake_era_is_not_probed_again() -> None:
    from mcptrio.client.eras import ERA_CACHE, HANDSHAKE

    server = make_server(HANDSHAKE_SUPPORTED)
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(server.serve_http, "127.0.0.1", 0)
            target = f"{url}/mcp"
            async with mcptrio.open_client(target, revisions=Revisions(supported=SUPPORTED)) as c:
                assert c.protocol_version == NEWEST_HANDSHAKE
            assert ERA_CACHE.get(target) == HANDSHAKE
            nursery.cancel_scope.cancel()
