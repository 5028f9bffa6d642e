"""A server written with the official Python SDK (``mcp``, MCPServer), for mcptrio's client tests.

    python tests/servers/sdk_everything_server.py stdio
    python tests/servers/sdk_everything_server.py http PORT     # Streamable HTTP at /mcp

It has a tool of each kind (plain, structured output, progress, logging, a tool error) and
tools that call back into the client from their ``Context``: sampling, elicitation and roots.
Resources: a fixed one, a template, and a subscribable one (``touch`` sends its update).
Prompts with completion of their arguments and of the template's variable.

MCPServer has no ``logging/setLevel`` nor ``resources/subscribe`` handler of its own; both are
added on its low-level server (``add_request_handler``), which is what makes it declare the
``logging`` capability and ``resources.subscribe``.
"""

from __future__ import annotations

import sys
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import (
    Completion,
    CompletionArgument,
    CompletionContext,
    EmptyResult,
    PromptReference,
    ResourceTemplateReference,
    SamplingMessage,
    SetLevelRequestParams,
    SubscribeRequestParams,
    TextContent,
    UnsubscribeRequestParams,
)
from pydantic import BaseModel, Field

LANGUAGES = ["python", "pascal", "perl", "rust", "ruby"]
FRIENDS = ["ada", "alan", "barbara", "grace"]


class Weather(BaseModel):
    city: str
    temperature: float = Field(description="Degrees Celsius")
    conditions: str


class Person(BaseModel):
    name: str
    age: int = 30


def build() -> MCPServer:
    server = MCPServer("sdk-everything", instructions="An official-SDK server for interop tests.")
    levels: dict[str, str] = {}
    subscribed: set[str] = set()

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def weather(city: str) -> Weather:
        """The weather of a city, as structured content."""
        return Weather(city=city, temperature=21.5, conditions="sunny")

    @server.tool()
    def fail(reason: str) -> str:
        """Always fails, with the reason given."""
        raise ValueError(reason)

    @server.tool()
    async def countdown(start: int, ctx: Context) -> str:
        """Reports progress from 1 to start."""
        for i in range(1, start + 1):
            await ctx.report_progress(i, start, f"step {i}")
        return "liftoff"

    @server.tool()
    async def chatty(ctx: Context) -> str:
        """Logs one message at debug, info and warning."""
        await ctx.debug("debug note")
        await ctx.info("info note")
        await ctx.warning("warning note")
        return f"logged (level {levels.get('level', 'unset')})"

    @server.tool()
    async def ask_llm(question: str, ctx: Context) -> str:
        """Asks the client's LLM (sampling/createMessage)."""
        result = await ctx.session.create_message(
            messages=[
                SamplingMessage(role="user", content=TextContent(type="text", text=question))
            ],
            max_tokens=64,
            system_prompt="Answer briefly.",
        )
        content = result.content
        text = content.text if isinstance(content, TextContent) else repr(content)
        return f"{result.model} says: {text}"

    @server.tool()
    async def ask_user(ctx: Context) -> str:
        """Asks the user for a name and an age (elicitation/create)."""
        answer = await ctx.elicit("Who are you?", schema=Person)
        if answer.action == "accept":
            return f"Hello {answer.data.name}, {answer.data.age}"
        return f"no answer ({answer.action})"

    @server.tool()
    async def roots(ctx: Context) -> str:
        """The client's roots (roots/list)."""
        result = await ctx.session.list_roots()
        return " ".join(str(root.uri) for root in result.roots)

    @server.tool()
    async def touch(uri: str, ctx: Context) -> str:
        """Sends notifications/resources/updated for uri if the client subscribed to it."""
        if uri not in subscribed:
            return "not subscribed"
        await ctx.session.send_resource_updated(uri)
        return "updated"

    @server.resource("config://app", mime_type="application/json")
    def config() -> str:
        """The application's configuration."""
        return '{"mode": "test"}'

    @server.resource("greeting://{name}")
    def greeting(name: str) -> str:
        """A greeting for anyone."""
        return f"Hello, {name}!"

    @server.resource("counter://main")
    def counter() -> str:
        """A resource that changes when touched."""
        return "0"

    @server.prompt()
    def review(code: str, language: str = "python") -> str:
        """Review a piece of code."""
        return f"Please review this {language} code:\n\n{code}"

    # The SDK's completion() decorator is untyped.
    @server.completion()  # type: ignore[no-untyped-call, untyped-decorator]
    async def complete(
        ref: PromptReference | ResourceTemplateReference,
        argument: CompletionArgument,
        context: CompletionContext | None,
    ) -> Completion | None:
        if isinstance(ref, PromptReference) and argument.name == "language":
            values = [lang for lang in LANGUAGES if lang.startswith(argument.value)]
            return Completion(values=values, total=len(values), has_more=False)
        if isinstance(ref, ResourceTemplateReference) and argument.name == "name":
            values = [name for name in FRIENDS if name.startswith(argument.value)]
            return Completion(values=values, total=len(values), has_more=False)
        return None

    lowlevel = server._lowlevel_server

    async def set_level(ctx: Any, params: SetLevelRequestParams) -> EmptyResult:
        levels["level"] = params.level
        return EmptyResult()

    async def subscribe(ctx: Any, params: SubscribeRequestParams) -> EmptyResult:
        subscribed.add(str(params.uri))
        return EmptyResult()

    async def unsubscribe(ctx: Any, params: UnsubscribeRequestParams) -> EmptyResult:
        subscribed.discard(str(params.uri))
        return EmptyResult()

    lowlevel.add_request_handler("logging/setLevel", SetLevelRequestParams, set_level)
    lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
    lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)
    return server


def main(argv: list[str]) -> None:
    server = build()
    if argv[1:2] == ["stdio"]:
        server.run("stdio")
    elif argv[1:2] == ["http"] and len(argv) == 3:
        import uvicorn

        uvicorn.run(
            server.streamable_http_app(), host="127.0.0.1", port=int(argv[2]), log_level="warning"
        )
    else:
        sys.exit("usage: sdk_everything_server.py stdio | http PORT")


if __name__ == "__main__":
    main(sys.argv)
