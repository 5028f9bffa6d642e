"""What the development authorization server remembers: clients, codes, refresh tokens.

All of it is in memory and bounded: past ``max_entries`` of a kind the oldest entry is
forgotten (a client registered long ago must register again). Codes live ``code_lifetime``
seconds and are used once; refresh tokens rotate (each use returns a new one and retires the
old). Times are wall-clock seconds (``time.time()``), as tokens carry them.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

__all__ = ["Client", "CodeGrant", "Memory", "RefreshGrant", "Remembered"]

K = TypeVar("K")
V = TypeVar("V")


@dataclass(frozen=True, slots=True)
class Client:
    """A registered (or Client ID Metadata Document) client."""

    client_id: str
    redirect_uris: tuple[str, ...] = ()
    secret: str | None = None
    grant_types: tuple[str, ...] = ("authorization_code", "refresh_token")
    #: The scopes it may be granted without a user (``client_credentials``): a registered
    #: client's ``scope`` (``""`` when it named none); ``None`` for a client registered in code
    #: without one, which the server's owner trusts with any of its scopes.
    scope: str | None = None
    name: str | None = None
    issued_at: int = field(default_factory=lambda: int(time.time()))
    #: The public keys of a ``private_key_jwt`` client (a JWKS).
    jwks: dict[str, Any] | None = None

    @property
    def public(self) -> bool:
        """Whether the client has no way to authenticate (no secret, no keys)."""
        return self.secret is None and self.jwks is None


@dataclass(frozen=True, slots=True)
class CodeGrant:
    """An authorization code, waiting for its exchange at the token endpoint."""

    client_id: str
    redirect_uri: str
    code_challenge: str
    subject: str
    scopes: tuple[str, ...]
    resource: str | None
    expires_at: float


@dataclass(frozen=True, slots=True)
class RefreshGrant:
    """A refresh token's grant."""

    client_id: str
    subject: str
    scopes: tuple[str, ...]
    resource: str | None
    expires_at: float


class Remembered(Generic[K, V]):
    """A bounded mapping that forgets its oldest entries past ``limit``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._items: OrderedDict[K, V] = OrderedDict()

    def put(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.limit:
            self._items.popitem(last=False)

    def get(self, key: K) -> V | None:
        return self._items.get(key)

    def pop(self, key: K) -> V | None:
        return self._items.pop(key, None)

    def __len__(self) -> int:
        return len(self._items)


class Memory:
    """The server's state; see the module docstring."""

    def __init__(self, *, max_entries: int = 10_000) -> None:
        self.clients: Remembered[str, Client] = Remembered(max_entries)
        self.codes: Remembered[str, CodeGrant] = Remembered(max_entries)
        self.refresh: Remembered[str, RefreshGrant] = Remembered(max_entries)
        #: The (client id, jti) of the client assertions used, with their expiry.
        self.assertions: Remembered[tuple[str, str], float] = Remembered(max_entries)

    def new_code(self, grant: CodeGrant) -> str:
        code = secrets.token_urlsafe(32)
        self.codes.put(code, grant)
        return code

    def take_code(self, code: str) -> CodeGrant | None:
        """The grant of ``code``, which is then gone (codes are single use); ``None`` for an
        unknown or expired code."""
        grant = self.codes.pop(code)
        if grant is None or grant.expires_at < time.time():
            return None
        return grant

    def new_refresh(self, grant: RefreshGrant) -> str:
        token = secrets.token_urlsafe(32)
        self.refresh.put(token, grant)
        return token

    def take_refresh(self, token: str) -> RefreshGrant | None:
        grant = self.refresh.pop(token)
        if grant is None or grant.expires_at < time.time():
            return None
        return grant
