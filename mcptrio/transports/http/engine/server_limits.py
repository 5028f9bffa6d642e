"""The limits of the built-in HTTP/1.1 server: :class:`ServerLimits`.

A module of its own so that the connection (:mod:`.builtin_connection`), which reads the
limits, need not import the server (:mod:`.builtin_server`) that makes connections with them
and re-exports this class.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ServerLimits"]


@dataclass(frozen=True, slots=True)
class ServerLimits:
    """Limits of the built-in server; every wait on a client has a deadline."""

    #: Connections served at once. Past it a new client takes the slot of the connection that
    #: has waited longest on its client, or gets 503 when every one is busy.
    max_connections: int = 1000
    #: Connections served at once per client address (``None``: no such limit). Leave it unset
    #: behind a reverse proxy, where every connection has the proxy's address.
    max_connections_per_client: int | None = None
    #: Seconds a client refused for want of a slot is told to wait (``Retry-After``).
    retry_after: int = 1
    #: Largest request line plus headers, in bytes (over it: 431).
    max_head_size: int = 65536
    #: Seconds a client has to send a whole request head once it has started it (or connected).
    header_timeout: float = 10.0
    #: Seconds an idle keep-alive connection waits for its next request.
    keep_alive_timeout: float = 5.0
    #: Seconds to wait for each piece of a request body.
    body_timeout: float = 30.0
    #: Seconds one write to the client may take.
    write_timeout: float = 30.0
    #: Bytes of an unread request body discarded to keep the connection; past this, it closes.
    discard_body_limit: int = 1 << 20
    #: Bytes of pipelined requests buffered while a streamed response is open.
    pipeline_buffer_limit: int = 1 << 16
    #: Seconds spent draining the client after the server half-closes a connection.
    linger_timeout: float = 1.0
    #: Seconds a stopping server goes on accepting new connections (each serves its request,
    #: answered with ``Connection: close``) before it closes its listener: the time a load
    #: balancer takes to stop sending it connections once it is told of the stop. A connection
    #: that reaches a closed listener is refused (safe), but one the kernel completes as the
    #: listener closes is reset after its request was sent (an unknown outcome).
    stop_listening_after: float = 1.0
