"""What the official SDK's client sees of one of the servers in ``servers/``: every list, every
result and every error of a fixed set of requests, as plain JSON values.

The differential tests run each server twice, under the SDK and under
``mcptrio.compat.mcpserver``, and compare the two transcripts. The client is the SDK's own
(``mcp.client.Client``), on anyio over trio, so what is compared is what an SDK user would see.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import mcp.types as sdk
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

SERVERS = Path(__file__).parent / "servers"
#: The checkout whose ``mcptrio`` the servers import (this one, not an installed copy).
ROOT = Path(__file__).resolve().parents[2]
Transcript = list[tuple[str, Any]]


def dump(value: Any) -> Any:
    return value.model_dump(mode="json", by_alias=True, exclude_none=True)


def server_parameters(server: str, under: str) -> StdioServerParameters:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "COMPAT_UNDER": under, "PYTHONPATH": path}
    return StdioServerParameters(command=sys.executable, args=[str(SERVERS / server)], env=env)


class Recorder:
    """Runs requests against a client and writes down each answer or error."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.transcript: Transcript = []

    async def __call__(self, label: str, request: Callable[[], Awaitable[Any]]) -> None:
        try:
            answer = await request()
        except MCPError as exc:
            self.transcript.append((label, {"error": exc.code, "message": exc.message}))
        else:
            self.transcript.append((label, dump(answer)))


async def lists(record: Recorder) -> None:
    c = record.client
    await record("tools/list", c.list_tools)
    await record("resources/list", c.list_resources)
    await record("resources/templates/list", c.list_resource_templates)
    await record("prompts/list", c.list_prompts)
    await record("call unknown", lambda: c.call_tool("no-such-tool", {}))
    await record("get unknown", lambda: c.get_prompt("no-such-prompt", {}))
    await record("read unknown", lambda: c.read_resource("nothing://here"))


async def tools_scenario(record: Recorder) -> None:
    c = record.client
    calls: list[tuple[str, dict[str, Any]]] = [
        ("add", {"a": 1}),
        ("add", {"a": 1, "b": 40}),
        ("add", {"a": "x"}),
        ("add", {}),
        ("add", {"a": "5"}),
        ("shout", {"text": "hi"}),
        ("shout", {"text": "x" * 30}),
        ("move", {"point": {"x": 1}}),
        ("move", {"point": '{"x": 3, "y": 4}', "by": 2}),
        ("move", {"point": {"y": 1}}),
        ("stats", {"values": [1, 2, 3]}),
        ("tally", {"words": ["a", "b", "a"]}),
        ("pick", {}),
        ("pick", {"mode": "slow", "label": "L"}),
        ("pick", {"mode": "medium"}),
        ("plain", {"n": 3}),
        ("untyped", {"thing": "ab", "times": 2}),
        ("refuse", {"reason": "no"}),
        ("crash", {}),
        ("times_ten", {"n": 4}),
    ]
    for name, arguments in calls:
        await record(f"call {name} {arguments}", partial(c.call_tool, name, arguments))


async def resources_scenario(record: Recorder) -> None:
    c = record.client
    for uri in [
        "config://app",
        "text://hello",
        "data://blob",
        "notes://a",
        "notes://zzz",
        "grid://2/3",
        "broken://foreseen",
        "broken://crash",
    ]:
        await record(f"read {uri}", partial(c.read_resource, uri))
    await record("call read_note", lambda: c.call_tool("read_note", {"name": "b"}))


async def prompts_scenario(record: Recorder) -> None:
    c = record.client
    gets: list[tuple[str, dict[str, str]]] = [
        ("review", {"code": "x = 1"}),
        ("review", {"code": "fn main", "language": "rust"}),
        ("review", {}),
        ("debug", {"error": "boom"}),
        ("picture", {}),
        ("as-dict", {"topic": "trio"}),
        ("count", {"times": "3"}),
        ("count", {"times": "many"}),
        ("failing", {}),
    ]
    for name, arguments in gets:
        await record(f"get {name} {arguments}", partial(c.get_prompt, name, arguments))


async def context_scenario(record: Recorder) -> None:
    c = record.client
    progress: list[Any] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append([value, total, message])

    await record(
        "call work", lambda: c.call_tool("work", {"steps": 3}, progress_callback=on_progress)
    )
    record.transcript.append(("progress", progress))
    await record("call chatty", lambda: c.call_tool("chatty", {}))
    await record("call about", lambda: c.call_tool("about", {}))
    await record("call changed", lambda: c.call_tool("changed", {}))


