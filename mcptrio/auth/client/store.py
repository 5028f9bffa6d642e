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
Several processes may share one (the command line's commands run side by side): each write
goes through a temporary file of its own, and, where the system has ``flock``, reads the file
and replaces it under an exclusive lock on ``PATH.lock``, so no write loses another's.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import msgspec
import trio

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: writes are atomic, not serialised
    fcntl = None  # type: ignore[assignment]

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
        # mkstemp: a name no other writer uses, created with mode 0600.
        fd, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.")
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(msgspec.json.encode(contents))
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise

    def _update(self, change: Callable[[_FileContents], None]) -> None:
        """Read the file, ``change`` what it holds and replace it, under the lock."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = os.open(self.path.with_name(self.path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if fcntl is not None:
                fcntl.flock(lock, fcntl.LOCK_EX)
            contents = self._load()
            change(contents)
            self._save(contents)
        finally:
            os.close(lock)

    async def get_tokens(self, resource: str) -> Tokens | None:
        contents = await trio.to_thread.run_sync(self._load)
        return contents.tokens.get(resource)

    async def set_tokens(self, resource: str, tokens: Tokens | None) -> None:
        def change(contents: _FileContents) -> None:
            if tokens is None:
                contents.tokens.pop(resource, None)
            else:
                contents.tokens[resource] = tokens

        await trio.to_thread.run_sync(self._update, change)

    async def get_registration(self, issuer: str) -> ClientRegistration | None:
        contents = await trio.to_thread.run_sync(self._load)
        return contents.registrations.get(issuer)

    async def set_registration(self, issuer: str, registration: ClientRegistration) -> None:
        def change(contents: _FileContents) -> None:
            contents.registrations[issuer] = registration

        await trio.to_thread.run_sync(self._update, change)
