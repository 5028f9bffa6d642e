"""What every MCP HTTP endpoint checks before it looks at a request: Origin, Host, limits, auth.

DNS rebinding lets a web page reach a server on the visitor's loopback interface under a name
the attacker controls. Two checks stop it: the browser's ``Origin`` header must name an allowed
origin (an absent ``Origin`` is a non-browser client and is let through), and ``Host`` must name
this server. By default both allow only loopback names (``localhost``, ``127.0.0.1``,
``[::1]``, any port), which fits a server bound to loopback; a server exposed under another name
lists its names in ``allowed_hosts`` / ``allowed_origins`` (or calls
:meth:`HttpSecurity.allow_bound_address`).
Either check failing is answered 403 Forbidden, for every revision.

Entries of ``allowed_origins`` are origins (``"https://app.example.com"``) and entries of
``allowed_hosts`` are ``host[:port]``; a ``:*`` suffix matches any port (or none), and ``"*"``
alone allows everything (turning the check off). Matching ignores case.

An :class:`Authenticator`, when configured, is asked about every request; no principal means 401
with its ``WWW-Authenticate`` challenge. Sessions are bound to the principal that created them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from ...base import DEFAULT_MAX_FRAME_SIZE
from ..engine.exchange import HttpRequest

__all__ = [
    "DEFAULT_ALLOWED_HOSTS",
    "DEFAULT_ALLOWED_ORIGINS",
    "Authenticator",
    "HttpSecurity",
    "Principal",
]

_LOOPBACK = ("localhost", "127.0.0.1", "[::1]")
DEFAULT_ALLOWED_HOSTS: tuple[str, ...] = tuple(f"{name}:*" for name in _LOOPBACK)
DEFAULT_ALLOWED_ORIGINS: tuple[str, ...] = tuple(
    f"{scheme}://{name}:*" for scheme in ("http", "https") for name in _LOOPBACK
)


@runtime_checkable
class Principal(Protocol):
    """Who made a request, as an :class:`Authenticator` established it."""

    @property
    def subject(self) -> str:
        """A stable identifier of the principal (a user id, a client id)."""
        ...


class Authenticator(Protocol):
    """Checks the credentials of HTTP requests (e.g. an OAuth bearer token)."""

    async def authenticate(self, request: HttpRequest) -> Principal | None:
        """The principal behind ``request``, or ``None`` when it has no valid credentials."""
        ...

    def challenge(self, request: HttpRequest) -> bytes:
        """The ``WWW-Authenticate`` value for a 401 answer to ``request``."""
        ...


def _split_port(value: str) -> str:
    """``value`` without a trailing ``:port`` (IPv6 literals keep their brackets)."""
    base, sep, port = value.rpartition(":")
    if sep and port.isascii() and port.isdigit() and not base.endswith(":"):
        return base
    return value


class _Matcher:
    __slots__ = ("any", "exact", "wildcard")

    def __init__(self, entries: Iterable[str]) -> None:
        self.exact: set[str] = set()
        self.wildcard: set[str] = set()
        self.any = False
        for entry in entries:
            entry = entry.strip().lower()
            if entry == "*":
                self.any = True
            elif entry.endswith(":*"):
                self.wildcard.add(entry[:-2])
            else:
                self.exact.add(entry)

    def __call__(self, value: bytes) -> bool:
        if self.any:
            return True
        try:
            text = value.decode("ascii").strip().lower()
        except UnicodeDecodeError:
            return False
        return text in self.exact or _split_port(text) in self.wildcard


class HttpSecurity:
    """The checks and limits of an MCP HTTP endpoint. See the module docstring.

    - ``max_body_size``: a POST body past this is answered 413.
    - ``max_sessions``: an ``initialize`` (or legacy SSE connection) past this many live sessions
      is answered 503 with ``Retry-After: retry_after``.
    - ``session_idle_timeout``: a session with no request and no open stream for this long is
      closed (its id then gets 404).
    """

    def __init__(
        self,
        *,
        allowed_origins: Iterable[str] | None = None,
        allowed_hosts: Iterable[str] | None = None,
        max_body_size: int = DEFAULT_MAX_FRAME_SIZE,
        max_sessions: int = 10_000,
        session_idle_timeout: float = 30 * 60.0,
        retry_after: int = 5,
        authenticator: Authenticator | None = None,
    ) -> None:
        origins = DEFAULT_ALLOWED_ORIGINS if allowed_origins is None else allowed_origins
        hosts = DEFAULT_ALLOWED_HOSTS if allowed_hosts is None else allowed_hosts
        self._origins = list(origins)
        self._hosts = list(hosts)
        self._origin_ok = _Matcher(self._origins)
        self._host_ok = _Matcher(self._hosts)
        self.max_body_size = max_body_size
        self.max_sessions = max_sessions
        self.session_idle_timeout = session_idle_timeout
        self.retry_after = retry_after
        self.authenticator = authenticator

    @property
    def allowed_origins(self) -> tuple[str, ...]:
        return tuple(self._origins)

    @property
    def allowed_hosts(self) -> tuple[str, ...]:
        return tuple(self._hosts)

    def allow_bound_address(self, host: str, port: int) -> None:
        """Also allow the address the server is bound to, as ``Host`` and as ``Origin``.

        A front end that binds a non-loopback address calls this so that clients naming the
        server by that address are let in. Binding ``0.0.0.0`` or ``::`` adds nothing: those are
        not names a client uses.
        """
        if host in ("0.0.0.0", "::", ""):
            return
        name = f"[{host}]" if ":" in host and not host.startswith("[") else host
        self._hosts.append(f"{name}:{port}")
        self._origins += [f"http://{name}:{port}", f"https://{name}:{port}"]
        self._origin_ok = _Matcher(self._origins)
        self._host_ok = _Matcher(self._hosts)

    def origin_allowed(self, origin: bytes | None) -> bool:
        """Whether a request with this ``Origin`` (``None``: absent) may proceed."""
        return origin is None or self._origin_ok(origin)

    def host_allowed(self, host: bytes | None) -> bool:
        """Whether a request with this ``Host`` (``None``: absent) may proceed."""
        return host is None or self._host_ok(host)
