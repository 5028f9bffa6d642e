"""The response streams a Streamable HTTP client follows, and how it resumes them.

One :class:`FollowedStream` per POST (and one for the standalone GET stream): the answers it
still owes, its SSE cursor and ``retry:`` value, the scope that stops following it, and for the
stateless era what the re-issue of its request needs (see :mod:`.reissue`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

import trio

from ....protocol.base import RequestId

__all__ = [
    "DEFAULT_RECONNECTION",
    "DONE",
    "ENDED",
    "SESSION_GONE",
    "UNUSABLE",
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
    #: Why the requests still pending will fail, once that is known.
    failure: str | None = None
    #: A stateless-era request (2026-07-28): closing the stream cancels it, and a broken stream
    #: is re-issued rather than resumed.
    stateless: bool = False
    #: For a re-issued request: the id the session sent, and how many times it was re-issued.
    original_id: RequestId | None = None
    reissues: int = 0

    def fail(self, message: str) -> None:
        """Note why the requests still owed fail (the first reason wins); the POST task
        answers them with an error when it finishes."""
        if self.failure is None:
            self.failure = message

    def owed(self) -> set[RequestId]:
        """The ids the session waits on: a re-issued request's is the one it sent."""
        return self.pending if self.original_id is None else {self.original_id}


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
