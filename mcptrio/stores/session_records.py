"""What a handshake-era session leaves in the shared store, so that another worker can take it up.

A session is an actor on one worker (see :mod:`.session_directory`); when that worker dies or
restarts, the actor is gone. Its *record* is what survives: a small snapshot of the session's
negotiated state (opaque bytes here: the server layer makes and reads them), the principal it
is bound to, and the instance that holds it now (its *owner*, at first the worker that answered
``initialize``). A worker that gets a request for a session whose owner is gone *claims* the
record: a compare-and-set of the owner, so that exactly one worker adopts a session however
many ask at once; the others forward to it.

A record lives ``ttl`` seconds after it was last written or refreshed: its owner refreshes the
records of its live sessions, so an orphan nobody takes up goes away as an idle session would.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = ["SessionRecord", "SessionRecords"]


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """One session's record: its snapshot, its owner, and the principal it is bound to
    (``subject``/``issuer`` ``None``: made without credentials)."""

    state: bytes
    owner: str
    subject: str | None = None
    issuer: str | None = None


class SessionRecords(Protocol):
    """The records of handshake-era sessions; see the module docstring. Every call raises
    :class:`~.errors.StoreUnavailable` when the store fails."""

    async def save(self, session_id: str, record: SessionRecord, ttl: float) -> bool:
        """Write ``record`` unless another owner holds the session now (``False`` then)."""
        ...

    async def load(self, session_id: str) -> SessionRecord | None:
        """The record of ``session_id``, or ``None`` (never written, expired or forgotten)."""
        ...

    async def claim(self, session_id: str, was: str, now: str, ttl: float) -> bool:
        """Make ``now`` the owner if ``was`` still is; whether it did."""
        ...

    async def refresh(self, session_ids: Sequence[str], ttl: float) -> None:
        """Give the records of ``session_ids`` ``ttl`` seconds more."""
        ...

    async def forget(self, session_id: str, owner: str) -> None:
        """Delete the record of ``session_id`` if ``owner`` holds it (the session ended)."""
        ...
