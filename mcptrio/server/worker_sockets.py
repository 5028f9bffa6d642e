"""The port the workers of ``run --workers N`` serve, and how each gets its share of it.

The supervisor binds the address itself, so that port 0 works and it knows the port before any
worker starts, and hands the socket down to every worker. Two ways to share it from there:

- **one queue** (``reuse_port=False``): the supervisor's socket listens and every worker accepts
  from it. Works wherever descriptors are inherited, and a worker that dies loses nothing that
  was waiting to be accepted. But whichever worker wakes first takes every connection pending,
  so a burst of connections (a client pool opening 32 keep-alive connections at once) can all
  land on one worker while the others idle;
- **one queue per worker** (``reuse_port=True``, the default on Linux): the supervisor's socket
  is bound with ``SO_REUSEPORT`` but never listens (it only holds the port); each worker binds
  its own listening socket to the same address, and the kernel spreads new connections evenly
  over them. Connections still waiting in a worker's queue when it dies are reset (Linux 5.14+
  can hand them to the others: ``net.ipv4.tcp_migrate_req``). Elsewhere ``SO_REUSEPORT`` does
  not balance (BSD and macOS give every connection to one socket), hence Linux only.

See ``docs/explanation/workers.md``.
"""

from __future__ import annotations

import socket
import sys
from typing import Final

__all__ = ["BACKLOG", "REUSE_PORT_BY_DEFAULT", "bind_listening_socket", "listen_beside", "url_of"]

#: Connections the kernel may queue for the workers (capped by ``somaxconn``).
BACKLOG: Final = 4096
#: Whether the workers get a queue each unless told otherwise (see the module docstring).
REUSE_PORT_BY_DEFAULT: Final = sys.platform == "linux"


def bind_listening_socket(host: str, port: int, *, reuse_port: bool = False) -> socket.socket:
    """A TCP socket bound to ``host:port`` (0: a free port) for the workers: listening (one
    queue), or only holding the address with ``SO_REUSEPORT`` (a queue per worker)."""
    family, kind, protocol, _name, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    bound = socket.socket(family, kind, protocol)
    try:
        bound.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            bound.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        bound.bind(address)
        if not reuse_port:
            bound.listen(BACKLOG)
    except BaseException:
        bound.close()
        raise
    return bound


def listen_beside(held: socket.socket) -> socket.socket:
    """A worker's own listening socket on the address ``held`` (the supervisor's
    ``SO_REUSEPORT`` socket) is bound to; ``held`` is closed."""
    with held:
        own = socket.socket(held.family, socket.SOCK_STREAM)
        try:
            own.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            own.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            own.bind(held.getsockname())
            own.listen(BACKLOG)
        except BaseException:
            own.close()
            raise
    return own


def url_of(bound: socket.socket) -> str:
    """``http://host:port`` of a bound socket."""
    host, port = bound.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
