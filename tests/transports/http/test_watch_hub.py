"""The built-in server's watch hub: one task hands every watched socket that turns readable to
its watcher, and a socket no longer watched is never handed over."""

from __future__ import annotations

import socket

import pytest
import trio
import trio.testing

from mcptrio.transports.http.engine.watch_hub import WatchHub


class Recorder:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reads: list[bytes] = []
        self.handed = trio.Event()

    def readable_now(self) -> None:
        self.reads.append(self.sock.recv(65536))
        self.handed.set()


def open_hub() -> WatchHub:
    hub = WatchHub.open()
    if hub is None:
        pytest.skip("no epoll on this platform")
    return hub


async def test_each_readable_socket_is_handed_to_its_watcher_by_one_task() -> None:
    hub = open_hub()
    pairs = [socket.socketpair() for _ in range(20)]
    try:
        recorders = [Recorder(ours) for ours, _ in pairs]
        for ours, _ in pairs:
            ours.setblocking(False)
        with trio.fail_after(10):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(hub.run)
                for (ours, _), recorder in zip(pairs, recorders, strict=True):
                    assert hub.add(ours.fileno(), recorder)
                await trio.testing.wait_all_tasks_blocked()
                assert all(not r.reads for r in recorders)
                pairs[3][1].sendall(b"pipelined")
                pairs[7][1].close()  # EOF
                await recorders[3].handed.wait()
                await recorders[7].handed.wait()
                assert recorders[3].reads == [b"pipelined"]
                assert recorders[7].reads[0] == b""
                assert all(not r.reads for i, r in enumerate(recorders) if i not in (3, 7))
                nursery.cancel_scope.cancel()
    finally:
        hub.close()
        for ours, theirs in pairs:
            ours.close()
            theirs.close()


async def test_a_socket_removed_from_the_hub_is_not_handed_over_again() -> None:
    hub = open_hub()
    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    recorder = Recorder(ours)
    try:
        with trio.fail_after(10):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(hub.run)
                assert hub.add(ours.fileno(), recorder)
                # Removing for another watcher of the same descriptor does nothing.
                hub.remove(ours.fileno(), Recorder(ours))
                theirs.sendall(b"one")
                await recorder.handed.wait()
                hub.remove(ours.fileno(), recorder)
                theirs.sendall(b"two")
                await trio.sleep(0.2)
                assert recorder.reads == [b"one"]
                assert ours.recv(16) == b"two"
                nursery.cancel_scope.cancel()
    finally:
        hub.close()
        ours.close()
        theirs.close()


async def test_a_closed_hub_takes_no_socket() -> None:
    hub = open_hub()
    hub.close()
    ours, theirs = socket.socketpair()
    with ours, theirs:
        assert not hub.add(ours.fileno(), Recorder(ours))
