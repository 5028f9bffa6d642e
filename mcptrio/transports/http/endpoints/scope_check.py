"""The HTTP-level scope check: a call of a tool, prompt or resource that needs scopes the
request's principal lacks is answered 403 ``insufficient_scope`` before a session sees it.

The server says what a call needs through ``required_scopes(method, name_or_uri)`` (a
:class:`mcptrio.Server` has it: the ``scopes=`` of ``@server.tool``, ``@server.prompt`` and
``@server.resource``); the authenticator says how to refuse
(:meth:`~.security.HttpSecurity.scope_refusal`). Only a POST holding one request can be judged
here; the requests of a batch, and those of a WebSocket connection, are checked again by the
server itself, which answers them with a JSON-RPC error instead.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec
from msgspec import UNSET

from ....protocol.codec import Envelope
from ..engine.exchange import HttpRequest
from .security import HttpSecurity, Principal, Refusal

__all__ = ["scope_refusal"]

#: The methods whose target may need scopes, and the member of ``params`` naming it.
_TARGETS: Final = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


class _Target(msgspec.Struct):
    name: Any = None
    uri: Any = None


_decoder = msgspec.json.Decoder(_Target)


def scope_refusal(
    security: HttpSecurity,
    factory: object,
    request: HttpRequest,
    principal: Principal | None,
    message: Envelope | None,
) -> Refusal | None:
    """The 403 for ``message`` (a POST's one message) when its target needs scopes
    ``principal`` lacks; ``None`` otherwise, and always without an authenticator."""
    if security.authenticator is None or message is None:
        return None
    member = _TARGETS.get(message.method) if isinstance(message.method, str) else None
    required = getattr(factory, "required_scopes", None)
    if member is None or required is None or message.params is UNSET:
        return None
    try:
        target = _decoder.decode(message.params)
    except msgspec.DecodeError:
        return None  # the session answers the malformed params (-32602)
    key = getattr(target, member)
    if not isinstance(key, str):
        return None
    scopes: frozenset[str] = required(message.method, key)
    return security.scope_refusal(request, principal, scopes)
