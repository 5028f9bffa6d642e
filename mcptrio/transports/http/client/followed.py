"""The response streams a Streamable HTTP client follows, and how it resumes them.

One :class:`FollowedStream` per POST (and one for the standalone GET stream): the answers it
still owes, its SSE cursor and ``retry:`` value, the scope that stops following it, and for the
stateless era what the re-issue of its request needs (see :mod:`.reissue`). The stateless-era
requests whose streams their callers cut are :class:`CutRequests`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

import trio

from ....protocol.base import RequestId
from ....protocol.errors import McpError
from ....protocol.unreadable import unreadable_message_id
from ..engine.client_pool import HttpProtocolError, OutcomeUnknown
from .outcome import outcome_unknown

__all__ = [
    "CUT_LIMIT",
    "DEFAULT_RECONNECTION",
    "DONE",
    "ENDED",
    "SESSION_GONE",
    "UNUSABLE",
    "CutRequests",
    "FollowedStream",
    "Reconnection",
]


@dataclass
class FollowedStream:
    """One SSE stream being followed: its cursor, its retry delay, the answers it still owes."""

    pending: set[RequestId] = field(default_factory=set)
    last_event_id: str | None = None
    retry_ms: int | None = None
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    #: Set for the ``initialize`` POST: the revision is read from its response.
    initialize_id: RequestId | None = None
    #: What the requests still pending will fail with, once that is known.
    failure: McpError | None = None
    #: A stateless-era request (2026-07-28): closing the stream cancels it, and a broken stream
    #: is re-issued rather than resumed.
    stateless: bool = False
    #: For a re-issued request: the id the session sent, and how many times it was re-issued.
    original_id: RequestId | None = None
    reissues: int = 0
    #: Whether its responses may go straight to the session (see ``_deliver_response``): only
    #: until a frame of it went through the transport's channel.
    direct: bool = True
    #: The frame its POST carried (empty for a GET), to name the call a failure leaves unknown.
    request: bytes = b""

    def fail(self, reason: str | McpError) -> None:
        """Note why the requests still owed fail (the first reason wins): an error, or the
        message of an :class:`HttpProtocolError`. The POST task fails them with it when it
        finishes."""
        if self.failure is None:
            self.failure = HttpProtocolError(reason) if isinstance(reason, str) else reason

    def lost(self, reason: str) -> None:
        """:meth:`fail`: the stream broke or ended before the answer, after the request was
        sent, so the server may have run it (:class:`OutcomeUnknown`)."""
        self.fail(OutcomeUnknown(reason))

    def final_failure(self) -> McpError:
        """What the requests still owed fail with. An exchange that broke after the request was
        sent leaves its outcome unknown: that error names the call, and is logged."""
        failure = self.failure or HttpProtocolError("The request was lost")
        if self.request and isinstance(failure, OutcomeUnknown):
            return outcome_unknown(self.request, str(failure))
        return failure

    def answered_too_large(self, head: bytes, tail: bytes) -> RequestId | None:
        """An answer over the size limit came, beginning with ``head`` and ending with ``tail``:
        the id it answered (no longer owed by this stream), or ``None`` when they do not say."""
        found = unreadable_message_id(head, tail)
        if found is None or not found[1]:
            return None
        self.pending.discard(found[0])
        return found[0]

    def owed(self) -> set[RequestId]:
        """The ids the session waits on: a re-issued request's is the one it sent."""
        return self.pending if self.original_id is None else {self.original_id}


#: How many cut stateless-era requests are remembered until their cancellation notice.
CUT_LIMIT: Final = 64


class CutRequests:
    """Stateless-era requests whose caller gave up during the POST it carried (see
    :meth:`~.streamable.StreamableHttpClientTransport.exchange`): closing the stream was the
    cancellation, so the session's ``notifications/cancelled`` for them is not sent. Bounded
    (oldest dropped): an entry lives only until that notice, which the session sends at once.
    """

    __slots__ = ("_ids",)

    def __init__(self) -> None:
        self._ids: dict[RequestId, None] = {}

    def __bool__(self) -> bool:
        return bool(self._ids)

    def remember(self, stream: FollowedStream) -> None:
        for rid in stream.owed():
            self._ids[rid] = None
        while len(self._ids) > CUT_LIMIT:
            del self._ids[next(iter(self._ids))]

    def take(self, rid: RequestId | None) -> bool:
        """Whether ``rid`` (what a notice cancels) was cut; it is forgotten then."""
        return rid is not None and self._ids.pop(rid, False) is None


@dataclass(frozen=True, slots=True)
class Reconnection:
    """How a broken SSE stream is resumed: the delay when the server sent no ``retry:``, the
    longest delay backing off reaches, and the attempts in a row that may bring nothing."""

    delay: float = 1.0
    max_delay: float = 30.0
    max_attempts: int = 5


# How reading one response, or one GET of a stream, ended: everything owed arrived; the stream
# ended or broke and may be resumed; it cannot be used (or resumed) at all; the session is gone.
DONE: Final = "done"
ENDED: Final = "ended"
UNUSABLE: Final = "unusable"
SESSION_GONE: Final = "session gone"

#: The reconnection a transport uses unless told otherwise.
DEFAULT_RECONNECTION: Final = Reconnection()
