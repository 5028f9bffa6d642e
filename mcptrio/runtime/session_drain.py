"""Waiting for a session to have answered what it was asked: :func:`requests_answered`.

A session that is to end without losing work (its input ended, or its server is stopping) first
answers the requests it has taken: the transport stops there until none is in flight and every
frame the session sent is written, then the session ends as it does anywhere, cancelling
whatever still runs. The session announces no such moment, so this polls its statistics; it
happens once, at the very end of a session, and is bounded by the caller's grace.
"""

from __future__ import annotations

from typing import Final

import trio

from .session import Session

__all__ = ["requests_answered"]

# How often the wait looks at the session's load.
_POLL_INTERVAL: Final = 0.01


async def requests_answered(session: Session, grace: float) -> None:
    """Return once ``session`` has no incoming request in flight and every frame it sent is
    written, or after ``grace`` seconds."""
    with trio.move_on_after(grace):
        while True:
            load = session.statistics()
            if not load.in_flight_incoming and not load.queued_outgoing_bytes:
                return
            await trio.sleep(_POLL_INTERVAL)
