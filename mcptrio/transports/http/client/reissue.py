"""Re-issuing a stateless-era request whose response stream broke (2026-07-28).

The stateless era has no resumption: no event ids, no ``Last-Event-ID``, no session to find a
stream in. A response stream that breaks before the answer loses the request, and the client
**MUST** re-issue it with a new id (transports, "Streamable HTTP", 2026-07-28). The session
above the transport keeps waiting on the id it sent; the transport sends the same request
under a fresh id and gives the answer back under the original one, so that nothing above it
knows. Only the frames of a re-issued request are decoded and encoded again: the common path
does not pay for this.

A request is re-issued at most :data:`REISSUE_LIMIT` times: a server that breaks every stream
of a request gets the request failed, not an endless loop.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from ....protocol.base import RequestId

__all__ = ["REISSUE_LIMIT", "answered_as", "renumbered"]

#: How many times one request is re-issued after its response stream broke.
REISSUE_LIMIT: Final = 2

_decoder = msgspec.json.Decoder()
_encoder = msgspec.json.Encoder()


def renumbered(data: bytes, new_id: RequestId) -> bytes | None:
    """``data`` (one request) with its id replaced by ``new_id``; ``None`` when it is not one
    request (a batch or a notification is never re-issued)."""
    message = _decode(data)
    if not isinstance(message, dict) or "id" not in message or "method" not in message:
        return None
    message["id"] = new_id
    return _encoder.encode(message)


def answered_as(data: bytes, original: RequestId) -> bytes:
    """``data`` with the id of its response set back to ``original``; a frame that is not a
    response (a progress notification on the same stream) is returned as it is."""
    message = _decode(data)
    if not isinstance(message, dict) or "method" in message:
        return data
    if "result" not in message and "error" not in message:
        return data
    message["id"] = original
    return _encoder.encode(message)


def _decode(data: bytes) -> Any:
    try:
        return _decoder.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None
