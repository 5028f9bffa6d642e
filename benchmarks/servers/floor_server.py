"""The stdio floor: ``python -m benchmarks.servers.floor_server``, a bare line echo.

It reads JSON-RPC lines on stdin and writes, for each request, its fixed answer line with the
request's id (``floor_answers``); a notification gets no answer. No event loop, no JSON parsing:
a blocking read of whatever the pipe holds, the answers of every complete line in it, one write.
That is the least a stdio server can do per call, and what the library cells of the same
harness are set beside (the floor's driver, ``benchmarks/drive_floor.py``, spawns it).
"""

from __future__ import annotations

import os

from .floor_answers import answer_halves, request_id

_READ_SIZE = 1 << 16


def answer_lines(lines: list[bytes]) -> bytes:
    """The answer lines of these request lines (notifications and blank lines get none)."""
    out: list[bytes] = []
    for line in lines:
        identifier = request_id(line)
        if identifier is None:
            continue
        before, after = answer_halves(line)
        out += (before, identifier, after, b"\n")
    return b"".join(out)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def serve(stdin: int = 0, stdout: int = 1) -> None:
    """Answer lines until the end of ``stdin``."""
    pending = b""
    while chunk := os.read(stdin, _READ_SIZE):
        *lines, pending = (pending + chunk).split(b"\n")
        answers = answer_lines(lines)
        if answers:
            _write_all(stdout, answers)


if __name__ == "__main__":
    serve()
