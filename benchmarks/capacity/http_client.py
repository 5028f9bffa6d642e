"""A light Streamable HTTP client on raw blocking sockets, so that no library under test is
measured as the client.

It does only what the capacity figures need: open a session (``initialize``, then
``notifications/initialized``) and open a session's standalone GET SSE stream, leaving it open.
HTTP/1.1 with keep-alive; a response body is read by ``Content-Length`` or chunked encoding.
Every socket wait has a timeout (``TIMEOUT_S``).
"""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass

__all__ = ["PROTOCOL_VERSION", "Connection", "HttpError", "OpenedSession", "open_get_stream"]

#: The revision asked for in ``initialize``; the server's answer decides the header sent after.
PROTOCOL_VERSION = "2025-06-18"
#: Seconds any one socket operation may take before the measurement fails.
TIMEOUT_S = 30.0
PATH = "/mcp"

_INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "capacity-bench", "version": "1.0"},
        },
    }
).encode()
_INITIALIZED = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()


class HttpError(Exception):
    """The server answered something a session opening does not expect."""


@dataclass(frozen=True, slots=True)
class OpenedSession:
    session_id: str
    protocol_version: str


@dataclass(slots=True)
class _Response:
    status: int
    headers: dict[str, str]
    body: bytes


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


class _Reader:
    """Buffered reads of an HTTP/1.1 response from a socket."""

    __slots__ = ("buffer", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    def _fill(self) -> None:
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionResetError("server closed the connection")
        self.buffer += data

    def until(self, marker: bytes) -> bytes:
        while (end := self.buffer.find(marker)) < 0:
            self._fill()
        line, self.buffer = self.buffer[:end], self.buffer[end + len(marker) :]
        return line

    def exactly(self, size: int) -> bytes:
        while len(self.buffer) < size:
            self._fill()
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    def head(self) -> tuple[int, dict[str, str]]:
        lines = self.until(b"\r\n\r\n").decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return status, headers

    def body(self, headers: dict[str, str]) -> bytes:
        if "chunked" in headers.get("transfer-encoding", "").lower():
            chunks: list[bytes] = []
            while size := int(self.until(b"\r\n").split(b";")[0], 16):
                chunks.append(self.exactly(size))
                self.until(b"\r\n")
            self.until(b"\r\n")
            return b"".join(chunks)
        return self.exactly(int(headers.get("content-length", "0")))


class Connection:
    """One keep-alive connection for POSTs, reopened when the server has closed it."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._sock: socket.socket | None = None
        self._reader: _Reader | None = None

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
        self._sock = self._reader = None

    def _post_once(self, body: bytes, extra: str) -> _Response:
        if self._sock is None or self._reader is None:
            self._sock = _connect(self.port)
            self._reader = _Reader(self._sock)
        request = (
            f"POST {PATH} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            f"{extra}Content-Length: {len(body)}\r\n\r\n"
        ).encode() + body
        self._sock.sendall(request)
        status, headers = self._reader.head()
        response = _Response(status, headers, self._reader.body(headers))
        if headers.get("connection", "").lower() == "close":
            self.close()
        return response

    def post(self, body: bytes, extra: str = "") -> _Response:
        """POST ``body``; a keep-alive connection the server closed meanwhile is reopened once."""
        reused = self._sock is not None
        try:
            return self._post_once(body, extra)
        except (ConnectionError, BrokenPipeError):
            self.close()
            if not reused:
                raise
            return self._post_once(body, extra)

    def open_session(self) -> OpenedSession:
        """``initialize`` then ``notifications/initialized``: the session the server keeps."""
        answer = self.post(_INITIALIZE)
        session_id = answer.headers.get("mcp-session-id")
        if answer.status != 200 or not session_id:
            raise HttpError(f"initialize got {answer.status} {answer.body[:200]!r}")
        version = _protocol_version(answer)
        headers = f"Mcp-Session-Id: {session_id}\r\nMCP-Protocol-Version: {version}\r\n"
        notified = self.post(_INITIALIZED, headers)
        if notified.status != 202:
            raise HttpError(f"notifications/initialized got {notified.status}")
        return OpenedSession(session_id, version)


def _protocol_version(answer: _Response) -> str:
    body = answer.body
    if answer.headers.get("content-type", "").startswith("text/event-stream"):
        # An SSE-framed answer: the JSON is on the `data:` line.
        body = next(
            line[5:] for line in body.split(b"\n") if line.startswith(b"data:") and line[5:].strip()
        )
    message = json.loads(body)
    if "result" not in message:
        raise HttpError(f"initialize failed: {body[:200]!r}")
    return str(message["result"]["protocolVersion"])


def open_get_stream(port: int, session: OpenedSession) -> socket.socket:
    """Open ``session``'s standalone GET SSE stream and return its socket once the head is in.

    The caller keeps the socket (the stream stays open) and closes it when done.
    """
    sock = _connect(port)
    try:
        sock.sendall(
            (
                f"GET {PATH} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n"
                f"Mcp-Session-Id: {session.session_id}\r\n"
                f"MCP-Protocol-Version: {session.protocol_version}\r\n\r\n"
            ).encode()
        )
        status, headers = _Reader(sock).head()
        if status != 200 or not headers.get("content-type", "").startswith("text/event-stream"):
            raise HttpError(f"GET stream got {status} {headers.get('content-type')!r}")
    except BaseException:
        sock.close()
        raise
    return sock
