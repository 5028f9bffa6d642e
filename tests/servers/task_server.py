"""The server of the tasks tests: ``greet`` runs only as a task and asks for a name.

    python tests/servers/task_server.py     # over stdio

tests/server/test_task_transports.py serves the same server in process over the other
transports.
"""

from __future__ import annotations

from typing import Any

import mcptrio


def make_server(name: str) -> mcptrio.Server:
    server = mcptrio.Server(name)

    @server.tool(task="required")
    async def greet(ctx: mcptrio.Context) -> str:
        await ctx.report_progress(1, 3)
        schema = {"type": "object", "properties": {"n": {"type": "string"}}}
        answer: mcptrio.Elicited[Any] = await ctx.elicit("Name?", schema)
        assert answer.content is not None
        return f"hello {answer.content['n']}"

    return server


if __name__ == "__main__":
    make_server("tasks-over-stdio").run_stdio()
