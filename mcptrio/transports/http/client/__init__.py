"""MCP over HTTP, client side: the transports a client opens to an HTTP URL.

- :mod:`.transport`: ``open_http_client_transport``, which speaks whichever of the two the server
  does (the spec's backwards-compatibility recipe);
- :mod:`.streamable`: Streamable HTTP, with :mod:`.session_renewal` for a session the server
  ended;
- :mod:`.legacy_sse`: the HTTP+SSE transport of 2024-11-05;
- shared by them: :mod:`.messages` (what they peek at in a frame), :mod:`.posts` (running POSTs
  with backpressure), :mod:`.resources` (connection pool and nursery).

They speak HTTP through :mod:`mcptrio.transports.http.engine.client_pool`.
"""
