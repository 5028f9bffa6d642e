"""JSON-RPC batches (protocol revision 2025-03-26 only): which are refused whole, and the
answers owed for one that is taken.

A batch's answers are held until the last one is known, then sent as one array (see
:class:`~mcptrio.protocol.connection.Connection`). A batch of more than :data:`MAX_BATCH_ITEMS`
messages is refused as a whole with one -32600: each item costs an answer and a request slot,
and a flood of tiny garbage items would otherwise be answered with fifty times its size.
"""

from __future__ import annotations

from . import events as ev
from .base import RequestId
from .codec import encode_batch
from .errors import InvalidRequest
from .revisions import Revision

__all__ = ["MAX_BATCH_ITEMS", "Batch", "refusal"]

#: The most messages one incoming batch may hold.
MAX_BATCH_ITEMS = 1000


class Batch:
    """Answers owed for one incoming batch."""

    __slots__ = ("answers", "owed")

    def __init__(self) -> None:
        self.owed: set[RequestId] = set()
        self.answers: list[bytes] = []

    def settle(self, events: list[ev.Event]) -> list[ev.Event]:
        """What the batch's messages meant (``events``) less the answers the protocol gave at
        once, which join the batch's; with the batch's answer when no handler owes one more."""
        immediate: list[ev.Event] = [e for e in events if not isinstance(e, ev.Reply)]
        for event in events:
            if isinstance(event, ev.Reply):
                self.answers.append(event.data)
        if not self.owed and self.answers:
            immediate.append(ev.Reply(encode_batch(self.answers)))
        return immediate


def refusal(features: Revision | None, items: int) -> InvalidRequest | None:
    """Why a batch of ``items`` messages is refused whole at revision ``features`` (``None``:
    not negotiated yet), or ``None`` when it is taken."""
    if features is None or not features.batches:
        return InvalidRequest("JSON-RPC batches are only allowed in protocol revision 2025-03-26")
    if not items:
        return InvalidRequest("Empty batch")
    if items > MAX_BATCH_ITEMS:
        return InvalidRequest(f"A batch may hold at most {MAX_BATCH_ITEMS} messages")
    return None
