"""The two-phase JSON-RPC codec.

Phase one decodes a frame leniently into :class:`Envelope` (or a list of raw items, for a
2025-03-26 batch), leaving ``params``, ``result`` and ``error`` as :class:`msgspec.Raw`. Phase two
decodes the raw part into the type the method (or, for a response, the pending request) calls
for, with a decoder built once per type and reused. Encoding writes the envelope and the typed
body in one pass.

The functions here raise :class:`~mcptrio.protocol.errors.ParseError` for bytes that are not
JSON and :class:`~mcptrio.protocol.errors.InvalidRequest` for JSON that is not a message; the
connection turns them into error responses.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any, Generic, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from .base import RequestId
from .errors import InvalidParams, InvalidRequest, McpError, ParseError
from .long_strings import escape_long_strings, has_long_payload, written_whole

__all__ = [
    "NESTED_TOO_DEEP",
    "UNDECODABLE",
    "CarriedResult",
    "Envelope",
    "ErrorObject",
    "carry_result",
    "convert_result",
    "decode_body",
    "decode_error",
    "decode_frame",
    "decode_frame_expecting",
    "decode_item",
    "encode",
    "encode_batch",
    "encode_error",
    "encode_notification",
    "encode_request",
    "encode_result",
    "salvage_id",
]

T = TypeVar("T")


class Envelope(msgspec.Struct):
    """One JSON-RPC message as first decoded: every member optional, bodies left raw."""

    jsonrpc: str | UnsetType = UNSET
    id: int | str | UnsetType | None = UNSET
    method: str | UnsetType = UNSET
    params: msgspec.Raw | UnsetType = UNSET
    result: msgspec.Raw | UnsetType = UNSET
    error: msgspec.Raw | UnsetType = UNSET


class TypedEnvelope(msgspec.Struct, Generic[T]):
    """One JSON-RPC message decoded in one pass, its ``result`` already of the type expected
    (see :func:`decode_frame_expecting`); ``params`` and ``error`` left raw as in
    :class:`Envelope`."""

    jsonrpc: str | UnsetType = UNSET
    id: int | str | UnsetType | None = UNSET
    method: str | UnsetType = UNSET
    params: msgspec.Raw | UnsetType = UNSET
    result: T | UnsetType = UNSET
    error: msgspec.Raw | UnsetType = UNSET


class ErrorObject(msgspec.Struct, omit_defaults=True):
    """The ``error`` member of an error response."""

    code: int
    message: str
    data: Any = None


class _RequestOut(msgspec.Struct):
    jsonrpc: str
    id: RequestId
    method: str
    params: Any = UNSET


class _NotificationOut(msgspec.Struct):
    jsonrpc: str
    method: str
    params: Any = UNSET


class _ResultOut(msgspec.Struct):
    jsonrpc: str
    id: RequestId
    result: Any


class _ErrorOut(msgspec.Struct):
    jsonrpc: str
    id: RequestId | UnsetType | None
    error: ErrorObject


# What msgspec raises for bytes it cannot decode: malformed JSON, invalid UTF-8 in a string,
# and nesting deeper than its recursion limit.
UNDECODABLE = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)
#: How the error for a frame nested deeper than msgspec goes (Python's recursion limit, about
#: a thousand levels) ends: its JSON may be valid, it cannot be read here.
NESTED_TOO_DEEP = "nested too deeply to be read"

_encoder = msgspec.json.Encoder()
_frame_decoder: msgspec.json.Decoder[Envelope | list[msgspec.Raw]] = msgspec.json.Decoder(
    Envelope | list[msgspec.Raw]
)
_item_decoder = msgspec.json.Decoder(Envelope)
_error_decoder = msgspec.json.Decoder(ErrorObject)
_any_decoder = msgspec.json.Decoder()
_body_decoders: dict[type[Any], msgspec.json.Decoder[Any]] = {}
_typed_frame_decoders: dict[type[Any], msgspec.json.Decoder[Any]] = {}


def encode(obj: Any) -> bytes:
    """Encode any wire value with the shared encoder."""
    return _encoder.encode(obj)


def encode_request(request_id: RequestId, method: str, params: Any) -> bytes:
    """A request; ``ValueError`` if its params are nested past what msgspec writes (about a
    thousand levels), ``TypeError`` if they hold a value JSON cannot."""
    try:
        return _encoder.encode(_RequestOut("2.0", request_id, method, params))
    except RecursionError:
        raise ValueError(f"The params of {method} are nested too deeply to be written") from None


def encode_notification(method: str, params: Any) -> bytes:
    return _encoder.encode(_NotificationOut("2.0", method, params))


def encode_result(request_id: RequestId, result: Any) -> bytes:
    message = _ResultOut("2.0", request_id, result)
    if has_long_payload(result):
        # Written whole by orjson where that gives msgspec's bytes; else the long strings are
        # written by orjson and spliced in (see long_strings).
        whole = written_whole(message)
        if whole is not None:
            return whole
        message = _ResultOut("2.0", request_id, escape_long_strings(result))
    return _encoder.encode(message)


class CarriedResult:
    """A result response handed over in process without being encoded (the in-memory
    transport carries these, :func:`carry_result`): ``value`` is the result as the built-in
    values encoding it would write, its strings the result's own.

    Encoding a result and decoding it again costs two passes over every byte of its strings,
    which in process buys nothing: the receiver converts ``value`` into the type it expects
    instead (:func:`convert_result`), at a cost that does not grow with the strings' length
    (``docs/explanation/payload-cost.md`` has the figures).
    """

    __slots__ = ("id", "value")

    def __init__(self, request_id: RequestId, value: Any) -> None:
        self.id = request_id
        self.value = value

    def encoded(self) -> bytes:
        """The response as a frame, for a path that needs one (a buffer, a mismatch): one that
        :func:`carry_result` made always encodes."""
        return _encoder.encode(_ResultOut("2.0", self.id, self.value))


#: The most values (containers, their members and scalars) a result is looked through for
#: carrying. Past it the result is encoded: carrying saves a pass over its strings' bytes, and a
#: result of many small values has few bytes per value, so encoding costs about what the look
#: would.
CARRY_LOOK_LIMIT = 256

# A lone surrogate, which no UTF-8 (so no JSON frame) can hold.
_SURROGATE = re.compile("[\ud800-\udfff]")


def carry_result(request_id: RequestId, result: Any) -> CarriedResult | None:
    """``result`` as a :class:`CarriedResult`; ``None`` when its frame would not read back as
    the same values, or could not be written at all: it is then encoded as usual (and a
    result that cannot be encoded is answered with the error it always was).

    Its built-in form is taken now, so the handler can change or reuse its result object
    afterwards without the receiver seeing it. It is carried only when it is made of what
    JSON reads back unchanged, found by :func:`_reads_back`: a tuple (JSON makes it an array,
    a list), a float NaN or infinity (``null``), a string with a lone surrogate (no frame can
    hold one), or more than :data:`CARRY_LOOK_LIMIT` values is encoded instead. Keys are made
    strings as JSON makes them (``str_keys``); a key JSON cannot write makes it encoded.
    """
    try:
        value = msgspec.to_builtins(result, str_keys=True)
    except (TypeError, RecursionError):  # nested past msgspec's limit: encoding decides
        return None
    if not _reads_back(value):
        return None
    return CarriedResult(request_id, value)


def _reads_back(value: Any) -> bool:
    """Whether ``value`` (built-in values, keys strings) reads back from its JSON as itself,
    looking at no more than :data:`CARRY_LOOK_LIMIT` values. A string's bytes are read only if
    it is not ASCII (``str.isascii`` is a flag CPython keeps). The members of a container that
    are strings, integers, booleans or null are looked at where they stand, not pushed and
    popped: they cannot hold anything more to look at, and most of a result is made of them."""
    budget = CARRY_LOOK_LIMIT
    stack = [value]
    push = stack.append
    members: Iterable[Any]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            budget -= len(item)
            if budget < 0:
                return False
            for key in item:
                if not key.isascii() and _SURROGATE.search(key):
                    return False
            members = item.values()
        elif kind is list:
            budget -= len(item)
            if budget < 0:
                return False
            members = item
        elif kind is str:
            if not item.isascii() and _SURROGATE.search(item):
                return False
            continue
        elif kind is float:
            if not math.isfinite(item):
                return False
            continue
        elif kind is int or kind is bool or item is None:
            continue
        else:
            return False
        for member in members:
            kind = type(member)
            if kind is str:
                if not member.isascii() and _SURROGATE.search(member):
                    return False
            elif not (kind is int or kind is bool or member is None):
                push(member)
    return True


def convert_result(value: Any, result_type: type[T]) -> T:
    """A carried result's ``value`` as ``result_type``; :class:`InvalidParams` if it is not one."""
    try:
        return msgspec.convert(value, result_type)
    except msgspec.ValidationError as exc:
        raise InvalidParams(f"Invalid params: {exc}") from None


