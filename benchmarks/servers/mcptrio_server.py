"""The mcptrio benchmark server.

Run it as a stdio server with ``python -m benchmarks.servers.mcptrio_server`` (from the
repository root) or ``python benchmarks/servers/mcptrio_server.py`` (with mcptrio importable).
"""

from __future__ import annotations

import mcptrio


def build_server() -> mcptrio.Server:
    """A server with the single benchmark tool, ``add(a, b) -> a + b``."""
    server = mcptrio.Server("bench")

    # Text content only, the same result as the SDK server and the low-level server: without
    # this mcptrio infers structured output from `-> int` and also validates the value and sends
    # `structuredContent` (see benchmarks/README.md, "Same result everywhere").
    @server.tool(structured_output=False)
    async def add(a: int, b: int) -> int:
        return a + b

    return server


if __name__ == "__main__":
    build_server().run_stdio()
