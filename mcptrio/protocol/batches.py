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

__all__ = ["MAX_BATCH_ITEMS", "Batch", "answer_in_flight", "refusal"]

#: The most messages one incoming batch may hold.
MAX_BATCH_ITEMS = 1000


class Batch:
    """Answers owed for one incoming batch."""

    __slots__ = ("answers", "ended", "owed")

    def __init__(self) -> None:
        self.owed: set[RequestId] = set()
        self.answers: list[bytes] = []
        #: Members that have ended (answered, or not), whose answers wait for the others.
        self.ended: list[RequestId] = []

    def settle(self, events: list[ev.Event]) -> list[ev.Event]:
        """What the batch's messages meant (``events``) less the answers the protocol gave at
        once, which join the batch's; with the batch's answer when no handler owes one more."""
        immediate: list[ev.Event] = [e for e in events if not isinstance(e, ev.Reply)]
        answers: RequestId | None = None
        for event in events:
            if isinstance(event, ev.Reply):
                self.answers.append(event.data)
                if answers is None:
                    answers = event.answers
        if not self.owed and self.answers:
            # Named by one member it answers: a transport routes the batch's answers by it.
            immediate.append(ev.Reply(encode_batch(self.answers), answers))
        return immediate


def answer_in_flight(
    in_flight: dict[RequestId, Batch | None], rid: RequestId, data: bytes | None
) -> bytes | None:
    """Incoming request ``rid`` (one of ``in_flight``) is answered with ``data`` (``None``: it
    ends unanswered); what to send for it: ``data`` for a lone request, its batch's answers
    once the batch owes no more, else nothing (``None``, also for a request not in flight).

    A batch's member stays in flight until its batch's answers go out: until then its answer
    is still owed to the peer (a transport routing the batch's answer by its ids waits for
    it; the peer may not reuse its id)."""
    batch = in_flight.get(rid)
    if batch is None:
        if rid in in_flight:
            del in_flight[rid]
            return data
        return None
    if rid not in batch.owed:
        return None  # ended already: its answer waits in the batch
    batch.owed.remove(rid)
    batch.ended.append(rid)
    if data is not None:
        batch.answers.append(data)
    if batch.owed:
        return None
    for member in batch.ended:
        del in_flight[member]
    return encode_batch(batch.answers) if batch.answers else None


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
