"""Answering a POST's requests from the POST's own task: :func:`answer_inline`.

A POST's body is delivered to its session in the POST's task (:meth:`Session.deliver
<mcptrio.runtime.session.Session.deliver>`), where each request goes through its lifecycle: a
handler that never suspends is answered there and then, and any other runs in a request actor
while the POST waits for its answer on the request's stream. The common case costs no task and
no wait: the answer is on the stream when ``deliver`` returns, and goes out as JSON (or as one
whole SSE body). Anything else turns the answer into a live SSE stream, written by a
:class:`~.live_stream.StreamWriter` from the session's nursery while the handler runs on. Both
eras of Streamable HTTP answer this way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import trio

from ....protocol.codec import Envelope
from ....protocol.errors import ConnectionClosed
from ....runtime.session import Session, SessionBusy
from ..engine.exchange import HttpResponder
from .departure_watch import DepartureWatch
from .http_session import HttpSession
from .live_stream import StreamWriter
from .responses import JSON_HEADERS, SSE_HEADERS, send_error
from .sse_head_timer import SseHeadTimer
from .sse_stream import OutboundStream, drain_events, write_stream

__all__ = ["answer_inline", "answer_on_a_session_of_its_own"]

# How long an SSE answer's head waits for the first message, so that a prompt answer is sent
# as one whole response instead of a stream (see ``_answer``).
_SSE_HEAD_DELAY = 0.05


async def answer_inline(
    transport: HttpSession,
    session: Session,
    stream: OutboundStream,
    responder: HttpResponder,
    body: bytes | Envelope,
    *,
    json_response: bool,
    json_head_delay: float | None = None,
    on_writer: Callable[[StreamWriter], None] | None = None,
    answer_status: Callable[[bytes], int] | None = None,
    departure_watch: DepartureWatch | None = None,
    busy_retry_after: int = 1,
    long_poll: bool = False,
) -> None:
    """Answer a POST of requests, delivered to the session in this task (``body``, or its one
    message as the endpoint decoded it), waiting here until they are answered.

    If the handler sends anything else before its answer (progress, a log message, a request to the
    client), asks to close the stream, or (in SSE mode) has not answered within
    ``_SSE_HEAD_DELAY``, a writer starts streaming SSE at once while the handler runs on here;
    in JSON mode, ``json_head_delay`` is how long a quiet request may stay unanswered before that
    happens (``None``: never). ``on_writer`` is told when a writer starts; ``answer_status`` gives
    the HTTP status of a JSON answer (``None``: 200). With ``json_head_delay`` ``None``, a
    JSON answer that is slow to come has its connection watched by ``departure_watch`` instead
    (see :mod:`.departure_watch`). A request its session cannot take (``max_in_flight`` run and
    ``max_waiting`` wait) gets 503 with ``Retry-After: busy_retry_after``. The writer runs in the
    session (a nursery per POST would cost every POST), and this task waits for it: the response
    belongs to this exchange, so the writer never outlives it.

    A ``long_poll`` is a request that only waits on the server and whose client can take it up
    again if its stream is cut (a ``tasks/result`` whose stream opens with an event id to resume
    from, a stateless-era listen that is sent again): it turns SSE as in SSE mode, and its open
    stream may be cut for a slot, as a GET stream may (one client's long polls must not hold
    every connection slot).
    """
    writer = StreamWriter(transport, stream, responder, on_start=on_writer, evictable=long_poll)
    stream.on_activity = writer.start
    busy = False
    head_delay = _SSE_HEAD_DELAY if long_poll or not json_response else json_head_delay
    timer = None if head_delay is None else transport.head_timer(head_delay)
    watch = None if timer is not None else departure_watch
    # The head timer (or the departure watch) covers the whole time the POST waits: for a
    # slot, then for its answer. Invariant: delivering one message (the Envelope the endpoint
    # decoded) while the session takes one without waiting returns without a checkpoint, so
    # arming after ``deliver`` is arming at the same instant, and a request answered at once
    # there needs neither. A batch, or a session at its in-flight limit, may wait in
    # ``deliver``: armed before it.
    armed = not (isinstance(body, Envelope) and session.takes_one_without_waiting)
    if armed:
        _arm(timer, watch, stream, responder)
    try:
        try:
            await session.deliver(body)
            if not armed and not stream.finished:
                armed = True
                _arm(timer, watch, stream, responder)
            # Answered at once, or running in a request actor: wait, with the head timer or the
            # departure watch armed, for the first thing on the stream (an answer, or anything
            # else, which starts the writer), or for its end (the requests ended unanswered, or
            # the session ended).
            await stream.wait()
        except ConnectionClosed:
            if not writer.started:
                await send_error(responder, 404, "Session ended")
                return
        except SessionBusy:
            # Refused before it could wait, so before anything was sent for it.
            busy = True
        finally:
            stream.on_activity = None
            if armed:
                if timer is not None:
                    timer.disarm(stream)
                elif watch is not None:
                    watch.disarm(responder)
        pending = stream.pending
        if busy:
            retry = (b"retry-after", str(busy_retry_after).encode())
            await send_error(responder, 503, "The session is busy", headers=(retry,))
        elif writer.started:
            await writer.done.wait()
        elif json_response and stream.finished and len(pending) == 1 and not stream.close_requested:
            # The common case, the answer there when the handler returns: sent from here, not
            # through _answer (which comes to the same, a coroutine later).
            answer = pending.pop()
            stream.took()
            status = 200 if answer_status is None else answer_status(answer)
            await responder.send_response(status, JSON_HEADERS, answer)
        else:
            await _answer(transport, stream, responder, json_response, answer_status)
    finally:
        if writer.started and not writer.done.is_set():
            writer.scope.cancel()
            with trio.CancelScope(shield=True):
                await writer.done.wait()


def _arm(
    timer: SseHeadTimer | None,
    watch: DepartureWatch | None,
    stream: OutboundStream,
    responder: HttpResponder,
) -> None:
    if timer is not None:
        timer.arm(stream)
    elif watch is not None:
        watch.arm(responder)


async def answer_on_a_session_of_its_own(
    session: Session, answer: Callable[[], Awaitable[None]]
) -> None:
    """Run ``session``, made for one POST, while ``answer()`` answers the POST in this task.

    A client that leaves while its answer is written raises ``trio.BrokenResourceError`` here,
    outside the session's nursery: the front end knows a client that left by that error alone,
    not wrapped in an exception group (which it would log as the handler's failure, and whose
    reference cycle with its nursery would keep the answer's bytes in memory until the garbage
    collector found it).
    """
    client_gone = False
    async with trio.open_nursery() as nursery:
        await nursery.start(session.run)
        try:
            await answer()
        except trio.BrokenResourceError:
            client_gone = True
        nursery.cancel_scope.cancel()
    if client_gone:
        raise trio.BrokenResourceError("the client went away")


async def _answer(
    transport: HttpSession,
    stream: OutboundStream,
    responder: HttpResponder,
    json_response: bool,
    answer_status: Callable[[bytes], int] | None,
) -> None:
    if json_response:
        await stream.wait()
        pending = stream.pending
        if stream.finished and len(pending) == 1 and not stream.close_requested:
            answer = pending.pop(0)
            stream.took()
            status = 200 if answer_status is None else answer_status(answer)
            await responder.send_response(status, JSON_HEADERS, answer)
            return
        if not pending and transport.is_ended:
            await send_error(responder, 404, "Session ended")
            return
    elif not (stream.pending or stream.finished or stream.close_requested):
        # Most answers come within a few scheduler turns: waiting a moment for the first
        # message lets a prompt answer go out as one whole response (one write, nothing
        # to watch), while a slow request still gets its head, and priming event, soon.
        with trio.move_on_after(_SSE_HEAD_DELAY):
            await stream.wait()
    if stream.finished and stream.pending and not stream.close_requested:
        # Everything this request will ever send is here: one response, SSE all the same.
        body = await drain_events(stream, transport)
        await responder.send_response(200, SSE_HEADERS, body)
        return
    await responder.start_stream(200, SSE_HEADERS)
    await write_stream(stream, responder, transport)
