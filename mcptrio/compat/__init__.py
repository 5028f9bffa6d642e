"""Code written for other MCP libraries, run on mcptrio's engine.

:mod:`mcptrio.compat.mcpserver` mirrors the official Python SDK's ``mcp.server.mcpserver``
(``MCPServer``, ``Context``...): a server written for the SDK changes its import line and runs
here. It needs pydantic (``pip install mcptrio[compat]``), as the SDK's API does; it never
imports the SDK itself.
"""
