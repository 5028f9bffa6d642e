"""Where the OAuth client keeps what outlives one login: tokens and client registrations.

:class:`TokenStore` is the interface; :class:`InMemoryTokenStore` (the default) keeps them for
the life of the object, :class:`FileTokenStore` in a JSON file for command-line programs that
log in once and run many times.

Keys, and why:

- **tokens** by the MCP server's canonical URI (the ``resource`` they were issued for). Each
  :class:`Tokens` also records the issuer that issued it: when the server's metadata names
  another authorization server, tokens of the old one are never sent (SEP-2352).
- **registrations** by the authorization server's ``issuer``: a ``client_id`` one server gave
  means nothing to another, and must never be shown to it (SEP-2352, "Authorization Server
  Binding").

A file store holds refresh tokens and client secrets: it is created readable by its owner only
(mode ``0600``) and replaced atomically on every write, so a crash never leaves half a file.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import msgspec
import trio

__all__ = [
    "ClientRegistration",
    "FileTokenStore",
    "InMemoryTokenStore",
    "TokenStore",
    "Tokens",
]


class Tokens(msgspec.Struct, frozen=True, kw_only=True):
    """An access token and what came with it."""

    access_token: str
    #: ``"Bearer"`` or ``"DPoP"`` (a sender-constrained token, RFC 9449).
    token_type: str = "Bearer"
    #: When it expires (``time.time()`` seconds), if the server said.
    expires_at: float | None = None
    refresh_token: str | None = None
    #: The scopes granted, as the token endpoint reported them (else those requested).
    scopes: tuple[str, ...] = ()
    #: The issuer that issued it, and the resource it is for.
    issuer: str = ""
    resource: str = ""
    #: The DPoP private key the token is bound to (a JWK), for a ``DPoP`` token.
    dpop_key: dict[str, Any] | None = None

    def expired(self, *, margin: float = 30.0) -> bool:
        """Whether it has expired, or will within ``margin`` seconds."""
        return self.expires_at is not None and time.time() + margin >= self.expires_at


class ClientRegistration(msgspec.Struct, frozen=True, kw_only=True):
    """How the client is known to one authorization server."""

    client_id: str
    client_secret: str | None = None
    #: ``none``, ``client_secret_basic``, ``client_secret_post`` or ``private_key_jwt``.
    token_endpoint_auth_method: str | None = None
    #: The issuer it was registered with ("" for pre-registered credentials given for any).
    issuer: str = ""
    #: When ``client_secret`` expires (``time.time()`` seconds); ``None``: never.
    expires_at: float | None = None


class TokenStore(Protocol):
    """Persistence for tokens (by resource) and registrations (by issuer)."""

    async def get_tokens(self, resource: str) -> Tokens | None: ...

    async def set_tokens(self, resource: str, tokens: Tokens | None) -> None: ...

    async def get_registration(self, issuer: str) -> ClientRegistration | None: ...

    async def set_registration(self, issuer: str, registration: ClientRegistration) -> None: ...


class InMemoryTokenStore:
    """Tokens and registrations in memory, for as long as this object lives."""

    def __init__(self) -> None:
        self._tokens: dict[str, Tokens] = {}
        self._registrations: dict[str, ClientRegistration] = {}

    async def get_tokens(self, resource: str) -> Tokens | None:
        await trio.lowlevel.checkpoint()
        return self._tokens.get(resource)

    async def set_tokens(self, resource: str, tokens: Tokens | None) -> None:
        await trio.lowlevel.checkpoint()
        if tokens is None:
            self._tokens.pop(resource, None)
        else:
            self._tokens[resource] = tokens

    async def get_registration(self, issuer: str) -> ClientRegistration | None:
        await trio.lowlevel.checkpoint()
        return self._registrations.get(issuer)

    async def set_registration(self, issuer: str, registration: ClientRegistration) -> None:
        await trio.lowlevel.checkpoint()
        self._registrations[issuer] = registration


class _FileContents(msgspec.Struct):
    tokens: dict[str, Tokens] = {}
    registrations: dict[str, ClientRegistration] = {}


@dataclass
class FileTokenStore:
    """Tokens and registrations in one JSON file at ``path`` (mode ``0600``).

    The file is read on every lookup and rewritten on every change, so several processes
    logging in to the same servers one after another share their logins. An unreadable or
    malformed file counts as empty (a log in starts over) and is replaced on the next write.
    """

    path: Path

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def _load(self) -> _FileContents:
        try:
            return msgspec.json.decode(self.path.read_bytes(), type=_FileContents)
        except (OSError, msgspec.DecodeError):
            return _FileContents()

    def _save(self, contents: _FileContents) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as file:
            file.write(msgspec.json.encode(contents))
        os.replace(temporary, self.path)

    async def get_tokens(self, resource: str) -> Tokens | None:
        contents = await trio.to_thread.run_sync(self._load)
        return contents.tokens.get(resource)

    async def set_tokens(self, resource: str, tokens: Tokens | None) -> None:
        def update() -> None:
            contents = self._load()
            if tokens is None:
                contents.tokens.pop(resource, None)
            else:
                contents.tokens[resource] = tokens
            self._save(contents)

        await trio.to_thread.run_sync(update)

    async def get_registration(self, issuer: str) -> ClientRegistration | None:
        contents = await trio.to_thread.run_sync(self._load)
        return contents.registrations.get(issuer)

    async def set_registration(self, issuer: str, registration: ClientRegistration) -> None:
        def update() -> None:
            contents = self._load()
            contents.registrations[issuer] = registration
            self._save(contents)

        await trio.to_thread.run_sync(update)
