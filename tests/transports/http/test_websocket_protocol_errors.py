"""A WebSocket peer that breaks the protocol is told why: the connection is failed with the close
code RFC 6455 gives (1007 for text that is not UTF-8, 1002 for a malformed frame), on every HTTP
built-in front end, instead of being dropped without a word.

Hypercorn reads WebSocket frames itself and drops such a connection with no close frame (its
``ws_stream.py`` answers only the peer's own close); no ASGI app can change that, so it is
documented in docs/explanation/hostile-peers.md and not tested here.
"""

from __future__ import annotations

import os
import struct
from urllib.parse import urlsplit

import pytest
import trio
import wsproto
import wsproto.events as ws_events
from cancellation import Waiter
from front_ends_for_tests import open_front_end
from test_websocket import IO_LIMIT, WebSocketOnlyApp, make_server

BUILTIN = ["builtin-h11", "builtin-httptools"]


def masked_frame(opcode: int, payload: bytes, *, fin: bool = True, rsv: int = 0) -> bytes:
    """A client frame, built by hand so that it can be wrong."""
    first = (0x80 if fin else 0) | (rsv << 4) | opcode
    mask = os.urandom(4)
    body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    if len(payload) < 126:
        length = struct.pack("!B", 0x80 | len(payload))
    else:
        length = struct.pack("!BH", 0x80 | 126, len(payload))
    return bytes([first]) + length + mask + body


async def close_code_after(front_end: str, raw_frame: bytes) -> int | None:
    """Open a WebSocket to ``front_end``, send ``raw_frame``; the close code the server sends."""
    app = WebSocketOnlyApp(make_server(Waiter()))
    async with open_front_end(front_end, app) as base_url:
        parts = urlsplit(base_url)
        stream = await trio.open_tcp_stream(parts.hostname or "127.0.0.1", parts.port or 80)
        async with stream:
            client = wsproto.WSConnection(wsproto.ConnectionType.CLIENT)
            await stream.send_all(
                client.send(
                    ws_events.Request(host=parts.netloc, target="/mcp", subprotocols=["mcp"])
                )
            )
            accepted = False
            while not accepted:
                data = await stream.receive_some(65536)
                assert data, "the server closed during the handshake"
                client.receive_data(data)
                for event in client.events():
                    assert isinstance(event, ws_events.AcceptConnection), event
                    accepted = True
            await stream.send_all(raw_frame)
            while True:
                try:
                    data = await stream.receive_some(65536)
                except trio.BrokenResourceError:
                    data = b""
                client.receive_data(data or None)
                for event in client.events():
                    if isinstance(event, ws_events.CloseConnection):
                        return event.code
                if not data:
                    return None


@pytest.mark.parametrize("front_end", BUILTIN)
async def test_text_that_is_not_utf8_closes_with_1007(front_end: str) -> None:
    with trio.fail_after(IO_LIMIT):
        code = await close_code_after(front_end, masked_frame(0x1, b'{"a": "\xff\xfe"}'))
    assert code == 1007


@pytest.mark.parametrize("front_end", BUILTIN)
@pytest.mark.parametrize(
    "frame",
    [masked_frame(0x3, b"x"), masked_frame(0x1, b"{}", rsv=0b100)],
    ids=["reserved-opcode", "reserved-bit"],
)
async def test_a_malformed_frame_closes_with_1002(front_end: str, frame: bytes) -> None:
    with trio.fail_after(IO_LIMIT):
        code = await close_code_after(front_end, frame)
    assert code == 1002
