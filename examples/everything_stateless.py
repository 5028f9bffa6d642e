"""The everything server's fixtures for revision 2026-07-28 (the stateless era).

:func:`add_stateless_fixtures` adds them to a server: the input-required tools and prompt of
SEP-2322 (``test_input_required_result_*``), the diagnostic tools of SEP-2575
(``test_missing_capability``, ``test_streaming_elicitation``, ``test_logging_tool``,
``test_trigger_tool_change``, ``test_trigger_prompt_change``) and a tool whose arguments travel
in ``Mcp-Param-*`` headers (``x-mcp-header``, SEP-2243). Every one uses the public API: the same
``ctx.elicit`` / ``ctx.sample`` / ``ctx.list_roots`` as in the handshake era, with a ``key``
where the suite expects one.
"""

from __future__ import annotations

from typing import Any

import trio
import trio.lowlevel

import mcptrio
from mcptrio import Context
from mcptrio.protocol.types import (
    CreateMessageRequest,
    ElicitRequest,
    ListRootsRequest,
    SamplingMessage,
    TextContent,
)

NAME_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "description": "Your name"}},
    "required": ["name"],
}
COLOR_SCHEMA = {
    "type": "object",
    "properties": {"color": {"type": "string", "description": "Your favourite colour"}},
    "required": ["color"],
}
CONTEXT_SCHEMA = {
    "type": "object",
    "properties": {"context": {"type": "string"}},
    "required": ["context"],
}
HEADER_TOOL_SCHEMA = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "description": "Where to run", "x-mcp-header": "Region"},
        "query": {"type": "string", "description": "What to run"},
    },
    "required": ["region", "query"],
}


def _text_of(result: Any) -> str:
    content = result.content
    if isinstance(content, TextContent):
        return content.text
    if isinstance(content, list) and content and isinstance(content[0], TextContent):
        return content[0].text
    return ""


def add_stateless_fixtures(server: mcptrio.Server) -> None:
    """Add the 2026-07-28 fixtures (see the module docstring) to ``server``."""

    @server.tool
    async def test_input_required_result_elicitation(ctx: Context) -> str:
        """Asks the user's name through an input-required result (SEP-2322)."""
        answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
        return f"Hello, {(answer.content or {}).get('name', 'stranger')}!"

    @server.tool
    async def test_input_required_result_sampling(ctx: Context) -> str:
        """Asks the client's model a question through an input-required result (SEP-2322)."""
        result = await ctx.sample(
            "What is the capital of France?", max_tokens=100, key="capital_question"
        )
        return f"The model said: {_text_of(result)}"

    @server.tool
    async def test_input_required_result_list_roots(ctx: Context) -> str:
        """Asks for the client's roots through an input-required result (SEP-2322)."""
        roots = await ctx.list_roots(key="client_roots")
        return "Roots: " + ", ".join(root.uri for root in roots)

    @server.tool
    async def test_input_required_result_request_state(ctx: Context) -> str:
        """Answers once the echoed requestState checks out (it is sealed: state-ok)."""
        await ctx.elicit("Confirm?", {"type": "object", "properties": {}}, key="confirm")
        return "state-ok: the requestState was intact"

    @server.tool
    async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
        """Asks for elicitation, sampling and roots in one round."""
        answers = await ctx.ask(
            {
                "user_name": ElicitRequest.form("What is your name?", NAME_SCHEMA),
                "greeting": CreateMessageRequest(
                    messages=[SamplingMessage(role="user", content=TextContent(text="Hi?"))],
                    max_tokens=50,
                ),
                "client_roots": ListRootsRequest(),
            }
        )
        return f"Got {len(answers)} answers"

    @server.tool
    async def test_input_required_result_multi_round(ctx: Context) -> str:
        """Asks in two rounds: first the name, then the colour."""
        name = await ctx.elicit("What is your name?", NAME_SCHEMA, key="step1")
        color = await ctx.elicit("Favourite colour?", COLOR_SCHEMA, key="step2")
        return f"{(name.content or {}).get('name')} likes {(color.content or {}).get('color')}"

    @server.tool
    async def test_input_required_result_capabilities(ctx: Context) -> str:
        """Asks only for what the request's declared client capabilities allow."""
        caps = ctx.client_capabilities
        asks: dict[str, Any] = {}
        if caps is not None and caps.sampling is not None:
            asks["question"] = CreateMessageRequest(
                messages=[SamplingMessage(role="user", content=TextContent(text="Hi?"))],
                max_tokens=50,
            )
        if caps is not None and caps.elicitation is not None:
            asks["user_name"] = ElicitRequest.form("What is your name?", NAME_SCHEMA)
        if caps is not None and caps.roots is not None:
            asks["client_roots"] = ListRootsRequest()
        answers = await ctx.ask(asks) if asks else {}
        return f"Asked for {sorted(answers)}"

    @server.tool
    async def test_input_required_result_tampered_state(ctx: Context) -> str:
        """Refuses a requestState that was changed on the way (it is sealed)."""
        await ctx.elicit("Confirm?", {"type": "object", "properties": {}}, key="confirm")
        return "state-ok"

    @server.prompt
    async def test_input_required_result_prompt(ctx: Context) -> str:
        """A prompt that asks for context through an input-required result."""
        answer = await ctx.elicit("What context?", CONTEXT_SCHEMA, key="context")
        return f"Context: {(answer.content or {}).get('context', '')}"

    @server.tool
    async def test_missing_capability(ctx: Context) -> str:
        """Needs sampling, whatever the client declared (-32021 without it)."""
        result = await ctx.sample("Anything to say?", max_tokens=20, key="anything")
        return f"The client's model said: {_text_of(result)}"

    @server.tool
    async def test_streaming_elicitation(ctx: Context) -> str:
        """Reports progress, then asks through an input-required result (never a request)."""
        await ctx.report_progress(1, 2, "thinking")
        await ctx.info("about to ask")
        answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
        return f"Hello, {(answer.content or {}).get('name', 'stranger')}!"

    @server.tool
    async def test_logging_tool(ctx: Context) -> str:
        """Logs at every level; nothing reaches a client that named no logLevel."""
        for level in ("debug", "info", "warning", "error"):
            await ctx.log(level, f"a {level} message")  # type: ignore[arg-type]
            await trio.lowlevel.checkpoint()
        return "logged"

    @server.tool
    def test_trigger_tool_change() -> str:
        """Adds or removes a tool, so that the tool list changes."""
        if not server.remove_tool("test_dynamic_tool"):
            server.add_tool(lambda: "dynamic", name="test_dynamic_tool", description="Dynamic")
        return "The tool list changed"

    @server.tool
    def test_trigger_prompt_change() -> str:
        """Adds or removes a prompt, so that the prompt list changes."""
        if not server.remove_prompt("test_dynamic_prompt"):
            server.add_prompt(lambda: "dynamic", name="test_dynamic_prompt", description="Dynamic")
        return "The prompt list changed"

    @server.tool(input_schema=HEADER_TOOL_SCHEMA)
    def test_custom_headers(region: str, query: str) -> str:
        """Runs a query in a region; ``region`` travels in the Mcp-Param-Region header."""
        return f"Ran {query!r} in {region}"
