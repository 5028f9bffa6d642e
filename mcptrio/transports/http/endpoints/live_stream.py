"""Writing a POST's live SSE answer from the session's nursery: :class:`StreamWriter`.

:class:`StreamWriter` writes a request's stream from the session's nursery for a POST whose
handler runs in the POST's own task (see
:func:`~.inline_answer.answer_inline`): the handler keeps that task busy, so another task
must write what it sends before its answer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field

import trio

from ....protocol.errors import ConnectionClosed
from ..engine.exchange import HttpResponder
from .http_session import HttpSession
from .responses import SSE_HEADERS
from .sse_stream import OutboundStream, write_stream

__all__ = ["StreamWriter"]

log = logging.getLogger("mcptrio.http")


@dataclass(slots=True, eq=False)
class StreamWriter:
    """Streams a POST's SSE answer from the session's nursery, for a handler running inline."""

    transport: HttpSession
    stream: OutboundStream
    responder: HttpResponder
    _: KW_ONLY
    #: Told when the writer starts.
    on_start: Callable[[StreamWriter], None] | None = None
    #: Whether the stream may be cut for a slot once open (see ``write_stream``).
    evictable: bool = False
    started: bool = field(default=False, init=False)
    # Most POSTs never start their writer: its scope and event are made only when one does.
    scope: trio.CancelScope = field(init=False, repr=False)
    done: trio.Event = field(init=False, repr=False)

    def start(self) -> None:
        session = self.transport.session
        if self.started or session is None:
            return
        self.scope = trio.CancelScope()
        self.done = trio.Event()
        try:
            session.start_actor(self._run)
        except ConnectionClosed:
            return
        self.started = True
        if self.on_start is not None:
            self.on_start(self)

    async def _run(self) -> None:
        try:
            # The response belongs to the POST, not to the session: the session's end must not
            # cut a write in half (the POST finishes the stream instead, and the writer ends it
            # properly). Only the POST (``scope``) or a takeover stops it early.
            with trio.CancelScope(shield=True), self.scope:
                await self.responder.start_stream(200, SSE_HEADERS)
                await write_stream(
                    self.stream, self.responder, self.transport, evictable=self.evictable
                )
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        except Exception:
            log.exception("writing the SSE answer of stream %s failed", self.stream.stream_id)
        finally:
            self.done.set()
