"""The client's handlers for the server's requests: sampling, elicitation, roots.

Checked per revision: the capabilities declared (in the shape of the offered revision), the
answers (never a member the negotiated revision lacks), -32601 without a handler, -32602 for an
undeclared elicitation mode, -32603 for a handler that crashes (the session carries on).
"""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing
from cancellation import Waiter
from eras import HANDSHAKE_ERA, only

import mcptrio
from mcptrio.client import ClientIdentity, Handlers, NotificationCallbacks, Revisions
from mcptrio.protocol.base import Request, Result
from mcptrio.protocol.revisions import HANDSHAKE_SUPPORTED
from mcptrio.protocol.types import (
    ClientCapabilities,
    CreateMessageRequest,
    CreateMessageResult,
    ElicitationCapability,
    ElicitRequest,
    ElicitResult,
    ListRootsRequest,
    ListRootsResult,
    Root,
    SamplingCapability,
    SamplingMessage,
    TextContent,
    Tool,
)
from mcptrio.runtime.context import RequestContext
from mcptrio.server.context import Context

from conftest import Wire, open_recorded_client

ELICITING = ("2025-06-18", "2025-11-25")


def text_of(result: mcptrio.protocol.types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def asking_server() -> mcptrio.Server:
    server = mcptrio.Server("asking")

    @server.tool()
    async def ask_llm(ctx: Context, prompt: str, with_tools: bool = False) -> str:
        tools = [Tool(name="search", input_schema={"type": "object"})] if with_tools else None
        result = await ctx.sample(prompt, max_tokens=20, tools=tools, timeout=5)
        content = result.content
        assert isinstance(content, TextContent)
        return f"{result.model}:{content.text}"

    @server.tool()
    async def ask_user(ctx: Context) -> str:
        schema = {"type": "object", "properties": {"name": {"type": "string"}}}
        answer = await ctx.elicit("Your name?", schema, timeout=5)
        return f"{answer.action}:{answer.content}"

    @server.tool()
    async def ask_url(ctx: Context) -> str:
        answer = await ctx.elicit_url("Sign in", "https://example.test/login", "e-1", timeout=5)
        await ctx.complete_elicitation("e-1")
        return f"{answer.action}:{answer.content}"

    @server.tool()
    async def raw(ctx: Context, method: str) -> str:
        # Sends a request the Context would refuse to build, to see the client's own answer.
        request: Request[Any]
        if method == "url":
            request = ElicitRequest.url_mode("Go", "https://example.test", "e-2")
        elif method == "sampling":
            request = CreateMessageRequest(
                messages=[SamplingMessage(role="user", content=TextContent(text="hi"))],
                max_tokens=5,
            )
        else:
            request = ListRootsRequest()
        try:
            result: Result = await ctx.send_request(request, timeout=5)
        except mcptrio.McpError as exc:
            return f"error {exc.code}: {exc.message}"
        return f"ok {type(result).__name__}"

    @server.tool()
    async def roots(ctx: Context) -> str:
        return ",".join(root.uri for root in await ctx.list_roots(timeout=5))

    return server


async def sample(ctx: RequestContext, request: CreateMessageRequest) -> CreateMessageResult:
    message = request.messages[-1].content
    assert isinstance(message, TextContent)
    tools = [] if request.tools is None else [t.name for t in request.tools]
    return CreateMessageResult(
        role="assistant", content=TextContent(text=f"{message.text}{tools}"), model="m1"
    )


async def elicit(ctx: RequestContext, request: ElicitRequest) -> ElicitResult:
    if request.effective_mode == "url":
        return ElicitResult(action="accept", content={"ignored": "in url mode"})
    return ElicitResult(action="accept", content={"name": "Ada"})


def initialize_capabilities(wire: Wire) -> dict[str, Any]:
    capabilities: dict[str, Any] = wire.client_to_server[0]["params"]["capabilities"]
    return capabilities


# ---------------------------------------------------------------------- capabilities


@pytest.mark.parametrize(
    ("revision", "expected"),
    [
        ("2024-11-05", {"sampling": {}, "roots": {"listChanged": True}}),
        ("2025-03-26", {"sampling": {}, "roots": {"listChanged": True}}),
        ("2025-06-18", {"sampling": {}, "elicitation": {}, "roots": {"listChanged": True}}),
        (
            "2025-11-25",
            {
                "sampling": {"tools": {}, "context": {}},
                "elicitation": {"form": {}, "url": {}},
                "roots": {"listChanged": True},
            },
        ),
    ],
)
async def test_capabilities_are_declared_from_the_handlers_in_the_revisions_shape(
    revision: str, expected: dict[str, Any]
) -> None:
    with trio.fail_after(5):
        async with open_recorded_client(
            asking_server(),
            revisions=only(revision),
            handlers=Handlers(sampling=sample, elicitation=elicit, roots=[Root(uri="file:///a")]),
        ) as (_client, wire, _):
            wire.validate(revision)
    assert initialize_capabilities(wire) == expected


async def test_no_handler_declares_nothing_and_extra_capabilities_are_merged() -> None:
    with trio.fail_after(5):
        async with open_recorded_client(asking_server(), revisions=HANDSHAKE_ERA) as (_c, bare, _):
            pass
        async with open_recorded_client(
            asking_server(),
            identity=ClientIdentity(
                capabilities=ClientCapabilities(
                    experimental={"x": {"y": 1}}, sampling=SamplingCapability(context=None)
                )
            ),
            handlers=Handlers(sampling=sample),
            revisions=HANDSHAKE_ERA,
        ) as (_c, merged, _):
            pass
    assert initialize_capabilities(bare) == {}
    assert initialize_capabilities(merged) == {
        "experimental": {"x": {"y": 1}},
        "sampling": {"tools": {}, "context": {}},
    }


@pytest.mark.parametrize(
    ("revision", "modes", "expected"),
    [
        ("2025-11-25", ("form",), {"form": {}}),
        ("2025-11-25", ("url",), {"url": {}}),
        ("2025-06-18", ("form",), {}),
        ("2025-06-18", ("url",), None),
    ],
)
async def test_elicitation_modes_shape_the_capability(
    revision: str, modes: tuple[str, ...], expected: dict[str, Any] | None
) -> None:
    with trio.fail_after(5):
        async with open_recorded_client(
            asking_server(),
            revisions=only(revision),
            handlers=Handlers(elicitation=elicit, elicitation_modes=modes),  # type: ignore[arg-type]
        ) as (_c, wire, _):
            wire.validate(revision)
    assert initialize_capabilities(wire).get("elicitation") == expected


async def test_an_elicitation_handler_without_modes_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one"):
        async with mcptrio.open_client(
            asking_server(), handlers=Handlers(elicitation=elicit, elicitation_modes=())
        ):
            pass  # pragma: no cover


# ---------------------------------------------------------------------- answering


@pytest.mark.parametrize("revision", HANDSHAKE_SUPPORTED)
async def test_sampling_and_roots_handlers_answer_the_server(revision: str) -> None:
    with trio.fail_after(5):
        async with open_recorded_client(
            asking_server(),
            revisions=only(revision),
            handlers=Handlers(
                sampling=sample,
                roots=[Root(uri="file:///a", name="a", meta={"k": 1}), Root(uri="file:///b")],
            ),
        ) as (client, wire, _):
            sampled = await client.call_tool("ask_llm", {"prompt": "hi"})
            rooted = await client.call_tool("roots", {})
            wire.validate(revision)
    assert text_of(sampled) == "m1:hi[]"
    assert text_of(rooted) == "file:///a,file:///b"
    answer = next(m for m in wire.client_to_server if "result" in m and "roots" in m["result"])
    assert ("_meta" in answer["result"]["roots"][0]) == (revision >= "2025-06-18")


async def test_sampling_with_tools_reaches_the_handler_in_2025_11_25() -> None:
    with trio.fail_after(5):
        async with open_recorded_client(
            asking_server(), handlers=Handlers(sampling=sample), revisions=HANDSHAKE_ERA
        ) as (client, wire, _):
            sampled = await client.call_tool("ask_llm", {"prompt": "hi", "with_tools": True})
            wire.validate("2025-11-25")
    assert text_of(sampled) == "m1:hi['search']"


@pytest.mark.parametrize("revision", ELICITING)
async def test_form_elicitation_is_answered(revision: str) -> None:
    with trio.fail_after(5):
        async with open_recorded_client(
            asking_server(),
            revisions=only(revision),
            handlers=Handlers(elicitation=elicit),
        ) as (client, wire, _):
            result = await client.call_tool("ask_user", {})
            wire.validate(revision)
    assert text_of(result) == "accept:{'name': 'Ada'}"


async def test_url_elicitation_is_answered_without_content_and_completion_is_reported() -> None:
    completed: list[str] = []
    with trio.fail_after(5):
        async with open_recorded_client(
            asking_server(),
            handlers=Handlers(elicitation=elicit),
            notifications=NotificationCallbacks(on_elicitation_complete=completed.append),
            revisions=HANDSHAKE_ERA,
        ) as (client, wire, _):
            result = await client.call_tool("ask_url", {})
            await client.ping()
            wire.validate("2025-11-25")
    assert text_of(result) == "accept:None"
    assert completed == ["e-1"]
    answer = next(m for m in wire.client_to_server if m.get("result", {}).get("action"))
    assert answer["result"] == {"action": "accept"}


async def test_an_undeclared_elicitation_mode_gets_invalid_params() -> None:
    with trio.fail_after(5):
        async with open_recorded_client(
            asking_server(),
            handlers=Handlers(elicitation=elicit, elicitation_modes=("form",)),
            revisions=HANDSHAKE_ERA,
        ) as (client, wire, _):
            result = await client.call_tool("raw", {"method": "url"})
            wire.validate("2025-11-25")
    assert text_of(result).startswith("error -32602: This client did not declare url-mode")


@pytest.mark.parametrize("method", ["sampling", "roots"])
async def test_a_declared_capability_without_a_handler_gets_method_not_found(method: str) -> None:
    capabilities = ClientCapabilities(
        sampling=SamplingCapability(), roots=mcptrio.protocol.types.RootsCapability()
    )
    with trio.fail_after(5):
        async with open_recorded_client(
            asking_server(),
            identity=ClientIdentity(capabilities=capabilities),
            revisions=HANDSHAKE_ERA,
        ) as (client, wire, _):
            result = await client.call_tool("raw", {"method": method})
            wire.validate("2025-11-25")
    assert text_of(result).startswith("error -32601")


async def test_handle_request_answers_what_no_typed_handler_takes() -> None:
    async def low_level(ctx: RequestContext, request: Request[Any]) -> Result:
        assert isinstance(request, ListRootsRequest)
        return ListRootsResult(roots=[Root(uri="file:///low")])

    with trio.fail_after(5):
        async with open_recorded_client(
            asking_server(),
            identity=ClientIdentity(
                capabilities=ClientCapabilities(roots=mcptrio.protocol.types.RootsCapability())
            ),
            handlers=Handlers(sampling=sample, fallback=low_level),
        ) as (client, _wire, _):
            rooted = await client.call_tool("roots", {})
            sampled = await client.call_tool("ask_llm", {"prompt": "x"})
    assert text_of(rooted) == "file:///low"
    assert text_of(sampled) == "m1:x[]"


async def test_a_crashing_handler_answers_internal_error_and_the_session_survives() -> None:
    calls = 0

    async def flaky(ctx: RequestContext, request: CreateMessageRequest) -> CreateMessageResult:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("model unavailable")
        if calls == 2:
            raise mcptrio.InvalidParams("no such model")
        if calls == 3:
            return "not a result"  # type: ignore[return-value]
        return await sample(ctx, request)

    with trio.fail_after(5):
        async with open_recorded_client(
            asking_server(), handlers=Handlers(sampling=flaky), revisions=HANDSHAKE_ERA
        ) as (client, wire, _):
            answers = [text_of(await client.call_tool("raw", {"method": "sampling"}))]
            answers.append(text_of(await client.call_tool("raw", {"method": "sampling"})))
            answers.append(text_of(await client.call_tool("raw", {"method": "sampling"})))
            answers.append(text_of(await client.call_tool("raw", {"method": "sampling"})))
            wire.validate("2025-11-25")
    assert answers[0] == (
        "error -32603: The client's sampling handler failed: RuntimeError: model unavailable"
    )
    assert answers[1] == "error -32602: no such model"
    assert answers[2].startswith("error -32603: The client's sampling handler returned str")
    assert answers[3] == "ok CreateMessageResult"


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-06-18"])
async def test_a_sampling_answer_is_reshaped_for_older_revisions(revision: str) -> None:
    async def listing(ctx: RequestContext, request: CreateMessageRequest) -> CreateMessageResult:
        count = len(request.messages)
        content = [TextContent(text="one")] + [TextContent(text="more")] * (count - 1)
        return CreateMessageResult(role="assistant", content=content, model="m")

    server = mcptrio.Server("s")

    @server.tool()
    async def ask(ctx: Context, turns: int) -> str:
        try:
            result = await ctx.sample(["hi"] * turns, timeout=5)
        except mcptrio.McpError as exc:
            return f"error {exc.code}: {exc.message}"
        assert isinstance(result.content, TextContent)
        return result.content.text

    with trio.fail_after(5):
        async with open_recorded_client(
            server, revisions=only(revision), handlers=Handlers(sampling=listing)
        ) as (client, wire, _):
            one = text_of(await client.call_tool("ask", {"turns": 1}))
            two = text_of(await client.call_tool("ask", {"turns": 2}))
            wire.validate(revision)
    assert one == "one"
    assert two.startswith("error -32603") and "allows exactly one" in two


async def test_a_string_array_answer_is_refused_before_2025_11_25() -> None:
    async def multi(ctx: RequestContext, request: ElicitRequest) -> ElicitResult:
        return ElicitResult(action="accept", content={"name": ["a", "b"]})

    with trio.fail_after(5):
        async with open_recorded_client(
            asking_server(),
            revisions=Revisions(supported=("2025-06-18",)),
            handlers=Handlers(elicitation=multi),
        ) as (client, wire, _):
            # The server's elicit() raises the client's error, which fails the tool call.
            with pytest.raises(mcptrio.InternalError, match="string arrays are new in 2025-11-25"):
                await client.call_tool("ask_user", {})
            wire.validate("2025-06-18")


# ---------------------------------------------------------------------- roots changing


@pytest.mark.parametrize("revision", HANDSHAKE_SUPPORTED)
async def test_set_roots_changes_the_answer_and_notifies_the_server(revision: str) -> None:
    with trio.fail_after(5):
        async with open_recorded_client(
            asking_server(),
            revisions=only(revision),
            handlers=Handlers(roots=[Root(uri="file:///a")]),
        ) as (client, wire, _):
            before = text_of(await client.call_tool("roots", {}))
            await client.set_roots([Root(uri="file:///b"), Root(uri="file:///c")])
            after = text_of(await client.call_tool("roots", {}))
            assert [r.uri for r in client.roots or []] == ["file:///b", "file:///c"]
            wire.validate(revision)
    assert (before, after) == ("file:///a", "file:///b,file:///c")
    assert wire.methods_sent_by_client().count("notifications/roots/list_changed") == 1


async def test_set_roots_without_list_changed_declared_sends_nothing() -> None:
    capabilities = ClientCapabilities(roots=mcptrio.protocol.types.RootsCapability())
    with trio.fail_after(5):
        async with open_recorded_client(
            asking_server(), identity=ClientIdentity(capabilities=capabilities)
        ) as (client, wire, _):
            await client.set_roots([Root(uri="file:///z")])
            assert text_of(await client.call_tool("roots", {})) == "file:///z"
    assert "notifications/roots/list_changed" not in wire.methods_sent_by_client()


async def test_elicitation_capability_struct_is_not_declared_before_2025_06_18() -> None:
    capabilities = ClientCapabilities(elicitation=ElicitationCapability(form={}))
    with trio.fail_after(5):
        async with open_recorded_client(
            asking_server(),
            identity=ClientIdentity(capabilities=capabilities),
            revisions=Revisions(supported=("2025-03-26",)),
        ) as (_client, wire, _):
            wire.validate("2025-03-26")
    assert initialize_capabilities(wire) == {}


@pytest.mark.parametrize("revision", HANDSHAKE_SUPPORTED)
async def test_client_info_carries_only_what_the_offered_revision_defines(revision: str) -> None:
    info = mcptrio.protocol.types.Implementation(
        name="c", version="1", title="C", description="d", website_url="https://c.test"
    )
    with trio.fail_after(5):
        async with open_recorded_client(
            asking_server(),
            identity=ClientIdentity(info=info),
            revisions=only(revision),
        ) as (_client, wire, _):
            wire.validate(revision)
    sent = wire.client_to_server[0]["params"]["clientInfo"]
    assert ("title" in sent) == (revision >= "2025-06-18")
    assert ("websiteUrl" in sent) == ("description" in sent) == (revision >= "2025-11-25")


async def test_the_server_cancelling_its_request_cancels_the_handler(
    autojump_clock: trio.testing.MockClock,
) -> None:
    waiter = Waiter()

    async def stuck(ctx: RequestContext, request: CreateMessageRequest) -> CreateMessageResult:
        await waiter.wait_until_cancelled()

    server = mcptrio.Server("impatient")

    @server.tool()
    async def ask(ctx: Context) -> str:
        try:
            await ctx.sample("hi", timeout=2)
        except mcptrio.RequestTimeout:
            return "gave up"
        return "answered"  # pragma: no cover

    with trio.fail_after(60):
        async with open_recorded_client(
            server, handlers=Handlers(sampling=stuck), revisions=HANDSHAKE_ERA
        ) as (client, wire, _):
            result = await client.call_tool("ask", {})
            await waiter.cancelled.wait()
            await client.ping()
            wire.validate("2025-11-25")
    assert waiter.entered.is_set()
    assert text_of(result) == "gave up"
    sampling_id = next(
        m["id"] for m in wire.server_to_client if m.get("method") == "sampling/createMessage"
    )
    # No answer to the cancelled request.
    assert not any(m.get("id") == sampling_id for m in wire.client_to_server if "method" not in m)
