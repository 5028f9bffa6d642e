"""HTTP transports: Streamable HTTP, legacy HTTP+SSE and WebSocket, server and client."""
