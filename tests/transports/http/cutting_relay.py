"""A TCP relay for tests that can cut every connection through it at once, as a worker killed
mid-request does to its clients: the bytes already relayed have reached the server, and the
client sees its connection end before the answer."""

from __future__ import annotations

import trio

__all__ = ["CuttingRelay"]


class CuttingRelay:
    """Relays loopback connections to ``backend`` until :meth:`cut`."""

    def __init__(self, backend: int) -> None:
        self.backend = backend
        self.connections = 0
        self._live: set[trio.SocketStream] = set()

    def cut(self) -> None:
        """Close every connection now relayed, at the client's side and the server's."""
        for stream in self._live:
            stream.socket.close()

    async def _copy(self, source: trio.SocketStream, sink: trio.SocketStream) -> None:
        try:
            while data := await source.receive_some(65536):
                await sink.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass
        finally:
            await trio.aclose_forcefully(sink)
            await trio.aclose_forcefully(source)

    async def _relay(self, client: trio.SocketStream) -> None:
        self.connections += 1
        upstream = await trio.open_tcp_stream("127.0.0.1", self.backend)
        pair = {client, upstream}
        self._live |= pair
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._copy, client, upstream)
                nursery.start_soon(self._copy, upstream, client)
        finally:
            self._live -= pair

    async def serve(self, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
        """Listen on a loopback port, reported to ``task_status``."""
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        async with trio.open_nursery() as nursery:
            task_status.started(listeners[0].socket.getsockname()[1])
            await trio.serve_listeners(self._relay, listeners, handler_nursery=nursery)
