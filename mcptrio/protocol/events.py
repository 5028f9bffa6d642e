"""What the sans-IO :class:`~mcptrio.protocol.connection.Connection` hands back to its actor.

``Connection.receive(frame)`` returns a list of these. The session actor matches on them:

- :class:`RequestReceived`: run a handler for it and answer through the connection.
- :class:`CancelReceived`: cancel the handler of that request; send no answer.
- :class:`NotificationReceived`: any other notification (progress, initialized, list changes...).
- :class:`ResponseReceived` / :class:`ErrorReceived`: wake the caller waiting on that id.
- :class:`UnmatchedResponse`: a response to no pending request; log it and drop it.
- :class:`Reply`: bytes the protocol already answered with (errors, ``initialize``, ``ping``);
  send them as they are.
- :class:`HandshakeComplete`: the revision and peer are known.
- :class:`Ignored`: a message the protocol chose to drop, with the reason, for the log.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .base import Notification, Request, RequestId, Result
from .errors import McpError
from .request_meta import RequestMeta

__all__ = [
    "CancelReceived",
    "ErrorReceived",
    "Event",
    "HandshakeComplete",
    "Ignored",
    "NotificationReceived",
    "Reply",
    "RequestReceived",
    "ResponseReceived",
    "UnmatchedResponse",
]


class RequestReceived(msgspec.Struct, frozen=True):
    id: RequestId
    request: Request[Any]
    #: What a stateless-era request's ``_meta`` says (``None``: a handshake-era request).
    meta: RequestMeta | None = None


class CancelReceived(msgspec.Struct, frozen=True):
    request_id: RequestId
    reason: str | None


class NotificationReceived(msgspec.Struct, frozen=True):
    notification: Notification


class ResponseReceived(msgspec.Struct, frozen=True):
    id: RequestId
    result: Result


class ErrorReceived(msgspec.Struct, frozen=True):
    id: RequestId
    error: McpError


class UnmatchedResponse(msgspec.Struct, frozen=True):
    id: RequestId | None


class Reply(msgspec.Struct, frozen=True):
    """An answer the protocol layer made itself; ``answers``: the request id it answers (one
    member's, for a batch's answers), ``None`` when that id could not be read."""

    data: bytes
    answers: RequestId | None = None


class HandshakeComplete(msgspec.Struct, frozen=True):
    revision: str


class Ignored(msgspec.Struct, frozen=True):
    reason: str


Event = (
    RequestReceived
    | CancelReceived
    | NotificationReceived
    | ResponseReceived
    | ErrorReceived
    | UnmatchedResponse
    | Reply
    | HandshakeComplete
    | Ignored
)
