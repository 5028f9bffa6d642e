"""MCP over HTTP, server side: the endpoints an HTTP front end serves.

- :mod:`.app`: ``McpHttpApp``, every endpoint of one MCP server behind one ``HttpApp`` (Streamable
  HTTP, legacy HTTP+SSE, WebSocket upgrades), after the :mod:`.security` checks;
- Streamable HTTP: :mod:`.streamable` (POST, GET, DELETE), :mod:`.http_session` (one session's
  transport), :mod:`.session_registry` (the live sessions and their nursery), its SSE streams
  (:mod:`.sse_stream`, :mod:`.live_stream`, :mod:`.sse_head_timer`);
- :mod:`.legacy_sse`: the HTTP+SSE transport of 2024-11-05;
- shared by them: :mod:`.envelope_peek` (routing a frame without decoding it),
  :mod:`.request_checks` (``Accept``, ``Content-Type``, the body limit) and :mod:`.responses`
  (headers and error answers).
"""
