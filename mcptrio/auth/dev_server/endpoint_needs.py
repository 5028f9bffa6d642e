"""What the development authorization server's endpoints (``/authorize``, ``/token`` and its
client assertions) read of the server that routes to them: :class:`AuthorizationServerState`.

:class:`~.server.DevAuthorizationServer` has all of it; the endpoints name this protocol, so
that they depend on what they read and the server module on them, not both ways.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from .clients import Clients
from .login_forms import LoginForms
from .login_throttle import LoginThrottle
from .state import Memory

__all__ = ["AuthorizationServerState"]


class AuthorizationServerState(Protocol):
    """The settings, the registered clients and the grants in flight of one server."""

    @property
    def issuer(self) -> str: ...

    def url(self, path: str) -> str: ...

    scopes: tuple[str, ...]
    auto_approve: bool
    users: dict[str, str]
    default_subject: str
    access_token_lifetime: int
    refresh_token_lifetime: int
    code_lifetime: int
    login_forms: LoginForms
    login_throttle: LoginThrottle
    memory: Memory
    clients: Clients

    def issue_token(
        self,
        subject: str,
        *,
        scopes: Iterable[str] = (),
        resource: str | Iterable[str] | None = None,
        client_id: str = "dev-client",
        lifetime: int | None = None,
    ) -> str: ...
