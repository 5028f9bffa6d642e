"""Newline-delimited framing, sans-IO.

The stdio transport (and, from 2026-07-28, any custom byte-stream transport) carries one JSON-RPC
message per line. :class:`LineFramer` turns the chunks of such a byte stream into frames and does
no I/O of its own, so it is tested synchronously and reused wherever lines are read.

Theory of operation
-------------------

Only the *new* chunk is ever scanned for newlines, never the buffer: the buffer holds at most
one partial line, which by construction contains no newline. So each byte is searched once,
however many small chunks a long line arrives in, and there is no quadratic rescan.

- A chunk with no newline is appended to the partial line, which is kept as a list of the
  chunks as read (no copy); chunks under 4 KiB are gathered into one part first, so that a
  peer trickling a long line a few bytes at a time costs no more than about 1% extra memory.
- A chunk with newlines completes the partial line with a single join of its parts and the
  chunk's head; everything after its last newline becomes the new partial line.
  ``bytes.split`` cuts the rest, one copy per frame. So every frame is copied once, however
  many reads it arrives in (a growing buffer would copy it in, out, and again to split it; see
  ``docs/explanation/payload-cost.md``).
- Each line loses one trailing ``\\r`` (CRLF peers). Empty and whitespace-only lines are skipped.
- A line longer than the limit is never buffered whole. As soon as the partial line is certain to
  be over the limit, it is dropped but for its first and last kilobyte, and the framer discards
  bytes up to the next newline, keeping only the last kilobyte seen; when the line ends it
  emits :class:`OversizedFrame`, with how the line began and ended (which say whose it was),
  then carries on with the next line. A line that arrives
  complete inside one chunk is measured the same way, so the frames out never depend on how the
  input was chunked. The size check comes before the blank-line check for the same reason.

Memory is bounded by the limit plus one chunk (and 2 KiB for a line being skipped).
"""

from __future__ import annotations

from ..protocol.unreadable import LEADING_LOOK_BYTES
from ..runtime.transport import Frame, oversized_frame

# How many of a skipped line's last bytes are kept: an oversized frame's tail, and its "\r".
_TAIL_KEPT = LEADING_LOOK_BYTES + 1

__all__ = ["LineFramer"]

_CR = 0x0D


# Chunks shorter than this are gathered into one part of a partial line (see the module
# docstring): each part has a fixed cost besides its data, which this makes small next to it.
_MIN_PART = 4096


