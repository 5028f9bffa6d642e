"""The development authorization server's ``/authorize``: the code grant's first leg, with PKCE.

The request is checked in the order RFC 6749 section 4.1.2.1 asks: until the client and its
redirect URI are known to match, an error is shown as a page (never redirected, so the endpoint
is no open redirector); after that, errors go back to the client's redirect URI with ``error``,
``state`` and ``iss``. PKCE is required, with ``S256`` only (OAuth 2.1). The scopes asked for
must be among the server's (default: the client's registered ``scope``, else every scope the
server has but ``offline_access``); ``resource`` (RFC 8707) must be an absolute URI and
becomes the token's audience.

Approval: with ``auto_approve`` the user is ``login_hint`` or the server's ``default_subject``
at once (a consent page that always agrees, for tests); otherwise a login form is shown, and
its POST back here approves once the name and password match one of ``users``. The POST must
carry the token of a form this browser was shown for this very request (else 403 and a fresh
form: :mod:`.login_forms`), and the name and the client's address must not be over their
failed-login limits (else 429 with ``Retry-After``: :mod:`.login_throttle`).
"""

from __future__ import annotations

import hmac
import html
import math
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import trio

from ...transports.http.engine.exchange import HttpRequest, HttpResponder
from .answers import FormError, query_params, read_form, redirect, send_html
from .clients import OAuthProblem, is_registered_redirect
from .endpoint_needs import AuthorizationServerState
from .login_forms import session_cookie
from .state import CodeGrant

__all__ = ["handle"]

_CARRIED = (
    "response_type",
    "client_id",
    "redirect_uri",
    "scope",
    "state",
    "code_challenge",
    "code_challenge_method",
    "resource",
)


async def _error_page(responder: HttpResponder, status: int, message: str) -> None:
    page = (
        "<!doctype html><title>Authorization error</title><h1>Authorization error</h1>"
        f"<p>{html.escape(message)}</p>"
    )
    await send_html(responder, status, page)


async def handle(
    server: AuthorizationServerState, request: HttpRequest, responder: HttpResponder
) -> None:
    """Answer a GET (the client's redirect) or a POST (the login form) at ``/authorize``."""
    try:
        params = query_params(request) if request.method == "GET" else await read_form(request)
    except FormError as exc:
        await _error_page(responder, 400, str(exc))
        return
    client_id = params.get("client_id", "")
    if not client_id:
        await _error_page(responder, 400, "client_id is missing")
        return
    try:
        client = await server.clients.find(client_id)
    except OAuthProblem as exc:
        await _error_page(responder, 400, f"{exc.error}: {exc.description}")
        return
    redirect_uri = params.get("redirect_uri")
    if redirect_uri is None and len(client.redirect_uris) == 1:
        redirect_uri = client.redirect_uris[0]
    if redirect_uri is None or not is_registered_redirect(redirect_uri, client.redirect_uris):
        await _error_page(
            responder, 400, "redirect_uri is missing or not registered for this client"
        )
        return
    answer = {"iss": server.issuer}
    if "state" in params:
        answer["state"] = params["state"]
    try:
        grant = _check(server, params, client.scope, client_id, redirect_uri)
        if grant is None:
            return await _login_form(server, request, responder, params)
        subject = _approve(server, request, params)
        if isinstance(subject, _Refusal):
            return await _login_form(server, request, responder, params, subject)
    except OAuthProblem as exc:
        # The client and its redirect URI are known to match: errors go back there.
        await redirect(
            responder,
            redirect_uri,
            {"error": exc.error, "error_description": exc.description, **answer},
        )
        return
    code = server.memory.new_code(
        CodeGrant(
            client_id=client_id,
            redirect_uri=redirect_uri,
            code_challenge=grant.code_challenge,
            subject=subject,
            scopes=grant.scopes,
            resource=grant.resource,
            expires_at=time.time() + server.code_lifetime,
        )
    )
    await redirect(responder, redirect_uri, {"code": code, **answer})


