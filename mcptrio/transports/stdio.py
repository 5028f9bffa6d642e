"""The stdio transport: newline-delimited JSON-RPC over a pair of byte streams.

One :class:`StdioTransport` class serves both sides; only how the streams are obtained differs:

- :func:`open_stdio_server_transport` wraps the process's own stdin and stdout, and keeps
  everything that is not an MCP frame off stdout while it is open.
- :func:`open_stdio_client_transport` spawns the server as a subprocess, forwards its stderr to
  a logger, and shuts it down the way the spec asks when the block exits: close its stdin, wait,
  ``SIGTERM``, wait, ``SIGKILL``.

The framing itself lives in :mod:`mcptrio.transports.stdio_framing`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import NoReturn, TextIO

import trio

from ..protocol.errors import ConnectionClosed
from ..runtime.transport import DEFAULT_MAX_FRAME_SIZE, Frame, Outgoing, TransportAbilities
from .stdio_framing import LineFramer

__all__ = [
    "DEFAULT_READ_SIZE",
    "LineFramer",
    "StdioClientTransport",
    "StdioTransport",
    "exit_message",
    "open_stdio_client_transport",
    "open_stdio_server_transport",
]

logger = logging.getLogger("mcptrio.transports.stdio")

#: How many bytes one read asks the receive stream for.
DEFAULT_READ_SIZE = 65536
#: The logger a spawned server's stderr goes to, unless another is given.
SERVER_STDERR_LOGGER = "mcptrio.stdio.server_stderr"

# How long to wait for a server to exit after SIGKILL before giving up on it.
_KILL_WAIT = 5.0
# How long, once the server has exited, to keep forwarding stderr still in the pipe. A
# grandchild holding the pipe open must not keep the client from finishing.
_STDERR_DRAIN_GRACE = 0.5
# stderr lines longer than this are dropped (and the drop logged).
_STDERR_MAX_LINE = 64 * 1024
# How many of the server's last stderr lines are kept, to say why it exited.
_STDERR_TAIL_LINES = 20
# How long a server whose stdout ended may take to exit before it is taken as still running.
_EXIT_WAIT = 1.0
# The last words of a stderr quoted in an error are cut to this many characters.
_LAST_WORDS_MAX = 300
# Lines a runtime prints after the error itself (Node ends an uncaught error with its version).
_TRAILERS = ("Node.js v",)


class StdioTransport:
    """A :class:`~mcptrio.runtime.transport.Transport` over a receive stream and a send stream.

    Each frame travels as one line: the frame's bytes followed by ``b"\\n"``. Incoming lines lose
    a trailing ``"\\r"``; blank lines are skipped; a line over ``max_frame_size`` is skipped
    without being buffered whole and reported as one ``OversizedFrame``.

    :meth:`receive` reads ``read_size`` bytes at a time and hands out the frames they hold one by
    one. It is safe to cancel: a frame already read stays buffered for the next call. At the end
    of input it returns the last line even if it lacks a newline, then raises
    ``trio.EndOfChannel`` on this and every later call; before the first of them it awaits
    :attr:`at_end_of_input`, when one is set (a server waits there for the requests in flight
    to be answered, since the session ends with the transport). Errors of the underlying stream
    (``trio.BrokenResourceError``, ``trio.ClosedResourceError``) propagate unchanged.

    :meth:`send` writes all its frames with a single ``send_all``, so a batch of frames reaches
    the peer in order and cannot be interleaved with anything else. It adds no checks of its own:
    frames are encoded JSON, in which newlines are always escaped. Backpressure is the send
    stream's: ``send`` blocks until the stream has taken every byte. Cancelling ``send`` part
    way may leave a partial line behind, after which the stream is unusable (as with any trio
    stream).

    :meth:`aclose` closes both streams, the send stream first; it is idempotent.
    """

    def __init__(
        self,
        receive_stream: trio.abc.ReceiveStream,
        send_stream: trio.abc.SendStream,
        *,
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
        read_size: int = DEFAULT_READ_SIZE,
    ) -> None:
        if read_size < 1:
            raise ValueError("read_size must be at least 1")
        self.receive_stream = receive_stream
        self.send_stream = send_stream
        self._framer = LineFramer(max_frame_size)
        self._read_size = read_size
        self._pending: deque[Frame] = deque()
        self._at_eof = False
        self._closed = False
        #: Awaited once, when input has ended and every frame has been received, before
        #: ``receive`` raises ``trio.EndOfChannel``.
        self.at_end_of_input: Callable[[], Awaitable[object]] | None = None

    @property
    def max_frame_size(self) -> int:
        return self._framer.max_frame_size

    async def receive(self) -> Frame:
        """The next incoming frame; ``trio.EndOfChannel`` at the end of input."""
        pending = self._pending
        if pending:
            # Frames left from the last read are handed over without yielding: the session then
            # starts every request of that read in one tick, their answers reach its writer
            # together and go out in one write. That is bounded (one read's worth), since the
            # read below is a checkpoint; yielding here made the writer send one answer per
            # write under load, costing a third of the throughput.
            return pending.popleft()
        framer = self._framer
        while not pending:
            if self._at_eof:
                hook, self.at_end_of_input = self.at_end_of_input, None
                if hook is not None:
                    await hook()
                raise trio.EndOfChannel
            data = await self.receive_stream.receive_some(self._read_size)
            if data:
                pending.extend(framer.feed(data))
            else:
                self._at_eof = True
                pending.extend(framer.feed_eof())
        return pending.popleft()

    async def send(self, frames: Sequence[Outgoing]) -> None:
        """Write ``frames`` in order, each on its own line, with one ``send_all``."""
        if len(frames) == 1:
            data = frames[0].data + b"\n"
        elif frames:
            parts = [frame.data for frame in frames]
            parts.append(b"")
            data = b"\n".join(parts)
        else:
            await trio.lowlevel.checkpoint()
            return
        await self.send_stream.send_all(data)

    def abilities(self) -> TransportAbilities:
        # Writes go to a stream, which may block: nothing is taken without waiting.
        return TransportAbilities()

    async def aclose(self) -> None:
        """Close both streams; safe to call more than once."""
        if self._closed:
            await trio.lowlevel.checkpoint()
            return
        self._closed = True
        try:
            await self.send_stream.aclose()
        finally:
            await self.receive_stream.aclose()


class StdioClientTransport(StdioTransport):
    """The client side of stdio: a :class:`StdioTransport` over a spawned server's pipes.

    ``process`` is the server's ``trio.Process``; its ``returncode`` is set once it has exited.
    ``stderr_tail`` holds the last lines of the server's stderr (they are logged as well);
    :meth:`exit_error` says why a server whose output ended is gone.
    """

    def __init__(
        self,
        process: trio.Process,
        *,
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
        read_size: int = DEFAULT_READ_SIZE,
    ) -> None:
        if process.stdout is None or process.stdin is None:
            raise ValueError("the process needs piped stdin and stdout")
        super().__init__(
            process.stdout, process.stdin, max_frame_size=max_frame_size, read_size=read_size
        )
        self.process = process
        self.stderr_tail: deque[str] = deque(maxlen=_STDERR_TAIL_LINES)
        self.stderr_done = trio.Event()

    async def exit_error(self) -> ConnectionClosed | None:
        """Why the server is gone, once its output has ended: a :class:`ConnectionClosed`
        naming its exit code (or the signal that killed it) and the last words of its stderr,
        one line (``the server exited with code 1: RuntimeError: no database URL``).
        ``None`` if it is still running a moment later (it closed its stdout and lives on)."""
        process = self.process
        with trio.move_on_after(_EXIT_WAIT):
            await process.wait()
        if process.returncode is None:
            return None
        # The last lines may still be in the pipe when the process has gone.
        with trio.move_on_after(_STDERR_DRAIN_GRACE):
            await self.stderr_done.wait()
        return ConnectionClosed(exit_message(process.returncode, self.stderr_tail))


def exit_message(returncode: int, stderr_tail: Sequence[str]) -> str:
    """One line for a server that exited with ``returncode`` having written ``stderr_tail``.

    The last words are the last line of stderr that is not indented (a traceback's frames and
    a stack's ``at ...`` lines are) and not a runtime's trailer: the exception line of a Python
    traceback or of a Node crash, or what ``sys.exit("...")`` printed.
    """
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        how = f"the server was killed by {name}"
    else:
        how = f"the server exited with code {returncode}"
    last = next(
        (
            line.strip()
            for line in reversed(stderr_tail)
            if line.strip() and not line[:1].isspace() and not line.startswith(_TRAILERS)
        ),
        None,
    )
    if last is None:
        return f"{how} (nothing on stderr)"
    if len(last) > _LAST_WORDS_MAX:
        last = last[: _LAST_WORDS_MAX - 3] + "..."
    return f"{how}: {last}"


@asynccontextmanager
async def open_stdio_server_transport(
    *,
    stdin: trio.abc.ReceiveStream | None = None,
    stdout: trio.abc.SendStream | None = None,
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
) -> AsyncIterator[StdioTransport]:
    """Open the server side of stdio: frames in on stdin, frames out on stdout.

    By default the transport reads and writes duplicates of file descriptors 0 and 1 (through
    ``trio.lowlevel.FdStream``, so Unix only), which leaves the real descriptors open when the
    transport closes. Pass ``stdin`` and ``stdout`` streams to use those instead, for example in
    tests.

    **Nothing but MCP frames reaches stdout while the block is active.** The spec forbids
    anything else there, and one stray ``print()`` would corrupt the protocol stream, so:

    - ``sys.stdout`` is flushed and then replaced by ``sys.stderr``: a ``print()`` anywhere in
      the process lands on stderr, which the client logs. It is restored on exit.
    - When the real stdout is used (``stdout`` not given), file descriptor 1 itself is also
      pointed at stderr, so that writes that bypass ``sys.stdout`` (C extensions, handlers
      holding the original ``sys.stdout``, child processes a tool starts) are diverted too. The
      transport writes through its own duplicate of the original descriptor, and descriptor 1
      is restored on exit.

    Caveat, inherited from ``FdStream``: the descriptors are put in non-blocking mode, which
    applies to their whole open file description. When stdin, stdout and stderr are all the same
    terminal, stderr becomes non-blocking too while the block is active; MCP clients give the
    server separate pipes, where this does not arise. Blocking mode is restored on exit.

    The block's exit closes the transport. End of input (the client closed our stdin) shows up as
    ``trio.EndOfChannel`` from ``receive``; the spec then expects the server to exit.
    """
    saved_fd: int | None = None
    if stdout is None:
        protocol_fd, saved_fd = _divert_stdout_fd()
        stdout = trio.lowlevel.FdStream(protocol_fd)
    try:
        if stdin is None:
            stdin = trio.lowlevel.FdStream(os.dup(0))
    except BaseException:
        await stdout.aclose()
        _restore_stdout_fd(saved_fd)
        raise
    transport = StdioTransport(stdin, stdout, max_frame_size=max_frame_size)
    saved_stdout = sys.stdout
    # Output print()ed before now is still in the buffer: out of the protocol's way with it.
    _flush(saved_stdout)
    sys.stdout = sys.stderr
    try:
        yield transport
    finally:
        sys.stdout = saved_stdout
        # Anything written through a reference to the original object goes out while
        # descriptor 1 still points at stderr.
        _flush(saved_stdout)
        try:
            await transport.aclose()
        finally:
            _restore_stdout_fd(saved_fd)


def _divert_stdout_fd() -> tuple[int, int]:
    """Point descriptor 1 at stderr; return a duplicate for the protocol and one to restore."""
    protocol_fd = os.dup(1)
    try:
        saved_fd = os.dup(1)
    except BaseException:
        os.close(protocol_fd)
        raise
    try:
        try:
            os.dup2(2, 1)
        except OSError:
            # No usable stderr: better to silence stray output than let it onto the stream.
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, 1)
            finally:
                os.close(devnull)
    except BaseException:
        os.close(protocol_fd)
        os.close(saved_fd)
        raise
    return protocol_fd, saved_fd


def _restore_stdout_fd(saved_fd: int | None) -> None:
    if saved_fd is None:
        return
    try:
        os.dup2(saved_fd, 1)
    finally:
        os.close(saved_fd)


def _flush(stream: TextIO | None) -> None:
    if stream is not None:
        with contextlib.suppress(OSError, ValueError):
            stream.flush()


@asynccontextmanager
async def open_stdio_client_transport(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
    stdin_close_grace: float = 2.0,
    terminate_grace: float = 2.0,
    stderr_logger: logging.Logger | None = None,
) -> AsyncIterator[StdioClientTransport]:
    """Spawn an MCP server and open the client side of stdio to it.

    ``command`` is the program and its arguments (a sequence, never a shell string); ``env`` and
    ``cwd`` are passed to the process as given (``env=None`` inherits ours). The transport
    yielded sends to the server's stdin and receives from its stdout; ``transport.process`` is
    the ``trio.Process``.

    The server's stderr is forwarded line by line, decoded as UTF-8, to ``stderr_logger``
    (default: the ``mcptrio.stdio.server_stderr`` logger) at ``INFO``: the spec says stderr is
    for any kind of logging, so a line there is not taken as a sign of trouble.

    If the server exits on its own, its stdout reaches end of input and ``receive`` raises
    ``trio.EndOfChannel``, so a session on top fails its pending calls instead of hanging.

    Leaving the block shuts the server down as the spec asks:

    1. close the server's stdin, and wait up to ``stdin_close_grace`` seconds for it to exit;
    2. otherwise send ``SIGTERM`` (``process.terminate()``) and wait up to ``terminate_grace``;
    3. otherwise send ``SIGKILL`` (``process.kill()``) and wait for it to die.

    The server's stdout is left open until it has exited, so that it is not killed by a broken
    pipe while finishing. The shutdown runs shielded from cancellation, under its own deadline
    (the two grace periods plus a few seconds), so it completes when the block is left because
    of a cancellation too; the cancellation then carries on. The block is therefore never left
    with the server still running, unless it survives ``SIGKILL``, which is logged as an error.
    """
    if isinstance(command, str):
        raise TypeError("command must be a sequence of arguments, not a string")
    argv = list(command)
    if not argv:
        raise ValueError("command must not be empty")
    process = await trio.lowlevel.open_process(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
    )
    logger.debug("started MCP server %r, pid %d", argv, process.pid)
    transport = StdioClientTransport(process, max_frame_size=max_frame_size)
    if stderr_logger is None:
        stderr_logger = logging.getLogger(SERVER_STDERR_LOGGER)
    # Shielded so that the server's last words are forwarded even during a cancellation; the
    # shutdown cancels it explicitly.
    stderr_scope = trio.CancelScope(shield=True)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_forward_stderr, transport, stderr_logger, stderr_scope)
            try:
                yield transport
            finally:
                try:
                    await _shut_down(transport, stdin_close_grace, terminate_grace)
                finally:
                    stderr_scope.cancel()
    except BaseExceptionGroup as group:
        if len(group.exceptions) == 1:
            _reraise(group.exceptions[0])
        raise


async def _shut_down(
    transport: StdioClientTransport,
    stdin_close_grace: float,
    terminate_grace: float,
) -> None:
    process = transport.process
    budget = stdin_close_grace + terminate_grace + _KILL_WAIT + _STDERR_DRAIN_GRACE
    with trio.CancelScope(shield=True, deadline=trio.current_time() + budget) as scope:
        try:
            await transport.send_stream.aclose()
            with trio.move_on_after(stdin_close_grace):
                await process.wait()
            if process.returncode is None:
                logger.info(
                    "MCP server (pid %d) still running %.1fs after its stdin closed; "
                    "sending SIGTERM",
                    process.pid,
                    stdin_close_grace,
                )
                process.terminate()
                with trio.move_on_after(terminate_grace):
                    await process.wait()
            if process.returncode is None:
                logger.warning(
                    "MCP server (pid %d) still running %.1fs after SIGTERM; sending SIGKILL",
                    process.pid,
                    terminate_grace,
                )
                process.kill()
                await process.wait()
            logger.debug("MCP server (pid %d) exited with %d", process.pid, process.returncode)
            with trio.move_on_after(_STDERR_DRAIN_GRACE):
                await transport.stderr_done.wait()
        finally:
            await transport.aclose()
            if process.stderr is not None:
                await process.stderr.aclose()
    if scope.cancelled_caught:
        logger.error("MCP server (pid %d) did not exit, even after SIGKILL", process.pid)


async def _forward_stderr(
    transport: StdioClientTransport, log: logging.Logger, scope: trio.CancelScope
) -> None:
    stream = transport.process.stderr
    tail = transport.stderr_tail
    framer = LineFramer(_STDERR_MAX_LINE)
    try:
        with scope:
            while stream is not None:
                try:
                    data = await stream.receive_some(DEFAULT_READ_SIZE)
                except (trio.ClosedResourceError, trio.BrokenResourceError):
                    return
                for line in framer.feed(data) if data else framer.feed_eof():
                    if isinstance(line, bytes):
                        text = line.decode("utf-8", "replace")
                        tail.append(text)
                        log.info("%s", text)
                    else:
                        log.info("(MCP server stderr line over %d bytes dropped)", line.limit)
                if not data:
                    return
    finally:
        transport.stderr_done.set()


def _reraise(exc: BaseException) -> NoReturn:
    """Raise ``exc``, unwrapped from its exception group, with its own cause and context."""
    cause, context, suppress = exc.__cause__, exc.__context__, exc.__suppress_context__
    try:
        raise exc
    finally:
        exc.__cause__, exc.__context__ = cause, context
        exc.__suppress_context__ = suppress
        del exc, cause, context
