"""Server-sent events, sans-IO: an encoder and an incremental parser.

Both HTTP sides share this module: the server encodes JSON-RPC messages as SSE events (with ids
for resumability, ``retry:`` for the 2025-11-25 polling behaviour, and the empty-data priming
event), and the client feeds raw body chunks into :class:`SseParser` and gets whole events back.

The parser follows the WHATWG "interpreting an event stream" rules: lines end in CRLF, LF or CR;
a line starting with ``:`` is a comment; ``field: value`` drops one leading space of the value;
``data`` lines are joined with LF; a blank line dispatches the event; an ``id`` containing NUL
is ignored; ``retry`` is honoured only when it is all ASCII digits. Unlike a browser it does
dispatch events whose data is empty, because MCP's priming event is exactly that and a client
must remember its id. A line longer than ``max_line`` raises :class:`SseError` rather than
buffering without bound.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SseError", "SseEvent", "SseParser", "encode_comment", "encode_event"]


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event. ``id`` is the event's own ``id:`` field, if it had one."""

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


class SseError(ValueError):
    """The stream is not valid SSE or exceeds a limit."""


def encode_event(
    data: bytes | str,
    *,
    event_id: str | None = None,
    event: str | None = None,
    retry_ms: int | None = None,
) -> bytes:
    """Encode one event. ``data`` may hold newlines; each line becomes its own ``data:`` line.

    ``event`` is omitted when ``None`` (the client then treats it as ``message``). An empty
    ``data`` still produces one ``data:`` line, which is how the priming event is written.
    """
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    parts: list[str] = []
    if event_id is not None:
        if "\n" in event_id or "\r" in event_id or "\0" in event_id:
            raise ValueError("An SSE event id cannot hold CR, LF or NUL")
        parts.append(f"id: {event_id}\n")
    if event is not None:
        parts.append(f"event: {event}\n")
    if retry_ms is not None:
        parts.append(f"retry: {int(retry_ms)}\n")
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        parts.append(f"data: {line}\n")
    parts.append("\n")
    return "".join(parts).encode("utf-8")


def encode_comment(text: str = "") -> bytes:
    """A comment line (a keep-alive that clients ignore)."""
    return f": {text}\n\n".encode() if text else b":\n\n"


class SseParser:
    """Turns body chunks into :class:`SseEvent` s.

    ``last_event_id`` is the stream's current last-event-id (it persists across events, as the
    spec says) and ``retry`` the last valid reconnection delay in milliseconds.
    """

    def __init__(self, *, max_line: int = 16 * 1024 * 1024) -> None:
        self.max_line = max_line
        self.last_event_id: str | None = None
        self.retry: int | None = None
        self._buffer = bytearray()
        self._data: list[str] = []
        self._event = ""
        self._id_seen = False
        self._id_buffer: str | None = None
        self._retry_seen: int | None = None
        self._pending_cr = False
        self._first = True

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """Feed the next chunk; returns the events it completed (possibly none).

        Line ends are found with ``bytes.find`` (in C), never byte by byte in Python: a
        100 KiB event costs a few searches, not 100,000 loop turns. The search resumes where
        the previous chunk's left off, so a long line arriving in many chunks is scanned once.
        """
        if self._first and chunk:
            self._first = False
            if chunk.startswith(b"\xef\xbb\xbf"):
                chunk = chunk[3:]
        if self._pending_cr and chunk:
            # The previous chunk ended in CR: an LF starting this one belongs to that line end.
            self._pending_cr = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        events: list[SseEvent] = []
        buf = self._buffer
        # The kept buffer holds no line end: the search starts at the new bytes.
        scan_from = len(buf)
        buf += chunk
        n = len(buf)
        start = 0
        lf = buf.find(b"\n", scan_from)
        cr = buf.find(b"\r", scan_from)
        while lf >= 0 or cr >= 0:
            if cr < 0 or 0 <= lf < cr:
                end = next_start = lf
                next_start += 1
            else:
                end = cr
                if cr + 1 == n:
                    # A CR that ends the buffer: the LF of a CRLF may come with the next chunk.
                    self._pending_cr = True
                    next_start = n
                else:
                    next_start = cr + 2 if buf[cr + 1] == 0x0A else cr + 1
            event = self._line(bytes(buf[start:end]))
            if event is not None:
                events.append(event)
            start = next_start
            if 0 <= lf < start:
                lf = buf.find(b"\n", start)
            if 0 <= cr < start:
                cr = buf.find(b"\r", start)
        del buf[:start]
        if len(buf) > self.max_line:
            raise SseError(f"An SSE line is longer than {self.max_line} bytes")
        return events

    def _line(self, raw: bytes) -> SseEvent | None:
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            line = raw.decode("utf-8", errors="replace")
        if not line:
            return self._dispatch()
        if line[0] == ":":
            return None
        field, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id":
            if "\0" not in value:
                # Like a browser's "last event ID buffer": it becomes the stream's last event
                # id only when the event completes, so a cut inside an event resumes before it.
                self._id_buffer = value
                self._id_seen = True
        elif field == "retry" and value.isascii() and value.isdigit():
            self.retry = int(value)
            self._retry_seen = self.retry
        return None

    def _dispatch(self) -> SseEvent | None:
        had_fields = bool(self._data) or self._id_seen or self._retry_seen is not None
        if self._id_seen:
            self.last_event_id = self._id_buffer
        data = "\n".join(self._data)
        event = SseEvent(
            data=data,
            event=self._event or "message",
            id=self.last_event_id if self._id_seen else None,
            retry=self._retry_seen,
        )
        self._data = []
        self._event = ""
        self._id_seen = False
        self._retry_seen = None
        return event if had_fields else None
