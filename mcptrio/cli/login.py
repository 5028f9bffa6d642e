"""``--login`` and ``mcptrio logout``: OAuth for the client commands, a login kept per server.

With ``--login``, a client command logs in to an ``http(s)://`` server before it connects: it
asks the server once without a token, and when the server refuses (``401``, with its OAuth
metadata) it runs the authorization code flow of :mod:`mcptrio.auth.client` through the user's
browser (Python's :mod:`webbrowser`, so ``BROWSER`` chooses it; the URL is printed on stderr
too, for a terminal with no browser), the code coming back on a loopback redirect. ``--login``
always logs in afresh: it is how a user changes account, or replaces a login the server no
longer takes.

The tokens are kept in one file, :func:`token_cache` (mode ``0600``, replaced atomically; see
:class:`~mcptrio.auth.client.FileTokenStore`), by the server's canonical URL; the client
registrations (with their secrets) by authorization server. A later command to the same server,
without ``--login``, sends the kept token, and when the server refuses it (expired), refreshes
it; a refresh that fails asks for ``--login`` again, and never opens a browser unasked. A
server that refuses a command that has no login for it is one line saying to add ``--login``.
``mcptrio logout URL`` forgets a server's tokens; ``--all`` forgets the whole file.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import webbrowser
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from ..client.targets import HttpTarget, StdioTarget, Target, http
from ..protocol.errors import McpError
from .errors import EXIT_CONNECTION, EXIT_OK, CliError, usage_error

if TYPE_CHECKING:
    from ..auth.client import FileTokenStore, OAuthClient, Tokens
    from ..auth.client.grants import Grant, GrantContext
    from ..auth.client.store import ClientRegistration, TokenStore

__all__ = ["Login", "login_for", "logout", "token_cache"]

#: How long the user has to log in in the browser.
LOGIN_TIMEOUT = 300.0
_AUTHORIZATION = "authorization"


def token_cache() -> Path:
    """The file the logins are kept in: ``$XDG_CACHE_HOME/mcptrio/tokens.json``, else
    ``~/.cache/mcptrio/tokens.json`` (a relative ``XDG_CACHE_HOME`` is ignored, as the XDG
    specification says)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    return root / "mcptrio" / "tokens.json"


def _file_store() -> FileTokenStore:
    try:
        from ..auth.client import FileTokenStore
    except ImportError:
        raise usage_error(
            "--login and logout need the auth extra: pip install 'mcptrio[auth]'"
        ) from None
    return FileTokenStore(token_cache())


def login_for(target: Target, label: str, args: argparse.Namespace) -> Login | None:
    """How a client command to ``target`` authorizes itself: ``None`` for a target that is no
    ``http(s)://`` URL, or one given an ``Authorization`` header (which no login replaces).
    ``--login`` with such a target is a usage error."""
    url = target.url if isinstance(target, HttpTarget) else target
    headers = target.headers if isinstance(target, HttpTarget) else None
    by_header = any(name.lower() == _AUTHORIZATION for name in headers or {})
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        if args.login:
            if isinstance(target, str):
                reached = "a WebSocket upgrade gets no OAuth challenge to answer"
            elif isinstance(target, StdioTarget):
                reached = "a server started after -- is spoken to over stdio"
            else:
                reached = f"{label} is run in memory"
            raise usage_error(f"--login is for http(s):// servers: {reached}")
        return None
    if by_header:
        if args.login:
            raise usage_error("--login and --header Authorization both authorize: give one")
        return None
    return Login(url, label, fresh=args.login, timeout=args.timeout)


@dataclass
class Login:
    """A client command's login to the ``http(s)://`` server at ``url``."""

    url: str
    label: str
    #: ``--login``: log in now, whatever is kept.
    fresh: bool
    timeout: float
    #: Whether the command goes with a kept login or a fresh one (set by :meth:`target`).
    logged_in: bool = False
    _no_login: _NoLogin = dataclasses.field(default_factory=lambda: _NoLogin())

    async def target(self, target: Target) -> Target:
        """``target`` with the OAuth client that sends the kept token (or logs in, with
        ``--login``); ``target`` itself when there is nothing to send."""
        from ..auth.client.discovery import canonical_resource

        store = _file_store()
        resource = canonical_resource(self.url)
        if self.fresh:
            fresh = _WithoutTokensOf(store, resource)
            oauth = self._oauth(fresh, _BrowserLogin(self.label))
            await self._log_in(oauth)
            if not fresh.replaced:
                sys.stderr.write(f"mcptrio: {self.label} asks for no login; none was kept\n")
                return target
        elif (kept := await store.get_tokens(resource)) is not None:
            self._no_login.kept = kept
            oauth = self._oauth(store, self._no_login)
        else:
            return target
        self.logged_in = True
        base = target if isinstance(target, HttpTarget) else http(self.url)
        return dataclasses.replace(base, auth=oauth)

    def _oauth(self, store: TokenStore, grant: Grant) -> OAuthClient:
        from ..auth.client import OAuthClient

        return OAuthClient(grant, store=store, timeout=self.timeout)

    async def _log_in(self, oauth: OAuthClient) -> None:
        """Ask the server once, with no token: its refusal makes ``oauth`` log in (see the
        module's docstring); a server that does not refuse needs no login."""
        from ..auth.client import AuthorizationError
        from ..auth.http_pools import open_http_pool
        from ..transports.http.client.auth_hook import AuthorizedRequests

        token_cache().parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        headers = [("accept", "application/json, text/event-stream")]
        try:
            async with (
                open_http_pool(ssl_context=None, timeout=self.timeout, max_connections=2) as pool,
                AuthorizedRequests(pool, oauth).request("GET", self.url, headers=headers),
            ):
                pass
        except AuthorizationError as exc:
            raise CliError(EXIT_CONNECTION, f"cannot log in to {self.label}: {exc}") from None
        except (McpError, OSError) as exc:
            raise CliError(EXIT_CONNECTION, f"cannot connect to {self.label}: {exc}") from None

    def refusal(self, exc: BaseException) -> CliError | None:
        """The one line for ``exc`` when it is the server asking for a login."""
        if self._no_login.lacking:
            scopes = " ".join(self._no_login.lacking)
            return CliError(
                EXIT_CONNECTION,
                f"{self.label} asks for scope {scopes}, which the kept login lacks:"
                " run again with --login",
            )
        if self._no_login.asked:
            return CliError(
                EXIT_CONNECTION,
                f"{self.label} refused the kept login and it could not be refreshed:"
                " run again with --login",
            )
        # A refused POST fails its requests with an error whose message starts with the HTTP
        # status, whether its body was a JSON-RPC error or not (see http_error).
        refused = isinstance(exc, McpError) and exc.message.startswith("HTTP 401 ")
        if refused and not self.logged_in:
            return CliError(
                EXIT_CONNECTION, f"{self.label} asks for a login (HTTP 401): add --login"
            )
        return None


