"""A TCP load balancer for tests: each new connection goes to the next backend in turn, as a
load balancer without stickiness does; bytes are copied both ways until either side closes."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import trio

__all__ = ["serve_round_robin"]


async def _copy(source: trio.SocketStream, sink: trio.SocketStream) -> None:
    try:
        while data := await source.receive_some(65536):
            await sink.send_all(data)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass
    finally:
        # Either side closing ends the pair, so a cut connection is seen at both ends.
        await trio.aclose_forcefully(sink)
        await trio.aclose_forcefully(source)


async def serve_round_robin(
    backends: Sequence[int], *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
) -> None:
    """Listen on a loopback port (reported to ``task_status``) and spread connections over the
    loopback ``backends`` ports in turn."""
    turn = itertools.cycle(backends)
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")

    async def relay(client: trio.SocketStream) -> None:
        try:
            upstream = await trio.open_tcp_stream("127.0.0.1", next(turn))
        except OSError:
            await trio.aclose_forcefully(client)
            return
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_copy, client, upstream)
            nursery.start_soon(_copy, upstream, client)

    async with trio.open_nursery() as nursery:
        task_status.started(listeners[0].socket.getsockname()[1])
        await trio.serve_listeners(relay, listeners, handler_nursery=nursery)
