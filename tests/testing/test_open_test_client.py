"""mcptrio.testing: a client connected in memory whose every frame is schema-checked, a
transcript of what was exchanged, and scripted answers to the server's requests."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
import trio

import mcptrio
from mcptrio.client import HANDSHAKE_ERA, Handlers
from mcptrio.protocol.types import TextContent
from mcptrio.runtime.transport import Outgoing, Transport
from mcptrio.testing import (
    SchemaViolation,
    ScriptedElicitation,
    ScriptedSampling,
    Transcript,
    open_test_client,
    roots,
)

ERAS = {"handshake": {"revisions": HANDSHAKE_ERA}, "stateless": {}}


class Person(msgspec.Struct):
    name: str


def asking_server() -> mcptrio.Server:
    server = mcptrio.Server("asking")

    @server.tool
    async def add(a: int, b: int) -> int:
        return a + b

    @server.tool
    async def poem(topic: str, ctx: mcptrio.Context) -> str:
        reply = await ctx.sample(f"Write a poem about {topic}", max_tokens=50)
        assert isinstance(reply.content, TextContent)
        return reply.content.text

    @server.tool
    async def greet(ctx: mcptrio.Context) -> str:
        answer = await ctx.elicit("Who are you?", Person)
        return f"Hello, {answer.data.name}!" if answer.data is not None else answer.action

    @server.tool
    async def where(ctx: mcptrio.Context) -> str:
        return ", ".join(root.uri for root in await ctx.list_roots())

    return server


def text(result: Any) -> str:
    first = result.content[0]
    assert isinstance(first, TextContent)
    return first.text


@pytest.mark.parametrize("era", list(ERAS))
async def test_calls_are_recorded_and_every_frame_checked(era: str) -> None:
    transcript = Transcript()
    with trio.fail_after(5):
        async with open_test_client(asking_server(), transcript=transcript, **ERAS[era]) as client:
            assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {
                "result": 3
            }
    assert transcript.check() == len(transcript) > 0
    expected = "2025-11-25" if era == "handshake" else "2026-07-28"
    assert transcript.revision == expected
    (call,) = transcript.requests("tools/call")
    assert call["params"]["arguments"] == {"a": 1, "b": 2}
    response = transcript.response_to(call)
    assert response is not None and response["result"]["structuredContent"] == {"result": 3}
    if era == "handshake":
        assert transcript.methods()[:2] == ["initialize", "notifications/initialized"]
    else:
        assert "initialize" not in transcript.methods()


@pytest.mark.parametrize("era", list(ERAS))
async def test_scripted_handlers_answer_the_servers_requests_in_order(era: str) -> None:
    sampling = ScriptedSampling("Trio, trio, tasks in a row", model="test-model")
    elicitation = ScriptedElicitation({"name": "Ada"}, "decline")
    handlers = Handlers(
        sampling=sampling, elicitation=elicitation, roots=roots("file:///repo", "file:///docs/")
    )
    transcript = Transcript()
    with trio.fail_after(5):
        async with open_test_client(
            asking_server(), handlers=handlers, transcript=transcript, **ERAS[era]
        ) as client:
            assert text(await client.call_tool("poem", {"topic": "trio"})) == (
                "Trio, trio, tasks in a row"
            )
            assert text(await client.call_tool("greet", {})) == "Hello, Ada!"
            assert text(await client.call_tool("greet", {})) == "decline"
            assert text(await client.call_tool("where", {})) == "file:///repo, file:///docs/"
    first = sampling.requests[0].messages[0].content
    assert isinstance(first, TextContent) and first.text == "Write a poem about trio"
    assert [r.message for r in elicitation.requests] == ["Who are you?", "Who are you?"]
    assert sampling.remaining == elicitation.remaining == 0
    if era == "handshake":
        assert transcript.requests("sampling/createMessage", sender="server")
    transcript.check()


async def test_a_request_past_the_script_is_refused_not_left_waiting() -> None:
    sampling = ScriptedSampling()
    with trio.fail_after(5):
        async with open_test_client(
            asking_server(), handlers=Handlers(sampling=sampling), revisions=HANDSHAKE_ERA
        ) as client:
            with pytest.raises(mcptrio.McpError, match="scripted 0 sampling answer"):
                await client.call_tool("poem", {"topic": "x"})
    assert len(sampling.requests) == 1


def test_roots_are_named_after_their_last_segment() -> None:
    found = roots("file:///home/ada/repo/", "file:///")
    assert [(r.uri, r.name) for r in found] == [
        ("file:///home/ada/repo/", "repo"),
        ("file:///", None),
    ]


class _BadServer:
    """A server that answers the handshake, then sends a log message with no level."""

    async def serve_session(
        self, transport: Transport, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        task_status.started()
        while True:
            try:
                frame = await transport.receive()
            except trio.EndOfChannel:
                return
            assert isinstance(frame, bytes)
            message = json.loads(frame)
            if message.get("method") == "initialize":
                result = {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {"logging": {}},
                    "serverInfo": {"name": "bad", "version": "1"},
                }
                answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
                await transport.send([Outgoing(json.dumps(answer).encode())])
            elif message.get("method") == "notifications/initialized":
                bad = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": 1}}
                await transport.send([Outgoing(json.dumps(bad).encode())])
            elif message.get("method") == "ping":
                answer = {"jsonrpc": "2.0", "id": message["id"], "result": {}}
                await transport.send([Outgoing(json.dumps(answer).encode())])


async def test_a_message_that_breaks_the_schema_fails_the_test() -> None:
    with trio.fail_after(5), pytest.raises(SchemaViolation) as caught:
        async with open_test_client(_BadServer(), revisions=HANDSHAKE_ERA) as client:
            await client.ping()
    (problem,) = caught.value.problems
    entry, revision, message = problem
    assert (entry.sender, entry.method, revision) == (
        "server",
        "notifications/message",
        "2025-06-18",
    )
    assert "'level' is a required property" in message
    assert "1 message(s) break the MCP schema" in str(caught.value)


async def test_the_check_can_be_left_out() -> None:
    transcript = Transcript()
    with trio.fail_after(5):
        async with open_test_client(
            _BadServer(), revisions=HANDSHAKE_ERA, transcript=transcript, check_schema=False
        ) as client:
            await client.ping()
    assert len(transcript.violations()) == 1