def encode_error(request_id: RequestId | UnsetType | None, error: McpError) -> bytes:
    """An error response; ``request_id`` is ``None`` (JSON null) or ``UNSET`` (left out) when the
    request's id could not be read."""
    body = ErrorObject(error.code, error.message, error.data)
    return _encoder.encode(_ErrorOut("2.0", request_id, body))


def encode_batch(frames: list[bytes]) -> bytes:
    """Join already-encoded messages into one JSON array."""
    return b"[" + b",".join(frames) + b"]"


def decode_frame(frame: bytes) -> Envelope | list[msgspec.Raw]:
    """Phase one for a whole frame: one envelope, or the raw items of a batch."""
    return _phase_one(_frame_decoder, frame, ParseError, "Parse error")


def decode_frame_expecting(
    frame: bytes, result_type: type[T]
) -> TypedEnvelope[T] | list[msgspec.Raw] | None:
    """Phase one and two in one pass, for a frame expected to answer with a ``result_type``.

    ``None`` when the frame does not decode that way (bad JSON, not a message, or a result that
    is not a ``result_type``): the caller then takes the two-phase path, which says what is
    wrong. Decoding ``result`` in phase one instead of leaving it raw saves a whole pass over it:
    to leave a value raw msgspec still scans every byte of it, which costs about what decoding
    it does, so the two phases read every large answer twice.
    """
    decoder = _typed_frame_decoders.get(result_type)
    if decoder is None:
        decoder = _typed_frame_decoders[result_type] = msgspec.json.Decoder(
            TypedEnvelope[result_type] | list[msgspec.Raw]  # type: ignore[valid-type]
        )
    try:
        decoded: TypedEnvelope[T] | list[msgspec.Raw] = decoder.decode(frame)
    except (msgspec.ValidationError, *UNDECODABLE):
        return None
    return decoded


