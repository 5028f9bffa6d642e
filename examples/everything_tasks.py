"""The everything server's task tools: the fixtures of the conformance suite's ``tasks-*``
scenarios (the 2026-07-28 tasks extension, SEP-2663), written as any mcptrio tool is.

Each is an ordinary function; ``task=`` says whether it may (``"optional"``) or must
(``"required"``) run as a task, and the server decides the rest: in the stateless era a call
that declares ``io.modelcontextprotocol/tasks`` is answered with a task at once, and the
function runs in the server's task nursery; its asks (``ctx.elicit``) become the task's
``inputRequests``, answered through ``tasks/update``.
"""

from __future__ import annotations

from typing import Any

import trio

import mcptrio
from mcptrio.protocol.errors import InternalError
from mcptrio.server.context import Context, Elicited
from mcptrio.server.tools import ToolError

__all__ = ["add_task_fixtures"]

_CONFIRM: dict[str, Any] = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "description": "Go ahead?"}},
    "required": ["confirm"],
}
_NAME: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string", "description": "Your name"}},
    "required": ["name"],
}


def add_task_fixtures(server: mcptrio.Server) -> None:
    """Add the task fixtures to ``server``."""

    @server.tool()
    def greet(name: str) -> str:
        """Greet someone (never a task)."""
        return f"Hello, {name}!"

    @server.tool(task="optional")
    async def slow_compute(seconds: float, label: str = "") -> str:
        """Work for ``seconds`` seconds, then report (a task when the client allows it;
        cancelling the task stops it)."""
        await trio.sleep(max(seconds, 0))
        return f"Computed {label or 'result'} in {seconds:g} s"

    @server.tool(task="required")
    async def failing_job() -> str:
        """A job that runs about a second and fails (a tool error: the task completes with
        isError set)."""
        await trio.sleep(1)
        raise ToolError("The job failed: the input data is corrupt")

    @server.tool(task="required")
    async def protocol_error_job() -> str:
        """A job that breaks down with a JSON-RPC error (the task fails with it)."""
        await trio.sleep(0.1)
        raise InternalError("The job's worker crashed")

    @server.tool(task="optional")
    async def confirm_delete(ctx: Context, filename: str) -> str:
        """Delete a file once the user confirms (asks through the task's inputRequests)."""
        answer: Elicited[Any] = await ctx.elicit(f"Delete {filename}?", _CONFIRM)
        if answer.action == "accept" and answer.content and answer.content.get("confirm"):
            return f"Deleted {filename}"
        return f"Kept {filename}"

    @server.tool(task="optional")
    async def multi_input(ctx: Context) -> str:
        """Ask two things at once, answered in any order (two outstanding inputRequests)."""
        answers: dict[str, str] = {}

        async def ask(what: str, message: str, schema: dict[str, Any]) -> None:
            answer: Elicited[Any] = await ctx.elicit(message, schema)
            answers[what] = answer.action

        async with trio.open_nursery() as nursery:
            nursery.start_soon(ask, "name", "What is your name?", _NAME)
            nursery.start_soon(ask, "confirm", "Proceed?", _CONFIRM)
        return f"Got both answers: name={answers['name']}, confirm={answers['confirm']}"

    @server.tool(task="required", input_before_task=True)
    async def test_tool_with_task(ctx: Context) -> str:
        """Ask the user's name in the request (input-required rounds), then run as a task."""
        answer: Elicited[Any] = await ctx.elicit("What is your name?", _NAME, key="user_name")
        await ctx.begin_task()
        await trio.sleep(0.1)
        name = (answer.content or {}).get("name", "stranger")
        return f"Hello, {name}! (from a task)"