class LineFramer:
    """Splits a byte stream into newline-delimited frames.

    Feed it chunks with :meth:`feed`, which returns the frames they complete; call
    :meth:`feed_eof` at the end of input to get the last, unterminated line, if any. A frame is
    ``bytes`` without its line ending, or an ``OversizedFrame`` in place of a line
    longer than ``max_frame_size`` bytes (reported exactly once per line).
    """

    __slots__ = (
        "_discarding",
        "_limit",
        "_parts",
        "_size",
        "_skipped_head",
        "_skipped_tail",
        "_small",
    )

    def __init__(self, max_frame_size: int) -> None:
        if max_frame_size < 1:
            raise ValueError("max_frame_size must be at least 1")
        self._limit = max_frame_size
        # The current partial line (never containing b"\n"): ``_parts`` then ``_small``, the
        # short chunks not yet made a part; ``_size`` bytes in all.
        self._parts: list[bytes] = []
        self._small = bytearray()
        self._size = 0
        # True while skipping the rest of a line found to be oversized; how it began, and its
        # last bytes so far (one more than a tail keeps, for a "\r" that ends up its ending).
        self._discarding = False
        self._skipped_head = b""
        self._skipped_tail = bytearray()

    @property
    def max_frame_size(self) -> int:
        return self._limit

    def feed(self, data: bytes | bytearray) -> list[Frame]:
        """Add a chunk of input; return the frames it completes, in order."""
        if type(data) is not bytes:
            data = bytes(data)
        frames: list[Frame] = []
        if self._discarding:
            start = data.find(b"\n")
            if start < 0:
                self._keep_tail(data)
                return frames
            self._keep_tail(memoryview(data)[:start])
            frames.append(self._skipped())
            data = data[start + 1 :]
        end = data.find(b"\n")
        if end < 0:
            if data:
                self._add(data)
                frames.extend(self._check_partial())
            return frames
        if self._size:
            lines = [self._take_line(memoryview(data)[:end])]
            lines += data[end + 1 :].split(b"\n")
        else:
            lines = data.split(b"\n")
        rest = lines.pop()
        limit = self._limit
        for line in lines:
            if line.endswith(b"\r"):
                line = line[:-1]
            if len(line) > limit:
                frames.append(oversized_frame(limit, line))
            elif line and not line.isspace():
                frames.append(line)
        if rest:
            self._add(rest)
            frames.extend(self._check_partial())
        return frames

    def feed_eof(self) -> list[Frame]:
        """Mark the end of input; return the last line if it was unterminated and not blank.

        The framer is reset and could be fed again afterwards.
        """
        if self._discarding:
            self._clear()
            return [self._skipped()]
        if not self._size:
            return []
        line = self._take_line(b"")
        if line.endswith(b"\r"):
            line = line[:-1]
        if len(line) > self._limit:
            return [oversized_frame(self._limit, line)]
        if line and not line.isspace():
            return [line]
        return []

    def _add(self, data: bytes) -> None:
        """Append ``data`` (not empty, no newline) to the partial line."""
        self._size += len(data)
        small = self._small
        if small or len(data) < _MIN_PART:
            small += data
            if len(small) >= _MIN_PART:
                self._parts.append(bytes(small))
                small.clear()
        else:
            self._parts.append(data)

    def _take_line(self, head: bytes | memoryview) -> bytes:
        """The partial line completed by ``head``, as one ``bytes``; the partial line is reset."""
        parts: list[bytes | memoryview] = [*self._parts]
        if self._small:
            parts.append(bytes(self._small))
        parts.append(head)
        self._clear()
        return b"".join(parts)

    def _clear(self) -> None:
        self._parts.clear()
        self._small.clear()
        self._size = 0

    def _check_partial(self) -> list[Frame]:
        excess = self._size - self._limit
        if excess <= 0:
            return []
        last = self._small[-1] if self._small else self._parts[-1][-1]
        # One byte over is not yet certain: a trailing "\r" may turn out to be half of "\r\n".
        if excess > 1 or last != _CR:
            # Reported when it ends, with how it began and how it ended (either may hold its
            # id); meanwhile only those are kept.
            self._skipped_head = self._head()
            self._skipped_tail[:] = self._last(_TAIL_KEPT)
            self._clear()
            self._discarding = True
        return []

    def _last(self, wanted: int) -> bytes:
        """The partial line's last ``wanted`` bytes, at most."""
        pieces: list[bytes] = [bytes(self._small)] if self._small else []
        have = len(self._small)
        for part in reversed(self._parts):
            if have >= wanted:
                break
            pieces.append(part[-(wanted - have) :])
            have += len(pieces[-1])
        return b"".join(reversed(pieces))[-wanted:]

    def _keep_tail(self, data: bytes | memoryview) -> None:
        """Keep the last bytes of a line being skipped, ``data`` its next piece."""
        tail = self._skipped_tail
        if len(data) >= _TAIL_KEPT:
            tail[:] = data[-_TAIL_KEPT:]
        else:
            tail += data
            if len(tail) > _TAIL_KEPT:
                del tail[: len(tail) - _TAIL_KEPT]

    def _skipped(self) -> Frame:
        """The line skipped, now ended: an :class:`OversizedFrame` with how it began and ended
        (without the ``"\r"`` of a CRLF ending, as any line)."""
        tail = bytes(self._skipped_tail)
        if tail.endswith(b"\r"):
            tail = tail[:-1]
        frame = oversized_frame(self._limit, self._skipped_head, tail)
        self._discarding = False
        self._skipped_head = b""
        self._skipped_tail.clear()
        return frame

    def _head(self) -> bytes:
        """The partial line's first bytes, as many as an oversized frame's head keeps (see
        :func:`~mcptrio.runtime.transport.oversized_frame`)."""
        wanted = min(LEADING_LOOK_BYTES, self._limit + 1)
        head = bytearray()
        for part in self._parts:
            head += part[: wanted - len(head)]
            if len(head) >= wanted:
                return bytes(head)
        head += self._small[: wanted - len(head)]
        return bytes(head)
