"""A round-robin TCP balancer for tests: each new connection goes to the next backend that
accepts it, as a load balancer in front of several workers does.

A backend that refuses (its process is dead, or not back yet) is skipped for that connection.
Bytes are copied both ways until either side ends; a backend that dies mid-answer ends the
client's connection too, as a real balancer's would.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Sequence

import trio

_CHUNK = 65536


class RoundRobinBalancer:
    """Serve on a loopback port, spreading connections over ``ports`` (see the module)."""

    def __init__(self, ports: Sequence[int]) -> None:
        self.ports = list(ports)
        self._turns = itertools.cycle(range(len(self.ports)))
        #: How many connections each backend took, by port.
        self.taken = dict.fromkeys(self.ports, 0)

    async def serve(self, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
        """Accept until cancelled; reports the port it listens on."""
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        task_status.started(listeners[0].socket.getsockname()[1])
        await trio.serve_listeners(self._relay, listeners)

    async def _backend(self) -> trio.SocketStream | None:
        for _ in self.ports:
            port = self.ports[next(self._turns)]
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
