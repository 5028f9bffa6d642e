"""mcptrio's side of ``python -m benchmarks.task_cost``: a stdio server whose one tool, ``add``,
is a task tool (``task="required"``) that completes at once.

``python -m benchmarks.servers.mcptrio_task_server`` (from the repository root).
"""

from __future__ import annotations

import mcptrio


def build_server() -> mcptrio.Server:
    server = mcptrio.Server("bench-tasks")

    @server.tool(task="required", structured_output=False)
    async def add(a: int, b: int) -> int:
        """Add two integers, as a task."""
        return a + b

    return server


if __name__ == "__main__":
    build_server().run_stdio()
