"""One cheap look at a JSON-RPC frame, for routing it over HTTP.

The HTTP endpoint must know, before the session sees a POST body, whether it holds requests
(answered on this exchange) or only notifications and responses (202), which request ids it
carries, and whether it is ``initialize``; and for every frame the session sends, whether it is
a response (and to which ids) or a request or notification. :func:`peek` answers all of that
with one msgspec decode that leaves ``params`` and ``result`` unparsed, so routing costs one
scan of the bytes and no Python objects beyond the ids.
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET, UnsetType

from ....protocol.base import RequestId
from ....protocol.codec import NESTED_TOO_DEEP, UNDECODABLE, Envelope
from ....protocol.errors import InvalidRequest, ParseError
from ....protocol.unreadable import unreadable_message_id

__all__ = ["Peek", "peek", "peek_cancelled_id"]

CANCELLED = "notifications/cancelled"


class _CancelledParams(msgspec.Struct, rename="camel"):
    request_id: int | str


_decoder = msgspec.json.Decoder(Envelope | list[Envelope])
_cancel_decoder = msgspec.json.Decoder(_CancelledParams)


class Peek(msgspec.Struct, frozen=True):
    """What a frame holds, as far as HTTP routing cares."""

    # A Struct, not a NamedTuple: one is made for every POST and every frame a session sends
    # that is not a plain answer, and a Struct is the cheaper of the two to make.

    #: Ids of the requests in the frame, in order.
    request_ids: list[RequestId]
    #: Ids the responses in the frame answer, in order.
    response_ids: list[RequestId]
    #: Whether the frame is a batch (a JSON array).
    batch: bool
    #: Whether the frame is a single ``initialize`` request.
    initialize: bool
    #: The request ids of the ``notifications/cancelled`` in the frame.
    cancelled: list[RequestId]
    #: The frame's one message as decoded here (``None`` for a batch): a stateless-era POST
    #: reads its head from it instead of decoding the body again.
    message: Envelope | None


def peek(frame: bytes) -> Peek:
    """Classify ``frame``.

    Raises :class:`ParseError` for bytes that are not JSON (or nested too deeply to read, unless
    they begin as a response: see :mod:`mcptrio.protocol.unreadable`) and
    :class:`InvalidRequest` for JSON that is not a JSON-RPC message (or batch of them) this
    endpoint can route.
    """
    try:
        decoded = _decoder.decode(frame)
    except msgspec.ValidationError as exc:
        raise InvalidRequest(f"Not a JSON-RPC message: {exc}") from None
    except RecursionError:
        found = unreadable_message_id(frame)
        if found is not None and found[1]:
            # A response too deep to read: routed to the session all the same, which fails the
            # request it answered instead of leaving it to wait (see protocol.unreadable).
            return Peek([], [found[0]], False, False, [], None)
        raise ParseError(f"Parse error: {NESTED_TOO_DEEP}") from None
    except UNDECODABLE as exc:
        raise ParseError(f"Parse error: {exc}") from None
    if not isinstance(decoded, list):
        rid = decoded.id
        method = decoded.method
        if method is not UNSET and rid is not UNSET and rid is not None:
            # One request (nearly every POST, and every request a client sends): nothing in it
            # can be a response or a cancellation, so its Peek needs none of the loop below.
            return Peek([rid], [], False, method == "initialize", [], decoded)
        items: list[Envelope] | tuple[Envelope] = (decoded,)
    else:
        items = decoded
    if not items:
        raise InvalidRequest("Empty batch")
    requests: list[RequestId] = []
    responses: list[RequestId] = []
    cancelled: list[RequestId] = []
    initialize = False
    for item in items:
        rid = item.id
        if item.method is not UNSET:
            if rid is UNSET:
                if item.method == CANCELLED:
                    cancelled_id = peek_cancelled_id(item.params)
                    if cancelled_id is not None:
                        cancelled.append(cancelled_id)
                continue
            if rid is None:
                raise InvalidRequest("Request id must be a string or an integer, not null")
            requests.append(rid)
            initialize = item.method == "initialize"
        elif item.result is not UNSET or item.error is not UNSET:
            if isinstance(rid, int | str):
                responses.append(rid)
        else:
            raise InvalidRequest("Message is neither a request, a notification nor a response")
    if isinstance(decoded, list):
        return Peek(requests, responses, True, False, cancelled, None)
    return Peek(requests, responses, False, initialize, cancelled, decoded)


def peek_cancelled_id(params: msgspec.Raw | UnsetType) -> RequestId | None:
    """The ``requestId`` of a ``notifications/cancelled``'s params, when readable."""
    if params is UNSET:
        return None
    try:
        return _cancel_decoder.decode(params).request_id
    except (msgspec.ValidationError, *UNDECODABLE):
        return None
