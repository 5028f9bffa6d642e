"""DPoP proofs (RFC 9449): a key the client holds, and a fresh signed proof per request.

The JOSE work (key generation, signing, the JWK thumbprint) is :mod:`joserfc`'s; this module
only says what goes in a proof:

- header: ``typ: dpop+jwt``, the algorithm, and the *public* key as ``jwk``;
- claims: a unique ``jti``, ``htm`` (the method), ``htu`` (the URL without query or fragment),
  ``iat``; ``ath`` (the SHA-256 of the access token) when one is presented to a resource
  server; ``nonce`` when the server supplied one (``DPoP-Nonce``, RFC 9449 §8/§9).

Nonces are kept per origin (the authorization server and each resource server hand out their
own) by :class:`DpopNonces`.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from joserfc import jwt
from joserfc.jwk import ECKey, import_key

from .fetch import origin_of

__all__ = ["DpopKey", "DpopNonces"]

#: The algorithm mcptrio signs proofs with (an asymmetric one, as RFC 9449 requires).
ALGORITHM = "ES256"


def _htu(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", "", ""))


class DpopKey:
    """An EC P-256 key pair that signs DPoP proofs."""

    algorithm = ALGORITHM

    def __init__(self, key: ECKey | None = None) -> None:
        self._key = key if key is not None else ECKey.generate_key("P-256", private=True)

    @classmethod
    def from_jwk(cls, jwk: dict[str, Any]) -> DpopKey:
        key = import_key(jwk, "EC")
        if not isinstance(key, ECKey):
            raise ValueError("A DPoP key must be an EC key")
        return cls(key)

    def private_jwk(self) -> dict[str, Any]:
        return dict(self._key.as_dict(private=True))

    @property
    def thumbprint(self) -> str:
        """The key's JWK SHA-256 thumbprint (RFC 7638), as ``cnf.jkt`` carries it."""
        return str(self._key.thumbprint())

    def proof(
        self,
        method: str,
        url: str,
        *,
        access_token: str | None = None,
        nonce: str | None = None,
    ) -> str:
        """A new proof for a ``method`` request to ``url``."""
        header = {
            "typ": "dpop+jwt",
            "alg": self.algorithm,
            "jwk": dict(self._key.as_dict(private=False)),
        }
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(24),
            "htm": method.upper(),
            "htu": _htu(url),
            "iat": int(time.time()),
        }
        if access_token is not None:
            digest = hashlib.sha256(access_token.encode("ascii")).digest()
            claims["ath"] = base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
        if nonce is not None:
            claims["nonce"] = nonce
        return jwt.encode(header, claims, self._key, algorithms=[self.algorithm])


class DpopNonces:
    """The latest ``DPoP-Nonce`` each origin supplied (bounded: an origin is one server)."""

    LIMIT = 64

    def __init__(self) -> None:
        self._nonces: dict[str, str] = {}

    def get(self, url: str) -> str | None:
        return self._nonces.get(origin_of(url))

    def put(self, url: str, nonce: str) -> bool:
        """Remember ``nonce`` for ``url``'s origin; ``True`` when it is new there."""
        origin = origin_of(url)
        if self._nonces.get(origin) == nonce:
            return False
        if origin not in self._nonces and len(self._nonces) >= self.LIMIT:
            self._nonces.pop(next(iter(self._nonces)))
        self._nonces[origin] = nonce
        return True
