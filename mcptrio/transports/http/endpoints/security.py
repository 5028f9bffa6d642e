"""What every MCP endpoint checks before it looks at a request: Origin, Host, limits, auth.

DNS rebinding lets a web page reach a server on the visitor's loopback interface under a name
the attacker controls. Two checks stop it, and :class:`OriginHostCheck` is the one place they
are made, for every MCP endpoint (Streamable HTTP, the legacy HTTP+SSE endpoints and WebSocket
upgrades on either HTTP front end, and the standalone WebSocket server):

- ``Origin``, when present, must name an allowed origin. Browsers send it on cross-origin
  requests and on every WebSocket upgrade; an absent ``Origin`` is a non-browser client or a
  same-origin request, which the ``Host`` check covers.
- ``Host``, when present, must name this server: after a rebinding the page's requests are
  same-origin and may carry no ``Origin``, but their ``Host`` is still the attacker's name.

By default both allow only loopback names (``localhost``, ``127.0.0.1``, ``[::1]``, any port;
origins ``http`` or ``https``), which fits a server bound to loopback; a server exposed under
another name lists its names in ``allowed_hosts`` / ``allowed_origins``. The servers also allow
the address they are bound to, unless it is a wildcard
(:meth:`OriginHostCheck.allow_bound_address`).
Either check failing is answered 403 Forbidden, for every revision (the spec's rule since
2025-11-25; earlier revisions name no status).

Entries of ``allowed_origins`` are origins (``"https://app.example.com"``) and entries of
``allowed_hosts`` are ``host[:port]``; a ``:*`` suffix matches any port (or none), and ``"*"``
alone allows everything (turning the check off). Matching ignores case and a trailing ``/`` on
an origin. A value that is not an origin (``null``, or one with a path, user information or a
port past 65535), or not a ``host[:port]``, matches no entry but ``"*"``.

An :class:`Authenticator`, when configured, is asked about every request (after the Origin and
Host check): no principal means 401 with its ``WWW-Authenticate`` challenge, and it may refuse a
request itself (401 for a bad token, 403 for missing scopes, 503). Sessions are bound to the
principal that created them: another principal's request naming the session gets 404, as an
unknown id does. The principal of the request being answered is :data:`current_principal` (a
handler reads it as ``ctx.principal``). :class:`mcptrio.auth.server.BearerAuth` is the OAuth
authenticator; an authenticator that also has ``metadata_response(request)`` and
``scope_refusal(request, principal, scopes)`` (as it does) serves its metadata document and
refuses calls of tools, prompts and resources that need scopes the principal lacks.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ....runtime.transport import DEFAULT_MAX_FRAME_SIZE
from ..engine.exchange import Headers, HttpRequest, header
from .forwarded import TrustedProxies

log = logging.getLogger("mcptrio.http")

__all__ = [
    "DEFAULT_ALLOWED_HOSTS",
    "DEFAULT_ALLOWED_ORIGINS",
    "Authenticator",
    "HttpSecurity",
    "OriginHostCheck",
    "Principal",
    "Refusal",
    "current_client_host",
    "current_principal",
    "may_use",
]

_LOOPBACK = ("localhost", "127.0.0.1", "[::1]")
DEFAULT_ALLOWED_HOSTS: tuple[str, ...] = tuple(f"{name}:*" for name in _LOOPBACK)
DEFAULT_ALLOWED_ORIGINS: tuple[str, ...] = tuple(
    f"{scheme}://{name}:*" for scheme in ("http", "https") for name in _LOOPBACK
)
_MAX_PORT = 65535


@runtime_checkable
class Principal(Protocol):
    """Who made a request, as an :class:`Authenticator` established it."""

    @property
    def subject(self) -> str:
        """A stable identifier of the principal (a user id, a client id)."""
        ...


#: The principal of the request being answered (``None``: no authenticator, or none yet). Set
#: by the HTTP endpoints around each request they hand to a session; a handler's
#: ``ctx.principal`` reads it.
current_principal: ContextVar[Principal | None] = ContextVar(
    "mcptrio_current_principal", default=None
)

#: The client's address (host) of the request being answered when it has no principal (no
#: authenticator): then it is all that tells requestors apart, e.g. whose a stateless-era task
#: is. Set by the HTTP endpoints like :data:`current_principal`; ``None`` elsewhere.
current_client_host: ContextVar[str | None] = ContextVar(
    "mcptrio_current_client_host", default=None
)


class Authenticator(Protocol):
    """Checks the credentials of HTTP requests (e.g. an OAuth bearer token)."""

    async def authenticate(self, request: HttpRequest) -> Principal | Refusal | None:
        """The principal behind ``request``; ``None`` when it has no credentials (answered 401
        with :meth:`challenge`), or a :class:`Refusal` to answer it with."""
        ...

    def challenge(self, request: HttpRequest) -> bytes:
        """The ``WWW-Authenticate`` value for a 401 answer to ``request``."""
        ...


def may_use(principal: Principal | None, owner: Principal | None) -> bool:
    """Whether ``principal`` may use a session that ``owner`` created: anyone may use one made
    without credentials, and only its principal one made with them."""
    return owner is None or (principal is not None and principal.subject == owner.subject)


@dataclass(frozen=True, slots=True)
class Refusal:
    """A request that may not proceed: the status, a message and headers to answer it with."""

    status: int
    message: str
    headers: Headers = ()


_HOST_REFUSED = Refusal(403, "Host not allowed")
_ORIGIN_REFUSED = Refusal(403, "Origin not allowed")


def _split_port(value: str) -> str:
    """``value`` without its trailing ``:port``, when that is a port (IPv6 literals keep their
    brackets). A suffix that is no port (``:99999``, ``:80/x``) stays, so the value matches no
    wildcard entry."""
    base, sep, port = value.rpartition(":")
    if sep and port.isascii() and port.isdigit() and len(port) <= 5 and not base.endswith(":"):
        return base if int(port) <= _MAX_PORT else value
    return value


# Verdicts a matcher keeps on values it has seen: a client sends the same Host (and Origin)
# with every request. Past this many distinct values the memory starts afresh, so a client
# sending a new value each time costs it no more than the match itself.
_VERDICTS_MAX = 64


class _Matcher:
    """Matches header values against entries: exact, ``:*`` for any port, ``*`` for all."""

    __slots__ = ("any", "exact", "origins", "verdicts", "wildcard")

    def __init__(self, entries: Iterable[str], *, origins: bool) -> None:
        self.exact: set[str] = set()
        self.wildcard: set[str] = set()
        self.any = False
        self.origins = origins
        #: Verdicts on values seen lately: every request has its Host (and Origin) judged, and
        #: a client sends the same ones each time, so a lookup stands in for decoding, lowering
        #: and splitting off the port. Each matcher keeps its own, so allow_bound_address
        #: (which makes new matchers) never sees stale verdicts.
        self.verdicts: dict[bytes, bool] = {}
        for entry in entries:
            entry = entry.strip().lower()
            if origins:
                entry = entry.removesuffix("/")
            if entry == "*":
                self.any = True
            elif entry.endswith(":*"):
                self.wildcard.add(entry[:-2])
            else:
                self.exact.add(entry)

    def __call__(self, value: bytes) -> bool:
        verdicts = self.verdicts
        verdict = verdicts.get(value)
        if verdict is None:
            verdict = self._match(value)
            if len(verdicts) >= _VERDICTS_MAX:
                verdicts.clear()
            verdicts[value] = verdict
        return verdict

    def _match(self, value: bytes) -> bool:
        if self.any:
            return True
        try:
            text = value.decode("ascii").strip().lower()
        except UnicodeDecodeError:
            return False
        if self.origins:
            text = text.removesuffix("/")
        return text in self.exact or _split_port(text) in self.wildcard


class OriginHostCheck:
    """The Origin and Host check against DNS rebinding; the rules are in the module docstring.

    ``None`` for either list means the loopback default. Every MCP endpoint asks
    :meth:`refusal` before anything else.
    """

    __slots__ = ("_host_ok", "_hosts", "_origin_ok", "_origins", "_reported")

    def __init__(
        self,
        allowed_origins: Iterable[str] | None = None,
        allowed_hosts: Iterable[str] | None = None,
    ) -> None:
        origins = DEFAULT_ALLOWED_ORIGINS if allowed_origins is None else allowed_origins
        hosts = DEFAULT_ALLOWED_HOSTS if allowed_hosts is None else allowed_hosts
        self._origins = list(origins)
        self._hosts = list(hosts)
        self._origin_ok = _Matcher(self._origins, origins=True)
        self._host_ok = _Matcher(self._hosts, origins=False)
        self._reported: set[bytes | None] = set()

    @property
    def allowed_origins(self) -> tuple[str, ...]:
        return tuple(self._origins)

    @property
    def allowed_hosts(self) -> tuple[str, ...]:
        return tuple(self._hosts)

    def allow_bound_address(self, host: str, port: int) -> None:
        """Also allow the address the server is bound to, as ``Host`` and as ``Origin``.

        A server that binds a non-loopback address calls this so that clients naming the server
        by that address are let in. Binding ``0.0.0.0`` or ``::`` adds nothing: those are not
        names a client uses.
        """
        if host in ("0.0.0.0", "::", ""):
            return
        name = f"[{host}]" if ":" in host and not host.startswith("[") else host
        self._hosts.append(f"{name}:{port}")
        self._origins += [f"http://{name}:{port}", f"https://{name}:{port}"]
        self._origin_ok = _Matcher(self._origins, origins=True)
        self._host_ok = _Matcher(self._hosts, origins=False)

    def origin_allowed(self, origin: bytes | None) -> bool:
        """Whether a request with this ``Origin`` (``None``: absent) may proceed."""
        return origin is None or self._origin_ok(origin)

    def host_allowed(self, host: bytes | None) -> bool:
        """Whether a request with this ``Host`` (``None``: absent) may proceed."""
        return host is None or self._host_ok(host)

    def refusal(self, headers: Headers) -> Refusal | None:
        """The 403 for a request with these headers, or ``None`` when it may proceed."""
        return self.refusal_of(header(headers, b"host"), header(headers, b"origin"))

    def refusal_of(self, host: bytes | None, origin: bytes | None) -> Refusal | None:
        """The 403 for a request with this ``Host`` and ``Origin`` (``None``: absent), or
        ``None`` when it may proceed."""
        if not self.host_allowed(host):
            self._report("Host", host, "--allow-host / MCPTRIO_ALLOW_HOSTS / allowed_hosts")
            return _HOST_REFUSED
        if not self.origin_allowed(origin):
            self._report(
                "Origin", origin, "--allow-origin / MCPTRIO_ALLOW_ORIGINS / allowed_origins"
            )
            return _ORIGIN_REFUSED
        return None

    def _report(self, name: str, value: bytes | None, setting: str) -> None:
        """Log a refusal once per value (a client sends the same one with every request): the
        operator who forgot a host name learns which, and the setting that lets it in."""
        reported = self._reported
        if value in reported:
            return
        if len(reported) >= _VERDICTS_MAX:
            reported.clear()
        reported.add(value)
        shown = (value or b"").decode("ascii", "replace")[:200]
        log.warning("refused a request with %s %r: not allowed (%s)", name, shown, setting)


class HttpSecurity:
    """The checks and limits of an MCP HTTP endpoint. See the module docstring.

    - ``allowed_origins``, ``allowed_hosts``: the :class:`OriginHostCheck` (``origin_host``).
    - ``max_body_size``: a POST body past this is answered 413.
    - ``max_sessions``: an ``initialize`` (or legacy SSE connection) past this many live sessions
      is answered 503 with ``Retry-After: retry_after``.
    - ``max_sessions_per_client``: the same past this many live Streamable HTTP sessions opened
      from one client address (``None``: no such limit; leave it so behind a reverse proxy).
    - ``session_idle_timeout``: a session with no request and no open stream for this long is
      closed (its id then gets 404).
    - ``trusted_proxies``: reverse proxies (addresses, CIDR networks) whose
      ``X-Forwarded-For`` names the client (:mod:`.forwarded`); what is counted per client
      address then counts each client behind them.
    """

    def __init__(
        self,
        *,
        allowed_origins: Iterable[str] | None = None,
        allowed_hosts: Iterable[str] | None = None,
        max_body_size: int = DEFAULT_MAX_FRAME_SIZE,
        max_sessions: int = 10_000,
        max_sessions_per_client: int | None = None,
        session_idle_timeout: float = 30 * 60.0,
        retry_after: int = 5,
        authenticator: Authenticator | None = None,
        trusted_proxies: Iterable[str] = (),
    ) -> None:
        self.origin_host = OriginHostCheck(allowed_origins, allowed_hosts)
        self.max_body_size = max_body_size
        self.max_sessions = max_sessions
        self.max_sessions_per_client = max_sessions_per_client
        self.session_idle_timeout = session_idle_timeout
        self.retry_after = retry_after
        self.authenticator = authenticator
        self.trusted_proxies = TrustedProxies(trusted_proxies)

    def client_host(self, request: HttpRequest) -> str | None:
        """The address of ``request``'s client, behind the trusted proxies if any."""
        client = request.client
        peer = client[0] if client is not None else None
        return self.trusted_proxies.client_of(peer, request.headers)

    def allow_bound_address(self, host: str, port: int) -> None:
        """Also allow the address the server is bound to (see :class:`OriginHostCheck`)."""
        self.origin_host.allow_bound_address(host, port)

    async def admit(self, request: HttpRequest) -> Refusal | Principal | None:
        """A :class:`Refusal` to answer ``request`` with, or else its principal (``None``
        without an authenticator).

        Every endpoint checks in this order: Host and Origin (403), then credentials (401 with
        the authenticator's challenge, or the authenticator's own refusal).
        """
        refusal = self.origin_host.refusal(request.headers)
        if refusal is not None:
            return refusal
        authenticator = self.authenticator
        if authenticator is None:
            return None
        principal = await authenticator.authenticate(request)
        if isinstance(principal, Refusal):
            return principal
        if principal is None:
            challenge = (b"www-authenticate", authenticator.challenge(request))
            return Refusal(401, "Unauthorized", (challenge,))
        return principal

    def scope_refusal(
        self, request: HttpRequest, principal: Principal | None, scopes: frozenset[str]
    ) -> Refusal | None:
        """The refusal (403 ``insufficient_scope``) for ``principal`` calling something that
        needs ``scopes``, or ``None`` when it may (or there is no authenticator to ask)."""
        check = getattr(self.authenticator, "scope_refusal", None)
        if not scopes or check is None:
            return None
        refusal: Refusal | None = check(request, principal, scopes)
        return refusal