def decode_item(item: msgspec.Raw) -> Envelope:
    """Phase one for one item of a batch (whose bytes already parsed as part of the frame)."""
    return _phase_one(_item_decoder, item, InvalidRequest, "Undecodable batch item")


def _phase_one(
    decoder: msgspec.json.Decoder[T],
    data: bytes | msgspec.Raw,
    undecodable: type[McpError],
    label: str,
) -> T:
    """``data`` decoded by ``decoder``; JSON that is not a message is an invalid request,
    bytes that are not JSON raise ``undecodable``."""
    try:
        return decoder.decode(data)
    except msgspec.ValidationError as exc:
        raise InvalidRequest(f"Not a JSON-RPC message: {exc}", salvage_id(data)) from None
    except RecursionError:
        raise undecodable(f"{label}: {NESTED_TOO_DEEP}") from None
    except UNDECODABLE as exc:
        raise undecodable(f"{label}: {exc}") from None


def salvage_id(data: bytes | msgspec.Raw) -> RequestId | None:
    """The ``id`` of a malformed message, when one can still be read (for the error response)."""
    try:
        value = _any_decoder.decode(data)
    except UNDECODABLE:
        return None
    if isinstance(value, dict):
        rid = value.get("id")
        if isinstance(rid, int | str) and not isinstance(rid, bool):
            return rid
    return None


def decode_body(raw: msgspec.Raw | UnsetType, body_type: type[T]) -> T:
    """Phase two: decode ``params`` or ``result`` into ``body_type``.

    An absent body decodes as the type's defaults (which fails if it has required fields).
    Raises :class:`InvalidParams` with msgspec's explanation on mismatch.
    """
    try:
        if raw is UNSET:
            return msgspec.convert({}, body_type)
        decoder: msgspec.json.Decoder[T] | None = _body_decoders.get(body_type)
        if decoder is None:
            decoder = _body_decoders[body_type] = msgspec.json.Decoder(body_type)
        return decoder.decode(raw)
    except UNDECODABLE as exc:
        raise InvalidParams(f"Invalid params: {exc}") from None


def decode_error(raw: msgspec.Raw) -> McpError:
    """The ``error`` of an error response, rebuilt as the matching :class:`McpError`."""
    try:
        obj = _error_decoder.decode(raw)
    except UNDECODABLE as exc:
        return InvalidRequest(f"Malformed error response: {exc}")
    return McpError.from_wire(obj.code, obj.message, obj.data)
