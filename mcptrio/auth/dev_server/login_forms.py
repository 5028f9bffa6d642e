"""The development authorization server's login forms: a token per form shown, bound to the
browser that was shown it and to the authorization request it is for (:class:`LoginForms`).

A browser gets a login session at its first form: a random id in a cookie (``HttpOnly``,
``SameSite=Lax``, ``Path=/authorize``, ``Secure`` over https), which a browser does not send with
a cross-site POST. Each form carries a fresh token, remembered with that session and a digest
of the request's parameters (client, redirect URI, PKCE challenge, scope, resource, state). A
POST is taken only with a token that is remembered, unexpired, issued to the session whose
cookie came with the POST, for exactly the parameters posted; the token is then spent,
whatever the outcome. So a form opened by an attacker and posted from the victim's browser
(login CSRF) logs nobody in, nor does a form's token reused, or moved to another request.

Only ids this server issued are taken back from a cookie (an id planted in a browser is
replaced). Tokens live :data:`FORM_LIFETIME` seconds; at most ``max_entries`` tokens and
sessions are remembered, the oldest forgotten first.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie
from typing import Final

from ...transports.http.engine.exchange import HttpRequest, header
from .state import Remembered

__all__ = ["FORM_LIFETIME", "LoginForms", "session_cookie"]

#: Seconds a login form may stay open before its post is refused (and a fresh form shown).
FORM_LIFETIME: Final = 600.0
_COOKIE: Final = "mcptrio-dev-login"


@dataclass(frozen=True, slots=True)
class _Issued:
    session: str
    request: str
    expires_at: float


@dataclass(slots=True)
class LoginForms:
    """The login sessions and form tokens of one server (module docstring)."""

    max_entries: int = 10_000
    _sessions: Remembered[str, bool] = field(init=False, repr=False)
    _tokens: Remembered[str, _Issued] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._sessions = Remembered(self.max_entries)
        self._tokens = Remembered(self.max_entries)

    def session_of(self, request: HttpRequest) -> str | None:
        """The login session whose cookie ``request`` carries, if this server issued it."""
        raw = header(request.headers, b"cookie")
        if raw is None:
            return None
        cookies: SimpleCookie = SimpleCookie()
        try:
            cookies.load(raw.decode("latin-1"))
        except CookieError:
            return None
        morsel = cookies.get(_COOKIE)
        if morsel is None or self._sessions.get(morsel.value) is None:
            return None
        return morsel.value

    def issue(
        self, session: str | None, params: dict[str, str], carried: Iterable[str], *, now: float
    ) -> tuple[str, str]:
        """A token for a form showing ``params`` (its ``carried`` names) in ``session`` (a new
        one when ``None``): ``(session, token)``."""
        if session is None:
            session = secrets.token_urlsafe(32)
        self._sessions.put(session, True)
        token = secrets.token_urlsafe(32)
        self._tokens.put(token, _Issued(session, _digest(params, carried), now + FORM_LIFETIME))
        return session, token

    def spend(
        self,
        token: str,
        session: str | None,
        params: dict[str, str],
        carried: Iterable[str],
        *,
        now: float,
    ) -> bool:
        """Whether ``token`` was issued to ``session`` for ``params`` and is still good; it is
        spent either way."""
        issued = self._tokens.pop(token) if token else None
        return (
            issued is not None
            and session is not None
            and issued.expires_at > now
            and secrets.compare_digest(issued.session, session)
            and secrets.compare_digest(issued.request, _digest(params, carried))
        )


def session_cookie(session: str, *, secure: bool) -> tuple[bytes, bytes]:
    """The ``Set-Cookie`` header that gives a browser its login session."""
    attributes = "; Path=/authorize; HttpOnly; SameSite=Lax" + ("; Secure" if secure else "")
    return (b"set-cookie", f"{_COOKIE}={session}{attributes}".encode())


def _digest(params: dict[str, str], carried: Iterable[str]) -> str:
    fields = {name: params[name] for name in carried if name in params}
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()
