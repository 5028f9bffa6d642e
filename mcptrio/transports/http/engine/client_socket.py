"""The plain-TCP stream of an HTTP client connection: a non-blocking socket and Trio's I/O waits.

A request on a keep-alive connection is one write, then a wait for the answer. Over a
``trio.SocketStream`` that write ends with a trip through the scheduler (every ``send_all`` is
a checkpoint), and the read after it first tries the socket, which cannot hold the answer yet,
fails, and only then waits. :class:`ConnectionStream` does the same I/O on the socket itself,
with ``trio.lowlevel.wait_readable`` / ``wait_writable`` (Trio's public API for I/O on a socket
of one's own), and skips those two steps:

- ``send_all`` checks for cancellation before writing (a cancelled request is never written,
  as with Trio's streams) but does not checkpoint after a write the kernel took whole. The
  invariant that makes this safe: the pool follows every write of a request with a read of its
  answer, in the same task or concurrently (:mod:`.client_pool`), and that read waits, so an
  exchange still goes through the scheduler once;
- the first ``receive_some`` after a write waits for the socket to become readable before
  reading (the answer cannot come before the request; a server that spoke first is read all
  the same, as the wait returns at once), and does not checkpoint again after it: the wait was
  the checkpoint;
- any other ``receive_some`` is Trio's: read at once, wait only if nothing is there, and
  checkpoint after an immediate read, so a stream whose bytes keep coming never starves the
  other tasks.

Errors are Trio's stream errors: ``trio.BrokenResourceError`` when the connection broke,
``trio.ClosedResourceError`` when it was closed here. TLS connections keep ``trio.SSLStream``
over Trio's socket stream; this class is for ``http://`` only.
"""

from __future__ import annotations

import errno
import select
import socket

import trio

__all__ = ["ConnectionStream"]


class ConnectionStream(trio.abc.Stream):
    """A connected TCP socket as a Trio stream, for one HTTP/1.1 exchange at a time."""

    __slots__ = ("_answer_due", "_sock")

    def __init__(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        self._sock = sock
        #: Set by a write, cleared by the read that follows: that read waits before reading.
        self._answer_due = False

    @classmethod
    def take(cls, stream: trio.SocketStream) -> ConnectionStream:
        """The socket of ``stream`` (which Trio connected) as a :class:`ConnectionStream`;
        ``stream`` is left closed."""
        fd = stream.socket.detach()
        return cls(socket.socket(fileno=fd))

    def is_readable(self) -> bool:
        """Whether a read would not block: bytes arrived, or the peer closed."""
        if self._sock.fileno() == -1:
            return True
        # poll, not select: a busy process's descriptors go past select's limit of 1024.
        poller = select.poll()
        poller.register(self._sock, select.POLLIN)
        return bool(poller.poll(0))

    def setsockopt(self, level: int, option: int, value: int) -> None:
        self._sock.setsockopt(level, option, value)

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await trio.lowlevel.checkpoint_if_cancelled()
        sock = self._sock
        if sock.fileno() == -1:
            raise trio.ClosedResourceError("The connection is closed")
        self._answer_due = True
        view = memoryview(data)
        sent = 0
        while sent < len(view):
            try:
                sent += sock.send(view[sent:])
                continue
            except BlockingIOError:
                pass  # the kernel's buffer is full: wait below, outside the handler
            except OSError as exc:
                raise _stream_error(exc) from exc
            await trio.lowlevel.wait_writable(sock)

    async def wait_send_all_might_not_block(self) -> None:
        await trio.lowlevel.wait_writable(self._sock)

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        sock = self._sock
        if sock.fileno() == -1:
            raise trio.ClosedResourceError("The connection is closed")
        size = 65536 if max_bytes is None else max_bytes
        if self._answer_due:
            self._answer_due = False
        else:
            await trio.lowlevel.checkpoint_if_cancelled()
            data = _recv(sock, size)
            if data is not None:
                await trio.lowlevel.cancel_shielded_checkpoint()
                return data
        while True:
            await trio.lowlevel.wait_readable(sock)
            data = _recv(sock, size)
            if data is not None:
                return data

    async def aclose(self) -> None:
        if self._sock.fileno() != -1:
            # Wakes a task waiting on the socket (it gets ClosedResourceError) before it closes.
            trio.lowlevel.notify_closing(self._sock)
            self._sock.close()
        await trio.lowlevel.checkpoint()


def _recv(sock: socket.socket, size: int) -> bytes | None:
    """What the socket holds, up to ``size`` bytes; ``None`` when nothing yet (a readiness
    without bytes is possible: the caller waits again)."""
    try:
        return sock.recv(size)
    except BlockingIOError:
        return None
    except OSError as exc:
        raise _stream_error(exc) from exc


def _stream_error(exc: OSError) -> trio.BrokenResourceError | trio.ClosedResourceError:
    if exc.errno == errno.EBADF:
        return trio.ClosedResourceError("The connection is closed")
    return trio.BrokenResourceError(f"The connection broke: {exc}")
