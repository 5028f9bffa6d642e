"""MCP over HTTP, in three parts: :mod:`.engine` (HTTP/1.1 itself, server and client, with no
MCP in it), :mod:`.endpoints` (the MCP endpoints a server serves: Streamable HTTP, legacy
HTTP+SSE, WebSocket upgrades, security) and :mod:`.client` (the client transports), with
:func:`.serve.serve_http` putting a front end and the endpoints together."""
