"""HTTP itself, with no MCP in it: what the MCP endpoints are served by and the client speaks.

- :mod:`.exchange`: the contract between a front end and an app (``HttpApp``, ``HttpRequest``,
  ``HttpResponder``, ``WebSocketPeer``), deliberately smaller than ASGI;
- the built-in HTTP/1.1 front end: :mod:`.builtin_server` (listening, with the limits of
  :mod:`.server_limits`), :mod:`.builtin_connection` (a connection's request loop),
  :mod:`.builtin_exchange` (one request/response), :mod:`.builtin_websocket` (upgrades, on
  wsproto), over the sans-IO request parser interface of :mod:`.parser` and its two parsers,
  :mod:`.h11_parser` and :mod:`.httptools_parser`;
- :mod:`.asgi`: the ASGI front end (Hypercorn, Quart-trio);
- :mod:`.router`: several apps behind one port, by path prefix;
- :mod:`.client_pool`: the HTTP/1.1 client, with keep-alive pooling per origin.
"""
