"""Newline-delimited framing, sans-IO.

The stdio transport (and, from 2026-07-28, any custom byte-stream transport) carries one JSON-RPC
message per line. :class:`LineFramer` turns the chunks of such a byte stream into frames and does
no I/O of its own, so it is tested synchronously and reused wherever lines are read.

Theory of operation
-------------------

Only the *new* chunk is ever scanned for newlines, never the buffer: the buffer holds at most
one partial line, which by construction contains no newline. So each byte is searched once,
however many small chunks a long line arrives in, and there is no quadratic rescan.

- A chunk with no newline is appended to the partial line.
- A chunk with newlines completes the partial line; everything after its last newline becomes
  the new partial line. ``bytes.split`` cuts the complete part, one copy per frame.
- Each line loses one trailing ``\\r`` (CRLF peers). Empty and whitespace-only lines are skipped.
- A line longer than the limit is never buffered whole. As soon as the partial line is certain to
  be over the limit, it is dropped, :class:`OversizedFrame` is emitted, and the framer discards
  bytes up to the next newline; then it carries on with the next line. A line that arrives
  complete inside one chunk is measured the same way, so the frames out never depend on how the
  input was chunked. The size check comes before the blank-line check for the same reason.

Memory is bounded by the limit plus one chunk.
"""

from __future__ import annotations

from ..runtime.transport import Frame, OversizedFrame

__all__ = ["LineFramer"]

_CR = 0x0D


class LineFramer:
    """Splits a byte stream into newline-delimited frames.

    Feed it chunks with :meth:`feed`, which returns the frames they complete; call
    :meth:`feed_eof` at the end of input to get the last, unterminated line, if any. A frame is
    ``bytes`` without its line ending, or ``OversizedFrame(max_frame_size)`` in place of a line
    longer than ``max_frame_size`` bytes (reported exactly once per line).
    """

    __slots__ = ("_discarding", "_limit", "_partial")

    def __init__(self, max_frame_size: int) -> None:
        if max_frame_size < 1:
            raise ValueError("max_frame_size must be at least 1")
        self._limit = max_frame_size
        # The current partial line: never contains b"\n".
        self._partial = bytearray()
        # True while skipping the rest of a line already reported as oversized.
        self._discarding = False

    @property
    def max_frame_size(self) -> int:
        return self._limit

    def feed(self, data: bytes | bytearray) -> list[Frame]:
        """Add a chunk of input; return the frames it completes, in order."""
        if type(data) is not bytes:
            data = bytes(data)
        if self._discarding:
            start = data.find(b"\n")
            if start < 0:
                return []
            self._discarding = False
            data = data[start + 1 :]
        if b"\n" not in data:
            if data:
                self._partial += data
                return self._check_partial()
            return []
        if self._partial:
            self._partial += data
            data = bytes(self._partial)
            self._partial.clear()
        lines = data.split(b"\n")
        rest = lines.pop()
        limit = self._limit
        frames: list[Frame] = []
        for line in lines:
            if line.endswith(b"\r"):
                line = line[:-1]
            if len(line) > limit:
                frames.append(OversizedFrame(limit))
            elif line and not line.isspace():
                frames.append(line)
        if rest:
            self._partial += rest
            frames.extend(self._check_partial())
        return frames

    def feed_eof(self) -> list[Frame]:
        """Mark the end of input; return the last line if it was unterminated and not blank.

        The framer is reset and could be fed again afterwards.
        """
        discarding, self._discarding = self._discarding, False
        if discarding or not self._partial:
            self._partial.clear()
            return []
        line = bytes(self._partial)
        self._partial.clear()
        if line.endswith(b"\r"):
            line = line[:-1]
        if len(line) > self._limit:
            return [OversizedFrame(self._limit)]
        if line and not line.isspace():
            return [line]
        return []

    def _check_partial(self) -> list[Frame]:
        partial = self._partial
        excess = len(partial) - self._limit
        # One byte over is not yet certain: a trailing "\r" may turn out to be half of "\r\n".
        if excess > 1 or (excess == 1 and partial[-1] != _CR):
            partial.clear()
            self._discarding = True
            return [OversizedFrame(self._limit)]
        return []