def _open_browser(url: str) -> None:
    """Send the user to ``url``: printed, for a terminal with no browser, and opened."""
    sys.stderr.write(f"mcptrio: log in in your browser; if none opens, visit {url}\n")
    sys.stderr.flush()
    with suppress(webbrowser.Error):
        webbrowser.open(url)


class _BrowserLogin:
    """The authorization code grant through the user's browser, saying where it logged in."""

    def __init__(self, label: str) -> None:
        from ..auth.client import AuthorizationCode, LoopbackBrowser

        self.label = label
        self._grant = AuthorizationCode(
            LoopbackBrowser(open_url=_open_browser, timeout=LOGIN_TIMEOUT)
        )
        self.grant_types: tuple[str, ...] = self._grant.grant_types
        self.redirect = self._grant.redirect

    async def obtain(self, context: GrantContext) -> Tokens:
        tokens = await self._grant.obtain(context)
        sys.stderr.write(
            f"mcptrio: logged in to {self.label} at {context.server.issuer}"
            f" (kept in {token_cache()})\n"
        )
        return tokens


class _NoLogin:
    """A grant that logs no one in: a command without ``--login`` only refreshes its ``kept``
    token, and asks for ``--login`` when that fails or when the server asks for scopes it was
    not granted (``asked`` says it did, ``lacking`` names those scopes)."""

    grant_types: tuple[str, ...] = ("authorization_code", "refresh_token")

    def __init__(self) -> None:
        self.kept: Tokens | None = None
        self.asked = False
        self.lacking: list[str] = []

    async def obtain(self, context: GrantContext) -> Tokens:
        from ..auth.client import AuthorizationError

        self.asked = True
        granted = set(self.kept.scopes) if self.kept is not None else set()
        self.lacking = [s for s in context.scopes if s not in granted and s != "offline_access"]
        raise AuthorizationError("a login is needed: run again with --login")


@dataclass
class _WithoutTokensOf:
    """``store`` without the tokens it keeps for ``resource`` (until new ones are set): a
    fresh login replaces them, and a failed one leaves them as they were."""

    store: TokenStore
    resource: str
    #: Whether new tokens for ``resource`` were set.
    replaced: bool = False

    async def get_tokens(self, resource: str) -> Tokens | None:
        if resource == self.resource:
            await trio.lowlevel.checkpoint()
            return None
        return await self.store.get_tokens(resource)

    async def set_tokens(self, resource: str, tokens: Tokens | None) -> None:
        self.replaced = self.replaced or (resource == self.resource and tokens is not None)
        await self.store.set_tokens(resource, tokens)

    async def get_registration(self, issuer: str) -> ClientRegistration | None:
        return await self.store.get_registration(issuer)

    async def set_registration(self, issuer: str, registration: ClientRegistration) -> None:
        await self.store.set_registration(issuer, registration)


def logout(args: argparse.Namespace) -> int:
    """``mcptrio logout URL... | --all``: forget the logins kept for these servers."""
    path = token_cache()
    if args.all:
        if args.urls:
            raise usage_error("give URLs or --all, not both")
        path.unlink(missing_ok=True)
        sys.stderr.write(f"mcptrio: forgot every login ({path})\n")
        return EXIT_OK
    if not args.urls:
        raise usage_error("give the URL of a server to forget its login (or --all)")
    for url in args.urls:
        if not url.startswith(("http://", "https://")):
            raise usage_error(f"{url!r}: logins are kept for http(s):// URLs")
    store = _file_store()
    for url in args.urls:
        forgot = trio.run(_forget, store, url)
        said = "forgot the login to" if forgot else "no login was kept for"
        sys.stderr.write(f"mcptrio: {said} {url}\n")
    return EXIT_OK


async def _forget(store: FileTokenStore, url: str) -> bool:
    from ..auth.client.discovery import canonical_resource

    resource = canonical_resource(url)
    if await store.get_tokens(resource) is None:
        return False
    await store.set_tokens(resource, None)
    return True
