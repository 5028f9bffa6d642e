"""Writes of the built-in server's connection (``BuiltinConnection.send``): parts (a head and a
body, a chunk's framing around an SSE event's parts) go out whole and in order however much of
them the socket takes at once."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import pytest
import trio

from mcptrio.transports.http.engine import builtin_connection
from mcptrio.transports.http.engine.builtin_connection import BuiltinConnection
from mcptrio.transports.http.engine.h11_parser import H11RequestParser
from mcptrio.transports.http.engine.server_limits import ServerLimits
from mcptrio.transports.http.engine.wait_timer import WaitTimer

HEAD = b"HTTP/1.1 200 OK\r\ncontent-length: 4000\r\n\r\n"
BODY = bytes(range(250)) * 16


def plain_connection(ours: trio.socket.SocketType) -> BuiltinConnection:
    no_app: Any = None
    connection = BuiltinConnection(
        trio.SocketStream(ours), no_app, H11RequestParser(1024), ServerLimits(), WaitTimer()
    )
    assert connection.fd is not None
    return connection


async def write_and_read(*parts: bytes) -> bytes:
    """``send(*parts)`` on a connection over a plain TCP-like socket pair; what the peer
    reads."""
    ours, theirs = trio.socket.socketpair()
    connection = plain_connection(ours)
    received = bytearray()
    with trio.fail_after(5), theirs:
        await connection.send(*parts)
        await connection.stream.aclose()
        while chunk := await theirs.recv(65536):
            received += chunk
    return bytes(received)


def take_at_most(monkeypatch: pytest.MonkeyPatch, first_write: int | None) -> None:
    """The socket's first write takes only ``first_write`` bytes (``None``: none at all, as a
    full socket); later writes go through as usual."""
    real_write, real_writev = os.write, os.writev
    calls = 0

    def fake_write(fd: int, data: Any) -> int:
        return fake_writev(fd, (data,))

    def fake_writev(fd: int, parts: Sequence[Any]) -> int:
        nonlocal calls
        calls += 1
        if calls > 1:
            return real_writev(fd, parts)
        if first_write is None:
            raise BlockingIOError
        return real_write(fd, b"".join(bytes(part) for part in parts)[:first_write])

    monkeypatch.setattr(builtin_connection.os, "write", fake_write)
    monkeypatch.setattr(builtin_connection.os, "writev", fake_writev)


@pytest.mark.parametrize(
    "first_write",
    [None, 5, len(HEAD), len(HEAD) + 7],
    ids=["nothing", "part-of-the-head", "the-head", "the-head-and-part-of-the-body"],
)
async def test_a_head_and_body_arrive_whole_however_much_the_first_write_takes(
    monkeypatch: pytest.MonkeyPatch, first_write: int | None
) -> None:
    take_at_most(monkeypatch, first_write)
    assert await write_and_read(HEAD, BODY) == HEAD + BODY


@pytest.mark.parametrize("first_write", [None, 5], ids=["nothing", "part"])
async def test_data_without_a_body_arrives_whole_however_much_the_first_write_takes(
    monkeypatch: pytest.MonkeyPatch, first_write: int | None
) -> None:
    take_at_most(monkeypatch, first_write)
    assert await write_and_read(BODY, b"") == BODY


async def test_a_head_and_body_go_out_together_when_the_socket_takes_them() -> None:
    assert await write_and_read(HEAD, BODY) == HEAD + BODY


@pytest.mark.parametrize(
    "first_write",
    [None, 3, 9, 9 + 100, 9 + len(BODY) + 1],
    ids=["nothing", "part-of-the-first", "the-first", "into-the-body", "into-the-last"],
)
async def test_many_parts_arrive_whole_and_in_order_however_much_the_first_write_takes(
    monkeypatch: pytest.MonkeyPatch, first_write: int | None
) -> None:
    take_at_most(monkeypatch, first_write)
    parts = (b"fa0\r\ndata: ", BODY, b"\n\n", b"\r\n")
    assert await write_and_read(*parts) == b"".join(parts)


async def test_more_parts_than_one_writev_takes_arrive_whole() -> None:
    parts = [b"%d," % n for n in range(3000)]
    assert await write_and_read(*parts) == b"".join(parts)
