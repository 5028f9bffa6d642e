"""``max_sessions_per_client``: one client address cannot open every session the server has; it
hears 503 with ``Retry-After`` while other clients are still served."""

from __future__ import annotations

from urllib.parse import urlsplit

import trio
import trio.testing
from test_streamable_http import POST_HEADERS, initialize_body, make_server, serve

from mcptrio.transports.http.endpoints.app import McpHttpApp
from mcptrio.transports.http.endpoints.security import HttpSecurity


async def initialize_from(url: str, local: str) -> tuple[int, dict[str, str]]:
    """POST initialize from the address ``local``; the status and headers."""
    parts = urlsplit(url)
    stream = await trio.open_tcp_stream(parts.hostname or "", parts.port or 80, local_address=local)
    body = initialize_body("2025-06-18")
    head = ["POST /mcp HTTP/1.1", f"host: {parts.netloc}", f"content-length: {len(body)}"]
    head += [f"{name}: {value}" for name, value in POST_HEADERS]
    async with stream:
        await stream.send_all(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        data = b""
        while b"\r\n\r\n" not in data:
            data += await stream.receive_some(65536)
    lines = data.split(b"\r\n\r\n", 1)[0].decode().split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    return int(lines[0].split(" ")[1]), headers


async def test_a_client_past_its_session_limit_gets_503_while_others_are_served(
    front_end: str,
) -> None:
    security = HttpSecurity(max_sessions_per_client=2, retry_after=3)
    app = McpHttpApp(make_server(), security=security)
    with trio.fail_after(10):
        async with serve(front_end, app) as url:
            first = await initialize_from(url, "127.0.0.1")
            second = await initialize_from(url, "127.0.0.1")
            assert (first[0], second[0]) == (200, 200)
            refused, headers = await initialize_from(url, "127.0.0.1")
            assert refused == 503
            assert headers["retry-after"] == "3"
            assert (await initialize_from(url, "127.0.0.2"))[0] == 200
            # A session of the client ends: it may open another.
            app.registry.sessions[first[1]["mcp-session-id"]].close()
            await trio.testing.wait_all_tasks_blocked()
            assert (await initialize_from(url, "127.0.0.1"))[0] == 200
