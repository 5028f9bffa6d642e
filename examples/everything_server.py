"""One mcptrio server exposing every fixture of the official MCP conformance suite.

Besides the fixtures (``test_simple_text``, ``test_tool_with_progress``, ``test://static-text``,
``test_prompt_with_arguments``...) it has a few realistic tools, resources and prompts.

Run it::

    python examples/everything_server.py                     # stdio (the default)
    python examples/everything_server.py --transport stdio
    python examples/everything_server.py --transport http --host 127.0.0.1 --port 8000
    python examples/everything_server.py --transport http --parser h11     # or httptools
    python examples/everything_server.py --transport http --front-end hypercorn
    python examples/everything_server.py --transport http --workers 2 --redis redis://127.0.0.1:6379

Over HTTP, Streamable HTTP is served at ``/mcp`` (WebSocket upgrades too), with the legacy
HTTP+SSE endpoints at ``/sse`` and ``/messages`` beside it.
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
import trio

import mcptrio
from mcptrio.protocol.types import (
    AudioContent,
    EmbeddedResource,
    ImageContent,
    PromptMessage,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)
from mcptrio.server.context import Context
from mcptrio.server.tools import ToolError
from mcptrio.server.workers import WorkersFailed

# The 2026-07-28 fixtures live beside this file (run as a script or loaded by path).
sys.path.insert(0, str(Path(__file__).resolve().parent))
from everything_stateless import add_stateless_fixtures
from everything_tasks import add_task_fixtures

#: A 1x1 red PNG pixel and a minimal WAV file, as the conformance suite's own server uses.
TEST_IMAGE_BASE64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg"
    "=="
)
TEST_AUDIO_BASE64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

JSON_SCHEMA_2020_12_INPUT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "address",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
    # Composition and conditionals (SEP-2106: any 2020-12 keyword may appear).
    "allOf": [{"anyOf": [{"required": ["name"]}, {"required": ["address"]}, {}]}],
    "if": {"properties": {"name": {"const": "admin"}}, "required": ["name"]},
    "then": {"required": ["address"]},
    "else": {},
}

SEP1034_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
}


def _options(prefix: str, titles: list[str]) -> list[dict[str, str]]:
    return [{"const": f"{prefix}{i}", "title": t} for i, t in enumerate(titles, start=1)]


SEP1330_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "untitledSingle": {
            "type": "string",
            "description": "Select one option",
            "enum": ["option1", "option2", "option3"],
        },
        "titledSingle": {
            "type": "string",
            "description": "Select one option with titles",
            "oneOf": _options("value", ["First Option", "Second Option", "Third Option"]),
        },
        "legacyEnum": {
            "type": "string",
            "description": "Select one option (legacy)",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "description": "Select multiple options",
            "minItems": 1,
            "maxItems": 3,
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "description": "Select multiple options with titles",
            "minItems": 1,
            "maxItems": 3,
            "items": {
                "anyOf": _options("value", ["First Choice", "Second Choice", "Third Choice"])
            },
        },
    },
}

NOTES = {
    "shopping": "milk, eggs, bread",
    "ideas": "a trio-native MCP gateway",
}


def build_server() -> mcptrio.Server:
    server = mcptrio.Server(
        "mcptrio-everything",
        "1.0.0",
        title="mcptrio everything server",
        description="Every MCP server feature, and the conformance suite's fixtures",
        website_url="https://github.com/mcptrio/mcptrio",
        instructions="Fixtures for the MCP conformance suite, plus a calculator and notes.",
    )

    # ------------------------------------------------------------------ skills (SEP-2640)
    # The folder of Agent Skills beside this file: skills/list, skills/get, the skill://
    # resources and resources/directory/read (the sep-2640-skills-* scenarios).
    server.add_skills(Path(__file__).resolve().parent / "skills")

    # ------------------------------------------------------------------ conformance tools

    @server.tool()
    def test_simple_text() -> str:
        """Tests simple text content response"""
        return "This is a simple text response for testing."

    @server.tool()
    def test_image_content() -> ImageContent:
        """Tests image content response"""
        return ImageContent(data=TEST_IMAGE_BASE64, mime_type="image/png")

    @server.tool()
    def test_audio_content() -> AudioContent:
        """Tests audio content response"""
        return AudioContent(data=TEST_AUDIO_BASE64, mime_type="audio/wav")

    @server.tool()
    def test_embedded_resource() -> EmbeddedResource:
        """Tests embedded resource content response"""
        return EmbeddedResource(
            resource=TextResourceContents(
                uri="test://embedded-resource",
                mime_type="text/plain",
                text="This is an embedded resource content.",
            )
        )

    @server.tool()
    def test_multiple_content_types() -> list[TextContent | ImageContent | EmbeddedResource]:
        """Tests response with multiple content types (text, image, resource)"""
        return [
            TextContent(text="Multiple content types test:"),
            ImageContent(data=TEST_IMAGE_BASE64, mime_type="image/png"),
            EmbeddedResource(
                resource=TextResourceContents(
                    uri="test://mixed-content-resource",
                    mime_type="application/json",
                    text=json.dumps({"test": "data", "value": 123}),
                )
            ),
        ]

    @server.tool()
    async def test_tool_with_logging(ctx: Context) -> str:
        """Tests tool that emits log messages during execution"""
        await ctx.info("Tool execution started")
        await trio.sleep(0.05)
        await ctx.info("Tool processing data")
        await trio.sleep(0.05)
        await ctx.info("Tool execution completed")
        return "Tool with logging executed successfully"

    @server.tool()
    async def test_tool_with_progress(ctx: Context) -> str:
        """Tests tool that reports progress notifications"""
        for step in (0, 50, 100):
            await ctx.report_progress(step, 100, f"Completed step {step} of 100")
            if step < 100:
                await trio.sleep(0.05)
        return str(ctx.progress_token)

    @server.tool()
    def test_error_handling() -> str:
        """Tests error response handling"""
        raise ToolError("This tool intentionally returns an error for testing")

    @server.tool()
    async def test_sampling(
        ctx: Context, prompt: Annotated[str, "The prompt to send to the LLM"]
    ) -> str:
        """Tests server-initiated sampling (LLM completion request)"""
        result = await ctx.sample(prompt, max_tokens=100)
        content = result.content
        text = content.text if isinstance(content, TextContent) else "No response"
        return f"LLM response: {text}"

    @server.tool()
    async def test_elicitation(
        ctx: Context, message: Annotated[str, "The message to show the user"]
    ) -> str:
        """Tests server-initiated elicitation (user input request)"""
        schema = {
            "type": "object",
            "properties": {"response": {"type": "string", "description": "User's response"}},
            "required": ["response"],
        }
        answer = await ctx.elicit(message, schema)
        return f"User response: action={answer.action}, content={json.dumps(answer.content or {})}"

    @server.tool()
    async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
        """Tests elicitation with default values per SEP-1034"""
        answer = await ctx.elicit(
            "Please review and update the form fields with defaults", SEP1034_SCHEMA
        )
        return (
            f"Elicitation completed: action={answer.action}, "
            f"content={json.dumps(answer.content or {})}"
        )

    @server.tool()
    async def test_elicitation_sep1330_enums(ctx: Context) -> str:
        """Tests elicitation with enum schema improvements per SEP-1330"""
        answer = await ctx.elicit("Please select options from the enum fields", SEP1330_SCHEMA)
        return (
            f"Elicitation completed: action={answer.action}, "
            f"content={json.dumps(answer.content or {})}"
        )

    @server.tool(input_schema=JSON_SCHEMA_2020_12_INPUT_SCHEMA)
    def json_schema_2020_12_tool(
        name: str | None = None, address: dict[str, Any] | None = None
    ) -> str:
        """Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)"""
        args = {k: v for k, v in (("name", name), ("address", address)) if v is not None}
        return f"JSON Schema 2020-12 tool called with: {json.dumps(args)}"

    @server.tool()
    async def test_reconnection(ctx: Context) -> str:
        """Tests SSE stream disconnection and client reconnection (SEP-1699): the server closes
        the stream mid-call and sends the result after the client reconnects."""
        close_stream = getattr(ctx.session.transport, "close_sse_stream", None)
        if close_stream is not None:
            close_stream(ctx.request_id)
        await trio.sleep(0.1)
        return (
            "Reconnection test completed successfully. If you received this, the client "
            "properly reconnected after stream closure."
        )

    # ------------------------------------------------------------------ realistic tools

    @dataclass
    class Statistics:
        count: int
        mean: float
        stdev: float

    @server.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True))
    def describe(values: Annotated[list[float], msgspec.Meta(min_length=1)]) -> Statistics:
        """Count, mean and standard deviation of a list of numbers."""
        mean = sum(values) / len(values)
        variance = sum((v - mean) ** 2 for v in values) / len(values)
        return Statistics(count=len(values), mean=mean, stdev=math.sqrt(variance))

    @server.tool(title="Add a note")
    async def add_note(ctx: Context, name: str, text: str) -> str:
        """Create or replace a note; subscribers of notes://<name> are told."""
        created = name not in NOTES
        NOTES[name] = text
        if created:
            ctx.server.notify_resource_updated("notes://index")
        ctx.server.notify_resource_updated(f"notes://{name}")
        return f"Saved note {name!r}"

    @server.tool()
    async def countdown(ctx: Context, seconds: Annotated[int, msgspec.Meta(ge=0, le=60)]) -> str:
        """Count down, reporting progress every second (cancel it to stop early)."""
        for done in range(seconds):
            await ctx.report_progress(done, seconds, f"{seconds - done} s left")
            await trio.sleep(1)
        return "Lift-off"

    @server.tool()
    async def roots_summary(ctx: Context) -> str:
        """List the client's roots."""
        roots = await ctx.list_roots()
        return "\n".join(f"{r.uri} {r.name or ''}".strip() for r in roots) or "(no roots)"

    # ------------------------------------------------------------------ resources

    @server.resource(
        "test://static-text",
        name="static-text",
        title="Static Text Resource",
        description="A static text resource for testing",
        mime_type="text/plain",
    )
    def static_text() -> str:
        return "This is the content of the static text resource."

    @server.resource(
        "test://static-binary",
        name="static-binary",
        title="Static Binary Resource",
        description="A static binary resource (image) for testing",
        mime_type="image/png",
    )
    def static_binary() -> bytes:
        return base64.b64decode(TEST_IMAGE_BASE64)

    @server.resource(
        "test://template/{id}/data",
        name="template",
        title="Resource Template",
        description="A resource template with parameter substitution",
        mime_type="application/json",
    )
    def template(id: str) -> str:
        return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})

    @server.resource(
        "test://watched-resource",
        name="watched-resource",
        title="Watched Resource",
        description="A resource that can be subscribed to",
        mime_type="text/plain",
    )
    def watched() -> str:
        return "Watched resource content"

    @server.resource("notes://index", name="notes", mime_type="application/json")
    def notes_index() -> dict[str, Any]:
        return {"notes": sorted(NOTES)}

    @server.resource(
        "notes://{name}",
        name="note",
        description="One note by name",
        mime_type="text/plain",
        completions={"name": lambda value, _context: [n for n in NOTES if n.startswith(value)]},
    )
    def note(name: str) -> str:
        if name not in NOTES:
            raise mcptrio.McpError(f"No note called {name!r}", code=-32002)
        return NOTES[name]

    # ------------------------------------------------------------------ prompts

    @server.prompt(title="Simple Test Prompt")
    def test_simple_prompt() -> str:
        """A simple prompt without arguments"""
        return "This is a simple prompt for testing."

    @server.prompt(
        title="Prompt With Arguments",
        completions={"arg1": ["alpha", "beta", "gamma"], "arg2": ["one", "two", "three"]},
    )
    def test_prompt_with_arguments(
        arg1: Annotated[str, "First test argument"], arg2: Annotated[str, "Second test argument"]
    ) -> str:
        """A prompt with required arguments"""
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @server.prompt(title="Prompt With Embedded Resource")
    def test_prompt_with_embedded_resource(
        resourceUri: Annotated[str, "URI of the resource to embed"],
    ) -> list[PromptMessage]:
        """A prompt that includes an embedded resource"""
        return [
            PromptMessage(
                role="user",
                content=EmbeddedResource(
                    resource=TextResourceContents(
                        uri=resourceUri,
                        mime_type="text/plain",
                        text="Embedded resource content for testing.",
                    )
                ),
            ),
            PromptMessage(
                role="user", content=TextContent(text="Please process the embedded resource above.")
            ),
        ]

    @server.prompt(title="Prompt With Image")
    def test_prompt_with_image() -> list[PromptMessage]:
        """A prompt that includes image content"""
        return [
            PromptMessage(
                role="user", content=ImageContent(data=TEST_IMAGE_BASE64, mime_type="image/png")
            ),
            PromptMessage(role="user", content=TextContent(text="Please analyze the image above.")),
        ]

    @server.prompt(title="Code review")
    def review(
        code: Annotated[str, "The code to review"],
        focus: Literal["correctness", "style", "performance"] = "correctness",
    ) -> str:
        """Ask the model to review code with a focus."""
        return f"Please review this code for {focus}:\n\n{code}"

    add_stateless_fixtures(server)
    add_task_fixtures(server)
    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--transport", choices=("stdio", "http", "websocket"), default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument(
        "--parser",
        choices=("auto", "h11", "httptools"),
        default="auto",
        help="the built-in HTTP server's parser (auto: httptools when installed)",
    )
    parser.add_argument("--front-end", choices=("builtin", "hypercorn"), default="builtin")
    parser.add_argument("--workers", type=int, default=1, help="HTTP worker processes")
    parser.add_argument("--redis", metavar="URL", help="the Redis server the workers share")
    parser.add_argument("--grace", type=float, default=10.0, help="seconds to stop in")
    args, _unknown = parser.parse_known_args(argv)
    # The same as `mcptrio run examples/everything_server.py --transport ...`.
    try:
        build_server().run(
            args.transport,
            host=args.host,
            port=args.port,
            parser=args.parser,
            front_end=args.front_end,
            workers=args.workers,
            redis_url=args.redis,
            grace=args.grace,
        )
    except (WorkersFailed, ValueError) as error:
        sys.exit(f"everything_server: error: {error}")


if __name__ == "__main__":
    main()
