"""``requestState`` of input-required results, sealed so that a client cannot forge or edit it.

In the stateless era a handler that needs input ends its round with an input-required result,
and the client retries with the answers (:mod:`.input_rounds`). What the server must remember
between rounds travels with the client, in ``requestState``: the answers gathered in earlier
rounds. The spec makes that attacker-controlled input which must be integrity-protected when it
matters (CHECKLIST 10.10), and here it always matters: the answers feed the handler.

So the state is sealed with AES-GCM (``cryptography``): authenticated encryption, so that it can
be neither read nor changed. The sealed payload binds

- the method, and a digest of the request's own params (tool or prompt name, or URI, and the
  arguments): state from one call is refused by any other;
- the principal it was issued to (the authenticator's ``subject``; ``None`` without one): state
  issued to one user is refused to any other, as SEP-2322 requires of user-specific state (the
  answers are the user's), and state issued without a principal is refused to one with a
  principal and the other way round;
- an expiry (:data:`DEFAULT_STATE_TTL` seconds after it was sealed);
- the answers so far, and the keys the round that sealed it asked for: the retry may answer
  those and nothing else (:mod:`.input_rounds`).

The key is :class:`RequestStateKey`: given to the server (``Server(request_state_key=...)``, or
the ``MCPTRIO_REQUEST_STATE_KEY`` environment variable, 32 bytes in base64), or else drawn at
random once per process. Several workers behind one endpoint must share a key, since the retry
may land on any of them: the Redis stores give a
:class:`~mcptrio.stores.request_state_key_ring.KeyRing` that follows the key Redis holds, and
this seals with its current key and opens with any key it still accepts.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import secrets
import time
from collections.abc import Collection, Mapping
from typing import Any, Final, TypeAlias

import msgspec
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..protocol.errors import InvalidParams
from ..stores.request_state_key_ring import KeyRing

__all__ = [
    "DEFAULT_STATE_TTL",
    "KEY_ENVIRONMENT_VARIABLE",
    "KeySource",
    "RequestStateKey",
    "SealedState",
    "params_digest",
]

#: How long a sealed state stays valid (seconds): long enough for a person to answer.
DEFAULT_STATE_TTL: Final = 900.0
#: The environment variable a key is read from when none is given in code.
KEY_ENVIRONMENT_VARIABLE: Final = "MCPTRIO_REQUEST_STATE_KEY"
# Names the format, so that a later one is never mistaken for this one.
_AAD: Final = b"mcptrio.requestState.v2"
_NONCE_SIZE: Final = 12

#: What a key is given as: raw bytes, base64 text, a ring that follows a shared key, or ``None``
#: (the environment variable, else a key drawn for this process).
KeySource: TypeAlias = bytes | str | KeyRing | None


class SealedState(msgspec.Struct, array_like=True):
    """What a ``requestState`` carries (see the module docstring)."""

    method: str
    digest: bytes
    principal: str | None
    expires: float
    #: The answers of earlier rounds, by key: the retry cannot change them.
    answers: dict[str, Any]
    #: The keys the round that sealed this state asked for: the retry's answers to these count.
    asked: list[str]


_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(SealedState)


def params_digest(method: str, name: str | None, arguments: Mapping[str, Any] | None) -> bytes:
    """What a state is bound to: the method, the name or URI and the arguments."""
    canonical = msgspec.json.encode([method, name, arguments or {}], order="sorted")
    return hashlib.sha256(canonical).digest()


class RequestStateKey:
    """Seals and opens ``requestState`` (see the module docstring)."""

    __slots__ = ("_aead", "_opening", "_ring", "_version", "ttl")

    def __init__(self, key: KeySource = None, *, ttl: float = DEFAULT_STATE_TTL) -> None:
        self.ttl = ttl
        self._ring: KeyRing | None = None
        self._version = -1
        if isinstance(key, KeyRing):
            self._ring = key
            self._aead = _cipher(key.current)
            self._opening: tuple[AESGCM, ...] = (self._aead,)
            self._follow_ring()
            return
        if key is None:
            key = os.environ.get(KEY_ENVIRONMENT_VARIABLE)
        if key is None:
            raw = secrets.token_bytes(32)
        elif isinstance(key, str):
            try:
                raw = base64.b64decode(key, validate=True)
            except binascii.Error:
                raise ValueError("request_state_key: not base64") from None
        else:
            raw = key
        self._aead = _cipher(raw)
        self._opening = (self._aead,)

    def _follow_ring(self) -> None:
        # The ciphers are rebuilt only when the ring changed; a ring is short (the current
        # key and the few retired within the grace period).
        ring = self._ring
        if ring is None:
            return
        accepted = ring.accepted()
        if ring.version != self._version:
            self._version = ring.version
            self._opening = tuple(_cipher(key) for key in accepted)
            self._aead = self._opening[0]

    def seal(
        self,
        method: str,
        digest: bytes,
        answers: Mapping[str, Any],
        *,
        principal: str | None = None,
        asked: Collection[str] = (),
    ) -> str:
        """The ``requestState`` that carries ``answers`` for a retry of this very request by
        ``principal``, which may answer the keys ``asked``."""
        content = SealedState(
            method, digest, principal, time.time() + self.ttl, dict(answers), list(asked)
        )
        payload = _encoder.encode(content)
        self._follow_ring()
        nonce = secrets.token_bytes(_NONCE_SIZE)
        sealed = nonce + self._aead.encrypt(nonce, payload, _AAD)
        return base64.urlsafe_b64encode(sealed).decode("ascii").rstrip("=")

    def open(
        self, state: str, method: str, digest: bytes, *, principal: str | None = None
    ) -> SealedState:
        """What a ``requestState`` carries; :class:`InvalidParams` unless it is intact,
        unexpired, sealed for this very request and issued to ``principal``."""
        self._follow_ring()
        try:
            sealed = base64.urlsafe_b64decode(state + "=" * (-len(state) % 4))
            payload = _open_with_any(self._opening, sealed)
            content = _decoder.decode(payload)
        except (binascii.Error, ValueError, InvalidTag, msgspec.DecodeError):
            raise InvalidParams("requestState failed its integrity check") from None
        if content.method != method or content.digest != digest:
            raise InvalidParams("requestState was issued for another request")
        if content.principal != principal:
            raise InvalidParams("requestState was issued to another user: start the request again")
        if content.expires < time.time():
            raise InvalidParams("requestState has expired: start the request again")
        return content


def _cipher(raw: bytes) -> AESGCM:
    if len(raw) not in (16, 24, 32):
        raise ValueError("request_state_key must be 16, 24 or 32 bytes (AES-GCM)")
    return AESGCM(raw)


def _open_with_any(ciphers: tuple[AESGCM, ...], sealed: bytes) -> bytes:
    """The payload of ``sealed`` under the first of ``ciphers`` that opens it (a retired key
    opens what was sealed before the workers converged on the current one)."""
    nonce, body = sealed[:_NONCE_SIZE], sealed[_NONCE_SIZE:]
    for cipher in ciphers[:-1]:
        try:
            return cipher.decrypt(nonce, body, _AAD)
        except InvalidTag:
            continue
    return ciphers[-1].decrypt(nonce, body, _AAD)
