"""A round-robin TCP balancer for tests: each new connection goes to the next backend that
accepts it, as a load balancer in front of several workers does.

It behaves like a real L4 balancer in front of pods, neither weaker nor stronger:

- A backend that refuses (its process is dead, or not back yet) is skipped for that connection,
  as nginx's ``proxy_next_upstream error`` or Envoy's ``connect-failure`` retry does: a refused
  connection provably carried nothing.
- A backend being stopped is **withdrawn** (:meth:`RoundRobinBalancer.withdraw`) at the moment
  it is sent SIGTERM, as Kubernetes takes a terminating pod out of its Service's endpoints, and
  the withdrawal takes effect :data:`PROPAGATION` seconds later, as an endpoint change reaches
  the proxies a moment after the pod got its signal. It is sent connections again once it
  accepts them (:meth:`RoundRobinBalancer.restore`, a passing readiness check). A killed backend
  is not withdrawn: a crash is learnt from refused connections only.
- A connection a backend accepted is never sent elsewhere: bytes are copied both ways until
  either side ends; a backend that resets it or dies mid-answer ends the client's connection
  too, as a real balancer's would, whatever the client had sent.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Sequence

import trio

_CHUNK = 65536
#: Seconds between a backend's withdrawal and the moment it gets no new connection (a
#: Kubernetes endpoint change takes about this long to reach the proxies on a quiet cluster).
PROPAGATION = 0.2


class RoundRobinBalancer:
    """Serve on a loopback port, spreading connections over ``ports`` (see the module)."""

    def __init__(self, ports: Sequence[int]) -> None:
        self.ports = list(ports)
        self._turns = itertools.cycle(range(len(self.ports)))
        #: How many connections each backend took, by port.
        self.taken = dict.fromkeys(self.ports, 0)
        # Withdrawn backends, by port, with the time from which they get no new connection.
        self._withdrawn: dict[int, float] = {}

    def withdraw(self, port: int) -> None:
        """The backend on ``port`` is being stopped: no new connection from
        :data:`PROPAGATION` seconds on (see the module)."""
        self._withdrawn[port] = trio.current_time() + PROPAGATION

    def restore(self, port: int) -> None:
        """The backend on ``port`` serves again: it gets connections again."""
        self._withdrawn.pop(port, None)

    async def serve(self, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
        """Accept until cancelled; reports the port it listens on."""
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        task_status.started(listeners[0].socket.getsockname()[1])
        await trio.serve_listeners(self._relay, listeners)

    async def _backend(self) -> trio.SocketStream | None:
        for _ in self.ports:
            port = self.ports[next(self._turns)]
            if self._withdrawn.get(port, float("inf")) <= trio.current_time():
                continue
            try:
                stream = await trio.open_tcp_stream("127.0.0.1", port)
            except OSError:
                continue
            self.taken[port] += 1
            return stream
        return None

    async def _relay(self, client: trio.SocketStream) -> None:
        backend = await self._backend()
        if backend is None:
            await trio.aclose_forcefully(client)
            return
        async with client, backend, trio.open_nursery() as nursery:
            nursery.start_soon(_copy, client, backend, nursery.cancel_scope)
            nursery.start_soon(_copy, backend, client, nursery.cancel_scope)


async def _copy(source: trio.SocketStream, sink: trio.SocketStream, both: trio.CancelScope) -> None:
    """Copy ``source`` to ``sink``; at ``source``'s end, half-close ``sink``; a broken side
    ends both directions."""
    try:
        while data := await source.receive_some(_CHUNK):
            await sink.send_all(data)
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            await sink.send_eof()
    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
        both.cancel()
