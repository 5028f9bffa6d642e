"""Failing a request whose outcome is unknown: it was sent, and no answer came.

Once a request's bytes were written, nothing on the client's side proves that the server did
not receive it and act on it (see :mod:`..engine.client_pool`, "theory of reuse"). Such a
request is never sent again by the HTTP client transports; it fails with
:class:`~..engine.client_pool.OutcomeUnknown`, whose message names the call (its method, and
the tool, prompt or resource it names) so that the user can check whether it ran, and the
failure is logged, because a caller that swallows it must not leave it unseen.
"""

from __future__ import annotations

import logging

import msgspec

from ..engine.client_pool import OutcomeUnknown

__all__ = ["describe_call", "outcome_unknown"]

log = logging.getLogger("mcptrio.transports.http.client")


class _Named(msgspec.Struct):
    name: str | None = None
    uri: str | None = None


class _Call(msgspec.Struct):
    method: str | None = None
    params: _Named | None = None


_call_decoder = msgspec.json.Decoder(_Call | list[_Call])


def describe_call(data: bytes) -> str:
    """``tools/call "charge"``: the method of the request ``data`` and what it names."""
    try:
        call = _call_decoder.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return "a request"
    if isinstance(call, list):
        return f"a batch of {len(call)} messages"
    if call.method is None:
        return "a request"
    params = call.params
    named = None if params is None else params.name or params.uri
    return call.method if named is None else f"{call.method} {named!r}"


def outcome_unknown(data: bytes, why: str) -> OutcomeUnknown:
    """The error of the request ``data`` that went unanswered because of ``why``; logged."""
    reason = why[:1].lower() + why[1:]
    error = OutcomeUnknown(
        f"The outcome of {describe_call(data)} is unknown: {reason}; the server may have run"
        " it, so it was not sent again"
    )
    log.warning("%s", error)
    return error