def _check(
    server: AuthorizationServerState,
    params: dict[str, str],
    client_scope: str | None,
    client_id: str,
    redirect_uri: str,
) -> CodeGrant | None:
    """The grant the request asks for (``subject`` still blank); ``None`` when a login form
    must be shown first."""
    if params.get("response_type") != "code":
        raise OAuthProblem("unsupported_response_type", "response_type must be code")
    challenge = params.get("code_challenge", "")
    if not challenge:
        raise OAuthProblem("invalid_request", "code_challenge is required (PKCE)")
    if params.get("code_challenge_method") != "S256":
        raise OAuthProblem("invalid_request", "code_challenge_method must be S256")
    if not 43 <= len(challenge) <= 128:
        raise OAuthProblem("invalid_request", "code_challenge is not an S256 challenge")
    scope = params.get("scope")
    if scope is None:
        requested = tuple((client_scope or "").split()) or tuple(
            s for s in server.scopes if s != "offline_access"
        )
    else:
        requested = tuple(scope.split())
    unknown = [s for s in requested if s not in server.scopes]
    if unknown:
        raise OAuthProblem("invalid_scope", f"unknown scope {' '.join(unknown)}")
    resource = params.get("resource")
    if resource is not None:
        parts = urlsplit(resource)
        if not parts.scheme or not parts.netloc or parts.fragment:
            raise OAuthProblem(
                "invalid_target", "resource must be an absolute URI without fragment"
            )
    grant = CodeGrant(client_id, redirect_uri, challenge, "", requested, resource, 0.0)
    if not server.auto_approve and "username" not in params:
        return None
    return grant


@dataclass(frozen=True, slots=True)
class _Refusal:
    """Why a login form's POST approved nothing: its answer's status and notice."""

    status: int
    notice: str
    retry_after: int | None = None


_WRONG = _Refusal(401, "Wrong name or password.")
_STALE_FORM = _Refusal(
    403, "This login form expired, was used already, or was opened elsewhere: log in again."
)


def _approve(
    server: AuthorizationServerState, request: HttpRequest, params: dict[str, str]
) -> str | _Refusal:
    """Who approved: the user of the login form, or at once when auto-approving."""
    if server.auto_approve:
        return params.get("login_hint") or server.default_subject
    if request.method != "POST":
        return _WRONG
    now = trio.current_time()
    session = server.login_forms.session_of(request)
    if not server.login_forms.spend(
        params.get("form_token", ""), session, params, _CARRIED, now=now
    ):
        return _STALE_FORM
    name = params.get("username", "")
    address = request.client[0] if request.client is not None else "unknown"
    throttle = server.login_throttle
    wait = throttle.wait(name, address, now=now)
    if wait > 0:
        seconds = math.ceil(wait)
        notice = (
            "Too many failed logins for this name or from this address:"
            f" try again in {seconds} seconds."
        )
        return _Refusal(429, notice, seconds)
    password = server.users.get(name)
    if password is None or not hmac.compare_digest(password, params.get("password", "")):
        throttle.failed(name, address, now=now)
        return _WRONG
    throttle.succeeded(name)
    return name


async def _login_form(
    server: AuthorizationServerState,
    request: HttpRequest,
    responder: HttpResponder,
    params: dict[str, str],
    refusal: _Refusal | None = None,
) -> None:
    """The login form for ``params``, with a fresh token for this browser and request."""
    session, token = server.login_forms.issue(
        server.login_forms.session_of(request), params, _CARRIED, now=trio.current_time()
    )
    hidden = "".join(
        f'<input type="hidden" name="{name}" value="{html.escape(params[name])}">'
        for name in _CARRIED
        if name in params
    )
    notice = "" if refusal is None else f"<p><strong>{html.escape(refusal.notice)}</strong></p>"
    page = (
        "<!doctype html><title>Log in</title><h1>Log in to the development server</h1>"
        f"<p>{html.escape(params.get('client_id', ''))} asks for "
        f"<code>{html.escape(params.get('scope', '(default scopes)'))}</code>.</p>{notice}"
        '<form method="post" action="/authorize">'
        f'{hidden}<input type="hidden" name="form_token" value="{token}">'
        '<label>Name <input name="username" autocomplete="username"></label> '
        '<label>Password <input name="password" type="password"></label> '
        '<button type="submit">Log in and allow</button></form>'
    )
    headers = [session_cookie(session, secure=request.scheme == "https")]
    if refusal is not None and refusal.retry_after is not None:
        headers.append((b"retry-after", str(refusal.retry_after).encode()))
    await send_html(responder, 200 if refusal is None else refusal.status, page, tuple(headers))