async def lifespan_scenario(record: Recorder) -> None:
    c = record.client
    info = c.server_info
    record.transcript.append(("server_info", None if info is None else dump(info)))
    record.transcript.append(("instructions", c.instructions))
    await record("call lookup", lambda: c.call_tool("lookup", {"key": "server"}))
    prompt = sdk.PromptReference(type="ref/prompt", name="greet")
    template = sdk.ResourceTemplateReference(type="ref/resource", uri="code://{language}/sample")
    await record("complete prompt", lambda: c.complete(prompt, {"name": "language", "value": "p"}))
    await record(
        "complete template", lambda: c.complete(template, {"name": "language", "value": ""})
    )
    await record("read sample", lambda: c.read_resource("code://rust/sample"))


async def media_scenario(record: Recorder) -> None:
    c = record.client
    for name, arguments in [
        ("dot", {}),
        ("beep", {}),
        ("both", {"caption": "look"}),
        ("nothing", {}),
    ]:
        await record(f"call {name}", partial(c.call_tool, name, arguments))


SCENARIOS: dict[str, Callable[[Recorder], Awaitable[None]]] = {
    "tools_server.py": tools_scenario,
    "resources_server.py": resources_scenario,
    "prompts_server.py": prompts_scenario,
    "context_server.py": context_scenario,
    "lifespan_server.py": lifespan_scenario,
    "media_server.py": media_scenario,
}


async def transcript(server: str, under: str, mode: str, **client_options: Any) -> Transcript:
    """The transcript of ``server`` run ``under`` ``"sdk"`` or ``"mcptrio"``, to a client in
    ``mode`` (``"auto"``: the stateless era, probed first; ``"legacy"``: the handshake)."""
    logs: list[Any] = []

    async def on_log(params: sdk.LoggingMessageNotificationParams) -> None:
        logs.append(dump(params))

    parameters = server_parameters(server, under)
    async with Client(
        parameters, mode=mode, logging_callback=on_log, log_level="debug", **client_options
    ) as client:
        record = Recorder(client)
        record.transcript.append(("protocol_version", client.protocol_version))
        await lists(record)
        await SCENARIOS[server](record)
        record.transcript.append(("log messages", logs))
        return record.transcript


async def elicit_scenario(record: Recorder) -> None:
    c = record.client
    await record("call book", lambda: c.call_tool("book", {}))
    await record("call book again", lambda: c.call_tool("book", {}))
    await record("call login", lambda: c.call_tool("login", {}))


def answering_elicitations() -> tuple[Any, list[Any]]:
    """An elicitation callback that accepts the first form, declines the second and accepts
    the URL, and the list of what it was asked (the requested schemas included)."""
    asked: list[Any] = []
    answers = [
        sdk.ElicitResult(action="accept", content={"date": "2026-12-24", "guests": 4}),
        sdk.ElicitResult(action="decline"),
        sdk.ElicitResult(action="accept"),
    ]

    async def on_elicit(context: Any, params: Any) -> sdk.ElicitResult:
        asked.append(dump(params))
        return answers[len(asked) - 1]

    return on_elicit, asked


async def resolve_scenario(record: Recorder) -> None:
    c = record.client
    await record("call reserve", lambda: c.call_tool("reserve", {"venue": "Opera"}))
    await record("call reserve declined", lambda: c.call_tool("reserve", {"venue": "Club"}))
    await record("call reserve refused", lambda: c.call_tool("reserve", {"venue": "Bar"}))
    await record("call describe", lambda: c.call_tool("describe", {"venue": "Opera"}))
    await record("call where", lambda: c.call_tool("where", {}))


def answering_clients() -> tuple[dict[str, Any], list[Any]]:
    """Client callbacks for ``resolve_scenario`` (elicitation, sampling, roots), and the list
    of what they were asked."""
    asked: list[Any] = []

    async def on_elicit(context: Any, params: Any) -> sdk.ElicitResult:
        asked.append(dump(params))
        message: str = params.message
        if message.startswith("How many") and "Bar" in message:
            return sdk.ElicitResult(action="decline")
        if message.startswith("How many"):
            return sdk.ElicitResult(action="accept", content={"count": 3})
        if "Club" in "".join(str(q) for q in asked[-2:-1]):
            return sdk.ElicitResult(action="cancel")
        return sdk.ElicitResult(action="accept", content={"ok": True})

    async def on_sample(context: Any, params: Any) -> sdk.CreateMessageResult:
        asked.append(dump(params))
        text = sdk.TextContent(type="text", text="a fine place")
        return sdk.CreateMessageResult(role="assistant", content=text, model="m")

    async def on_roots(context: Any) -> sdk.ListRootsResult:
        asked.append("roots")
        return sdk.ListRootsResult(roots=[sdk.Root(uri="file:///tmp/a", name="a")])

    callbacks = {
        "elicitation_callback": on_elicit,
        "sampling_callback": on_sample,
        "list_roots_callback": on_roots,
    }
    return callbacks, asked
