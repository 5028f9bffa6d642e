"""A stdio server for the tasks tests: ``greet`` runs only as a task and asks for a name."""

from __future__ import annotations

from typing import Any

import mcptrio

server = mcptrio.Server("tasks-over-stdio")


@server.tool(task="required")
async def greet(ctx: mcptrio.Context) -> str:
    await ctx.report_progress(1, 3)
    schema = {"type": "object", "properties": {"n": {"type": "string"}}}
    answer: mcptrio.Elicited[Any] = await ctx.elicit("Name?", schema)
    assert answer.content is not None
    return f"hello {answer.content['n']}"


if __name__ == "__main__":
    server.run_stdio()
