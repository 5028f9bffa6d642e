"""One connection of the built-in HTTP/1.1 server (:mod:`.builtin_server`): its request loop.

Theory of operation
-------------------
One task per connection runs :meth:`BuiltinConnection.run`: read a request head, call the app in
the same task, finish the request body, loop. A plain response costs no task and one
``send_all`` (head and body joined). Pipelined requests are therefore answered in order by
construction.

A streamed response is different: while it is open the handler may sit idle (an SSE stream) and
still has to learn that the client went away. So a
:class:`~.builtin_exchange.DisconnectWatcher` reads the socket in the connection's nursery while
a stream is open, once the request body has been fully received; EOF cancels the connection's
scope (ending the handler, then the connection). A handler whose answer is slow to start asks
for the same watch without a stream (``watch_for_departure``: a JSON answer of a long call, see
``endpoints/departure_watch``). When the stream ends the watcher is cancelled
and awaited before the connection reads again, so the two never read at once. The request and
responder the app gets (:mod:`.builtin_exchange`) do their I/O through the connection.

No request pays for a cancel scope of its own: the whole request loop runs in one per
connection. Each wait on the client (reading a head, a piece of body) tells the server's timer
(:mod:`.wait_timer`) when it must end, and the timer cancels the scope of a wait past due; a
write through TLS sets the scope's deadline itself. Either way, what the loop was waiting for
decides whether the client still gets a 408. The same scope is cancelled when the connection's
slot is needed by another client (:mod:`.connection_slots`): an evicted connection is closed
with no response.
A client that goes away while its response streams gives its slot back at once, even while a
handler answering it runs on shielded in this task (an MCP request answered in the POST's task
is stopped only by the peer's cancellation or its session's end).

When the connection is closed it half-closes first and drains what the client still sends for a
moment ("lingering close"), so that a final response (a 413, a 400) is not destroyed by a TCP
reset caused by unread request bytes.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

import trio

from .builtin_exchange import (
    NOT_STARTED,
    STREAMING,
    TEXT_PLAIN,
    BadRequestBody,
    BuiltinRequest,
    BuiltinResponder,
    DisconnectWatcher,
)
from .builtin_websocket import serve_websocket_upgrade
from .exchange import BodyTooLarge, HttpApp
from .parser import (
    END_OF_MESSAGE,
    NEED_MORE,
    PEER_CLOSED,
    HttpParseError,
    NeedMore,
    RequestHead,
    RequestParser,
    response_head,
)

if TYPE_CHECKING:
    from .connection_slots import ConnectionSlots
    from .server_limits import ServerLimits
    from .wait_timer import WaitTimer
    from .watch_hub import WatchHub

__all__ = ["RECEIVE_SIZE", "BuiltinConnection"]

logger = logging.getLogger("mcptrio.transports.http")

RECEIVE_SIZE = 65536

#: What a read from the client gave.
_Read = TypeVar("_Read", bound=bytes | bytearray)

# What the connection was waiting for when its scope's deadline fired.
_IDLE, _HEAD, _BODY, _WRITE = range(4)

# Parts of a write this small are joined for TLS (one record, one call); larger ones go one by
# one, uncopied.
_JOIN_LIMIT = 65536
# The most buffers one ``writev`` takes (Linux's IOV_MAX): a write of more is joined first.
_WRITEV_MAX = 1024


def _read_nowait(fd: int) -> bytes | None:
    """What the socket holds now (``b""`` at EOF or breakage), ``None`` if nothing yet."""
    try:
        return os.read(fd, RECEIVE_SIZE)
    except BlockingIOError:
        return None
    except OSError:
        return b""


async def _wait_and_read(fd: int) -> bytes:
    """The next bytes from the socket once it is readable (``b""`` at EOF or breakage)."""
    while True:
        try:
            await trio.lowlevel.wait_readable(fd)
        except trio.ClosedResourceError:
            return b""
        data = _read_nowait(fd)
        if data is not None:
            return data


class BuiltinConnection:
    """One client connection: the request loop and what the request/responder pair share."""

    # A server may hold thousands of connections open (SSE streams): no per-instance dict.
    __slots__ = (
        "_fd",
        "app",
        "client",
        "client_host",
        "evicted",
        "hub",
        "limits",
        "message_complete",
        "nursery",
        "on_client_gone",
        "owes_yield",
        "parser",
        "peer_gone",
        "phase",
        "readable",
        "responding",
        "scheme",
        "scope",
        "slots",
        "stream",
        "streaming",
        "timer",
        "timer_at",
        "wait_deadline",
        "watcher",
        "writable",
    )

    def __init__(
        self,
        stream: trio.abc.Stream,
        app: HttpApp,
        parser: RequestParser,
        limits: ServerLimits,
        timer: WaitTimer,
    ) -> None:
        self.stream = stream
        # A plain TCP connection is read and written through its descriptor directly: trio's
        # SocketStream would add a task switch to every read and write that completes at once.
        # TLS goes through the stream.
        self._fd: int | None = stream.socket.fileno() if type(stream) is trio.SocketStream else None
        self.app = app
        self.parser = parser
        self.limits = limits
        self.scheme = "http"
        self.client: tuple[str, int] | None = None
        self.client_host: str | None = None
        # Whose slot this is (see connection_slots); None once it is given back.
        self.slots: ConnectionSlots | None = None
        self.evicted = False
        self.nursery: trio.Nursery | None = None
        #: The server's watch hub, which watches a plain TCP connection's socket while its
        #: response streams (else the watcher is a task in ``nursery``).
        self.hub: WatchHub | None = None
        # Whether the stream may still be read from / written to.
        self.readable = True
        self.writable = True
        # Whether the client closed (or broke) its side: no more requests will come.
        self.peer_gone = False
        # One cancel scope for the whole request loop, so that no request pays for its own:
        # the timer cancels it when a wait on the client is past its deadline (what the wait
        # was is in ``phase``), and the watcher when the client leaves mid-stream.
        self.scope = trio.CancelScope()
        self.phase = _IDLE
        # The deadline of the current wait on the client, kept by the server's timer.
        self.timer = timer
        self.wait_deadline = math.inf
        self.timer_at = math.inf
        # Whether the current request's response has started (what a timeout may still send).
        self.responding = False
        self.message_complete = False
        # Whether a streamed response is open (the watcher may run).
        self.streaming = False
        self.watcher = DisconnectWatcher(self)
        # What the current request's handler asked to be told when the client leaves.
        self.on_client_gone: Callable[[], None] | None = None
        # A request head was read without waiting: the loop yields once its response is out.
        self.owes_yield = False

    # -- reading ----------------------------------------------------------------------------

    @property
    def fd(self) -> int | None:
        """The socket's descriptor when it is read directly (plain TCP), else ``None``."""
        return self._fd

    def read_now(self) -> bytes | None:
        """What the socket (plain TCP) holds now, without waiting: ``None`` if nothing yet,
        ``b""`` at EOF or breakage (the client is then gone)."""
        assert self._fd is not None
        data = _read_nowait(self._fd)
        return data if data is None else self._got(data)

    def _got(self, data: _Read) -> _Read:
        """``data``, as read from the client: ``b""`` means it has gone, and nothing more is
        read."""
        if not data:
            self.peer_gone = True
            self.readable = False
        return data

    async def receive_some(self) -> bytes | bytearray:
        """Bytes from the client; ``b""`` at EOF or breakage (the client is then gone)."""
        fd = self._fd
        data: bytes | bytearray | None
        if fd is None:
            try:
                data = await self.stream.receive_some(RECEIVE_SIZE)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
        else:
            data = _read_nowait(fd)
            if data is None:
                data = await _wait_and_read(fd)
            else:
                # Fairness: a client that keeps the socket full must not starve the others. The
                # yield cannot raise Cancelled: that would lose the bytes just read.
                await trio.lowlevel.cancel_shielded_checkpoint()
        return self._got(data)

    async def receive(self, deadline: float, phase: int) -> bytes | bytearray:
        """:meth:`receive_some`, ending the request loop if nothing comes by ``deadline``.

        Bytes of a request head that are already there are returned without a yield: the loop
        owes one (``owes_yield``) and pays it once the response is out (:meth:`run`). A client
        that keeps the socket full still gives the others a turn per read, and its answer does
        not wait a scheduler pass first: at one caller the next request is often in by the time
        the loop reads, so a yield before it would put a whole scheduler pass on every call."""
        fd = self._fd
        if fd is not None and (data := _read_nowait(fd)) is not None:
            # Already there: no deadline to arm (a read that has to wait arms it below). As
            # above, a yield must not lose the bytes to a cancellation.
            if phase == _BODY or self.owes_yield:
                # A body, or a head arriving in pieces faster than they are read: a turn per
                # read, at once, as the loop owes at most one.
                await trio.lowlevel.cancel_shielded_checkpoint()
            self.owes_yield = phase != _BODY
            return self._got(data)
        self.phase = phase
        self.timer.waiting(self, deadline)
        try:
            if fd is None:
                return await self.receive_some()
            return self._got(await _wait_and_read(fd))
        finally:
            self.wait_deadline = math.inf

    def wait_expired(self) -> None:
        """The wait on the client is past its deadline (see :mod:`.wait_timer`)."""
        self.scope.cancel()

    def release_slot(self) -> None:
        """Give the connection's slot back, once: it is ending, or its client has gone (a
        handler may still run in this task, shielded, but not on the slot)."""
        slots = self.slots
        if slots is not None:
            self.slots = None
            slots.release(self, self.client_host)

    def evict(self) -> None:
        """Close at once, with no response: the slot is needed (see connection_slots)."""
        self.evicted = True
        self.scope.cancel()

    async def read_head(self, first: bool) -> RequestHead | None:
        """The next request head, or ``None`` when the connection should end quietly.

        Waiting for it, the connection may be evicted (see connection_slots)."""
        slots = self.slots
        if slots is not None:
            slots.waiting(self, self.client_host, for_request=True)
        limits = self.limits
        deadline: float | None = None
        phase = _IDLE
        while True:
            try:
                event = self.parser.next_event()
            except HttpParseError as error:
                await self.refuse(error.status, str(error))
                return None
            if event is None:
                if not self.readable:
                    return None
                if deadline is None:
                    # Taken when the loop first has to read: on a keep-alive connection the
                    # head's own deadline is only needed if it arrives in pieces (a clock read
                    # less between a request's bytes and its answer).
                    timeout = (
                        limits.header_timeout
                        if first or phase == _HEAD
                        else limits.keep_alive_timeout
                    )
                    deadline = trio.current_time() + timeout
                data = await self.receive(deadline, phase)
                if not data:
                    return None
                if phase == _IDLE:
                    phase = _HEAD
                    if not first:
                        deadline = None
                self.parser.feed(data)
            elif type(event) is RequestHead:
                if slots is not None:
                    slots.busy(self)
                self.message_complete = False
                if not event.chunked and not event.content_length:
                    # No body: take its end now, so a stream may watch the socket at once.
                    self.message_complete = self.parser.next_event() is END_OF_MESSAGE
                return event
            elif event is PEER_CLOSED:
                return None
            else:  # pragma: no cover - a parser never yields body events before a head
                raise AssertionError(f"unexpected {event!r} before a request head")

    def body_event_now(self) -> bytes | NeedMore | None:
        """The next piece of the request body if it has been read already (``None`` at its
        end), else :data:`NEED_MORE`. A body that came with its head (most do) is taken this
        way without an ``await`` per piece."""
        try:
            event = self.parser.next_event()
        except HttpParseError as error:
            raise BadRequestBody(400, str(error)) from None
        if event is None:
            return NEED_MORE
        if event is END_OF_MESSAGE:
            self.message_complete = True
            return None
        if isinstance(event, bytes):
            return event
        raise BadRequestBody(400, "malformed request body")

    async def next_body_event(self) -> bytes | None:
        """The next piece of the request body, or ``None`` at its end."""
        while isinstance(event := self.body_event_now(), NeedMore):
            if not self.readable:
                raise trio.BrokenResourceError("the client closed during the request body")
            data = await self.receive(trio.current_time() + self.limits.body_timeout, _BODY)
            if not data:
                raise trio.BrokenResourceError("the client closed during the request body")
            self.parser.feed(data)
        return event

    # -- writing ----------------------------------------------------------------------------

    async def send(self, *parts: bytes) -> None:
        """Write ``parts`` to the client, one after the other (a head, then a body, say).

        On plain TCP they go out in one ``writev``, not joined first: joining costs a copy of a
        large body in a fresh allocation, often of fresh pages, and the socket copies it anyway.
        A write the socket takes whole costs neither a deadline nor a task switch.
        """
        if not self.writable:
            raise trio.BrokenResourceError("the client connection is closed")
        if len(parts) > _WRITEV_MAX:
            parts = (b"".join(parts),)
        fd = self._fd
        if fd is None:
            scope = self.scope
            self.phase = _WRITE
            scope.deadline = trio.current_time() + self.limits.write_timeout
            total = sum(map(len, parts))
            try:
                if total <= _JOIN_LIMIT:
                    await self.stream.send_all(b"".join(parts))
                else:
                    # TLS encrypts from a buffer of its own: a large part is not copied first.
                    for part in parts:
                        await self.stream.send_all(part)
            except (trio.BrokenResourceError, trio.ClosedResourceError) as error:
                self.writable = False
                raise trio.BrokenResourceError("the client connection is closed") from error
            finally:
                scope.deadline = math.inf
            return
        await trio.lowlevel.checkpoint_if_cancelled()
        try:
            sent = os.writev(fd, parts)
        except BlockingIOError:
            sent = 0
        except OSError as error:
            self.writable = False
            raise trio.BrokenResourceError("the client connection is closed") from error
        rest = _unsent(parts, sent)
        if rest:
            await self._send_rest(fd, rest)

    async def _send_rest(self, fd: int, rest: list[memoryview]) -> None:
        """Write what the socket did not take at once, waiting for room within the deadline.

        The deadline is this write's own: the writing task may not be the connection's (an SSE
        writer running in a session). Part of the message is out already, so a write that does
        not finish (timeout, cancellation, breakage) leaves the response cut: the connection
        can carry nothing more.
        """
        completed = False
        try:
            with trio.move_on_after(self.limits.write_timeout):
                while rest:
                    try:
                        await trio.lowlevel.wait_writable(fd)
                        rest = _unsent(rest, os.writev(fd, rest))
                    except BlockingIOError:
                        continue
                    except (OSError, trio.ClosedResourceError) as error:
                        raise trio.BrokenResourceError("the client connection is closed") from error
                completed = True
        finally:
            if not completed:
                self.writable = False
        if rest:
            raise trio.BrokenResourceError("a write to the client timed out")

    async def refuse(self, status: int, message: str) -> None:
        """Answer an error the front end detected itself (no app involved), then close."""
        self.readable = False
        if not self.writable:
            return
        self.writable = False
        body = message.encode("utf-8", "replace")
        head = response_head(status, TEXT_PLAIN, content_length=len(body), keep_alive=False)
        with trio.move_on_after(self.limits.write_timeout):
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await self.stream.send_all(head + body)
                # What refuse sent is all the client gets: let close() linger for it.
                self.writable = True

    async def interrupted(self) -> None:
        """The loop's scope fired: a wait on the client timed out, or it left mid-stream, or
        its slot was needed."""
        if self.evicted:
            self.writable = False
        elif self.phase == _HEAD:
            await self.refuse(408, "request head timeout")
        elif self.phase == _BODY and not self.responding:
            await self.refuse(408, "request body timeout")
        else:
            self.writable = False

    # -- the request loop -------------------------------------------------------------------

    async def run(self) -> None:
        first = True
        while True:
            head = await self.read_head(first)
            if head is None:
                return
            first = False
            if head.is_websocket_upgrade:
                await self._serve_websocket(head)
                return
            request = BuiltinRequest(self, head)
            responder = BuiltinResponder(self, request)
            if not await self._run_handler(request, responder):
                return
            # A body read whole (most are) leaves nothing to discard: ``discard_rest`` would
            # return True at once, so it is not called (a coroutine less per request).
            if not request.keep_alive or not (
                self.message_complete or await request.discard_rest()
            ):
                return
            self.parser.next_request()
            if self.owes_yield:
                self.owes_yield = False
                await trio.lowlevel.cancel_shielded_checkpoint()

    async def _run_handler(self, request: BuiltinRequest, responder: BuiltinResponder) -> bool:
        """Run the app for one request; whether the connection can carry another."""
        self.responding = False
        try:
            await self.app.handle_http(request, responder)
        except BadRequestBody as error:
            if responder.state == NOT_STARTED:
                await self.refuse(error.status, str(error))
            return False
        except trio.BrokenResourceError:
            return False
        except Exception:
            logger.exception("HTTP handler for %s %s failed", request.method, request.path)
            if responder.state != NOT_STARTED:
                return False
            request.keep_alive = False
            await responder.send_quietly(500, b"internal server error")
            return False
        finally:
            self.streaming = False
            self.on_client_gone = None
            if self.slots is not None:
                # A stream that allowed eviction has ended.
                self.slots.busy(self)
            # Most responses never start the watcher (it watches streams and slow answers
            # only): then ``stop`` has nothing to do and is not called.
            watcher = self.watcher
            if watcher.watching:
                await watcher.stop()
        if not self.writable:
            return False
        if responder.state == NOT_STARTED:
            logger.error("HTTP handler for %s %s did not respond", request.method, request.path)
            await responder.send_quietly(500, b"the handler did not respond")
        elif responder.state == STREAMING:
            try:
                await responder.end_stream()
            except trio.BrokenResourceError:
                return False
        return self.writable

    async def _serve_websocket(self, head: RequestHead) -> None:
        request = BuiltinRequest(self, head)
        try:
            if await request.read_body(0):
                raise BodyTooLarge
        except (BodyTooLarge, BadRequestBody):
            await self.refuse(400, "a WebSocket upgrade request has no body")
            return
        except trio.BrokenResourceError:
            return
        # A connection served outside a server's slots (a test's) is never stopped.
        stopping = self.slots.stopping if self.slots is not None else trio.Event()
        await serve_websocket_upgrade(
            self.stream,
            self.app,
            request,
            head,
            self.parser.unparsed(),
            self.limits.write_timeout,
            stopping,
        )
        self.readable = self.writable = False

    async def close(self) -> None:
        """Close the stream; half-close and drain first unless the client closed already."""
        stream = self.stream
        if self.writable and not self.peer_gone and isinstance(stream, trio.SocketStream):
            with trio.move_on_after(self.limits.linger_timeout):
                try:
                    await stream.send_eof()
                    drained = 0
                    while drained < self.limits.discard_body_limit:
                        data = await stream.receive_some(RECEIVE_SIZE)
                        if not data:
                            break
                        drained += len(data)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    pass
        with trio.CancelScope(shield=True), trio.move_on_after(self.limits.linger_timeout):
            await stream.aclose()


def _unsent(parts: Sequence[bytes | memoryview], sent: int) -> list[memoryview]:
    """What is left of ``parts`` once the first ``sent`` bytes of them are written: views,
    never copies (a large body's rest is most of it)."""
    rest: list[memoryview] = []
    for part in parts:
        if sent >= len(part):
            sent -= len(part)
            continue
        rest.append(memoryview(part)[sent:])
        sent = 0
    return rest
