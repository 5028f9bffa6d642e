"""How a server is served over HTTP, as a deployment sets it: :class:`ServingOptions`.

One set of options for every entry point that serves a whole program (``mcptrio run`` and
``mcptrio gateway``, each worker of ``--workers``, and ``Server.run(serving=...)``, which takes
them as given: :meth:`ServingOptions.gather` is what reads the sources below). The command
line reads them from, in this order of precedence:

1. the command line (``--allow-host``, ``--path``, ``--auth jwt`` ...);
2. environment variables (``MCPTRIO_ALLOW_HOSTS``, ``MCPTRIO_AUTH_ISSUER`` ...), so that a
   container or a unit file sets them once;
3. a TOML file (``--config FILE`` or ``MCPTRIO_CONFIG``), its ``[serve]`` table;
4. the defaults: loopback hosts and origins only, ``/mcp``, plain HTTP, no authorization.

:data:`SETTINGS` is the one table of them (name in the file, variable, flag, meaning), which
``docs/reference/serving-options.md`` shows. Lists (hosts, origins, scopes) are comma-separated
in a variable, repeated flags on the command line, arrays in the file; the hosts and origins
given are *added* to the loopback defaults, and a bound non-loopback address is allowed as
always (see :mod:`mcptrio.transports.http.endpoints.security`).

Authorization (``auth = "jwt"`` or ``"introspection"``) protects the endpoint with
:class:`~mcptrio.auth.server.BearerAuth`: ``resource`` is the endpoint's public URL (tokens are
issued for it), ``issuer`` the authorization server; a JWT's keys come from ``jwks_url``;
introspection asks ``introspection_url`` as ``client_id`` / ``client_secret`` (set the secret by
variable or file, never on a command line other users can read). ``auth = "dev"`` runs the
development authorization server beside the endpoint, for local use
(:mod:`.development_authorization`): it becomes ``"jwt"`` against that server when serving
starts (:meth:`ServingOptions.with_issuer`).
"""

from __future__ import annotations

import ipaddress
import os
import ssl
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Final, Literal

from ..transports.http.endpoints.forwarded import TrustedProxies
from ..transports.http.endpoints.security import (
    DEFAULT_ALLOWED_HOSTS,
    DEFAULT_ALLOWED_ORIGINS,
    HttpSecurity,
)

__all__ = ["SETTINGS", "ServingOptions", "ServingOptionsError", "Setting", "is_loopback"]


class ServingOptionsError(ValueError):
    """A serving option that cannot be used: one line naming where it was set."""


@dataclass(frozen=True, slots=True)
class Setting:
    """One serving option: its name in the ``[serve]`` table, its variable and flag (``""``:
    none, for a secret)."""

    name: str
    variable: str
    flag: str
    meaning: str
    is_list: bool = False


SETTINGS: Final = (
    Setting(
        "allow_hosts",
        "MCPTRIO_ALLOW_HOSTS",
        "--allow-host",
        "Host header values let in, beside loopback (`name`, `name:port`, `name:*`, `*`)",
        is_list=True,
    ),
    Setting(
        "allow_origins",
        "MCPTRIO_ALLOW_ORIGINS",
        "--allow-origin",
        "Origin header values let in, beside loopback (`https://app.example.com`, `*`)",
        is_list=True,
    ),
    Setting(
        "trusted_proxies",
        "MCPTRIO_TRUSTED_PROXIES",
        "--trusted-proxy",
        "reverse proxies (addresses, CIDR networks) whose `X-Forwarded-For` names the client",
        is_list=True,
    ),
    Setting("path", "MCPTRIO_PATH", "--path", "the MCP endpoint's path (default `/mcp`)"),
    Setting(
        "certfile",
        "MCPTRIO_CERTFILE",
        "--certfile",
        "serve HTTPS with this certificate chain (PEM)",
    ),
    Setting("keyfile", "MCPTRIO_KEYFILE", "--keyfile", "the certificate's private key (PEM)"),
    Setting(
        "auth",
        "MCPTRIO_AUTH",
        "--auth",
        "`jwt` or `introspection`: require OAuth bearer tokens; `dev`: also run a development"
        " authorization server that approves anyone (loopback only)",
    ),
    Setting(
        "resource",
        "MCPTRIO_AUTH_RESOURCE",
        "--resource",
        "the endpoint's public URL, which tokens must be issued for",
    ),
    Setting("issuer", "MCPTRIO_AUTH_ISSUER", "--issuer", "the authorization server (issuer URL)"),
    Setting(
        "audience",
        "MCPTRIO_AUTH_AUDIENCE",
        "--audience",
        "the audience tokens must name (default: `resource`)",
    ),
    Setting(
        "jwks_url",
        "MCPTRIO_AUTH_JWKS_URL",
        "--jwks-url",
        "`jwt`: where the issuer's signing keys are",
    ),
    Setting(
        "introspection_url",
        "MCPTRIO_AUTH_INTROSPECTION_URL",
        "--introspection-url",
        "`introspection`: the RFC 7662 endpoint",
    ),
    Setting(
        "client_id",
        "MCPTRIO_AUTH_CLIENT_ID",
        "--client-id",
        "`introspection`: this server's client id there",
    ),
    Setting(
        "client_secret",
        "MCPTRIO_AUTH_CLIENT_SECRET",
        "",
        "`introspection`: its secret (variable or file only)",
    ),
    Setting("scopes", "MCPTRIO_AUTH_SCOPES", "--scope", "scopes every request needs", is_list=True),
    Setting(
        "orphaned_sessions",
        "MCPTRIO_ORPHANED_SESSIONS",
        "--orphaned-sessions",
        "with `--redis`, a session whose worker died or restarted: `adopt` (default: another"
        " worker takes it up, same id and state) or `strict` (404: its client must initialize"
        " again)",
    ),
)
_BY_NAME: Final = {setting.name: setting for setting in SETTINGS}


@dataclass(frozen=True, kw_only=True)
class ServingOptions:
    """How a server is served over HTTP (module docstring); every field has its default."""

    allow_hosts: tuple[str, ...] = ()
    allow_origins: tuple[str, ...] = ()
    trusted_proxies: tuple[str, ...] = ()
    path: str = "/mcp"
    certfile: str | None = None
    keyfile: str | None = None
    auth: Literal["jwt", "introspection", "dev"] | None = None
    resource: str | None = None
    issuer: str | None = None
    audience: str | None = None
    jwks_url: str | None = None
    introspection_url: str | None = None
    client_id: str | None = None
    client_secret: str | None = None
    scopes: tuple[str, ...] = ()
    orphaned_sessions: Literal["adopt", "strict"] = "adopt"

    def __post_init__(self) -> None:
        if not self.path.startswith("/"):
            raise ServingOptionsError(f"path {self.path!r}: give a path starting with /")
        if (self.certfile is None) != (self.keyfile is None):
            raise ServingOptionsError("certfile and keyfile go together: give both, or neither")
        if self.auth is not None:
            self._check_auth()
        if self.orphaned_sessions not in ("adopt", "strict"):
            raise ServingOptionsError(
                f"orphaned_sessions {self.orphaned_sessions!r}: use 'adopt' or 'strict'"
            )
        try:
            TrustedProxies(self.trusted_proxies)
        except ValueError as error:
            raise ServingOptionsError(str(error)) from None

    def _check_auth(self) -> None:
        if self.auth not in ("jwt", "introspection", "dev"):
            raise ServingOptionsError(f"auth {self.auth!r}: use 'jwt', 'introspection' or 'dev'")
        if self.auth == "dev":
            # Its own server issues the tokens: another issuer given would be a mistake.
            theirs = ("issuer", "jwks_url", "introspection_url", "client_id", "client_secret")
            given = [_where(_BY_NAME[name]) for name in theirs if getattr(self, name) is not None]
            if given:
                raise ServingOptionsError(
                    f"--auth dev runs its own authorization server: drop {', '.join(given)}"
                )
            return
        needed = ["resource", "issuer"]
        needed += (
            ["jwks_url"]
            if self.auth == "jwt"
            else ["introspection_url", "client_id", "client_secret"]
        )
        missing = [_where(_BY_NAME[name]) for name in needed if getattr(self, name) is None]
        if missing:
            raise ServingOptionsError(f"--auth {self.auth} needs {', '.join(missing)}")

    @classmethod
    def gather(
        cls,
        given: Mapping[str, Any],
        environ: Mapping[str, str] | None = None,
        config_file: str | None = None,
    ) -> ServingOptions:
        """The options from the command line's ``given`` (``None`` values: not given), then
        ``environ`` (default: ``os.environ``), then the ``[serve]`` table of ``config_file``
        (default: ``MCPTRIO_CONFIG``, if set)."""
        environ = os.environ if environ is None else environ
        config_file = config_file or environ.get("MCPTRIO_CONFIG") or None
        table = _serve_table(config_file) if config_file else {}
        values: dict[str, Any] = {}
        for field in fields(cls):
            setting = _BY_NAME[field.name]
            value = given.get(field.name)
            if value is None or value == [] or value == ():
                value = environ.get(setting.variable) or None
                if value is not None and setting.is_list:
                    value = [part.strip() for part in value.split(",") if part.strip()]
            if value is None:
                value = table.get(field.name)
            if value is not None:
                values[field.name] = _typed(setting, value, config_file)
        return cls(**values)

    def check_served(self, transport: str, host: str, port: int) -> None:
        """Refuse options that cannot protect what ``transport`` serves on ``host:port``."""
        if self.auth is not None and transport == "websocket":
            raise ServingOptionsError(
                f"--auth {self.auth} protects HTTP: serve --transport http (it takes WebSocket"
                " connections on the same endpoint, authorized), not --transport websocket"
            )
        if self.auth != "dev":
            return
        if not is_loopback(host):
            raise ServingOptionsError(
                f"--auth dev approves anyone, so it serves loopback only, not --host {host}:"
                " use --auth jwt with a real authorization server"
            )
        if port == 0 and self.resource is None:
            raise ServingOptionsError(
                "--auth dev needs a fixed --port (or --resource): tokens name the endpoint's URL"
            )

    def with_issuer(self, issuer: str, resource: str) -> ServingOptions:
        """These options with ``auth = "jwt"`` against ``issuer`` (its keys at ``/jwks``), for
        tokens issued for ``resource``: what ``auth = "dev"`` becomes once its server runs."""
        return replace(
            self, auth="jwt", issuer=issuer, jwks_url=f"{issuer}/jwks", resource=resource
        )

    # ------------------------------------------------------------------ what they make

    def security(self) -> HttpSecurity:
        """The endpoint's checks: the allowed hosts and origins, and the authenticator."""
        return HttpSecurity(
            allowed_hosts=[*DEFAULT_ALLOWED_HOSTS, *self.allow_hosts],
            allowed_origins=[*DEFAULT_ALLOWED_ORIGINS, *self.allow_origins],
            authenticator=self._authenticator(),
            trusted_proxies=self.trusted_proxies,
        )

    @property
    def adopt_sessions(self) -> bool:
        """Whether a gone worker's sessions are adopted (``McpHttpApp(adopt_sessions=...)``)."""
        return self.orphaned_sessions == "adopt"

    def ssl_context(self) -> ssl.SSLContext | None:
        """The TLS context to serve HTTPS with, or ``None`` for plain HTTP."""
        if self.certfile is None or self.keyfile is None:
            return None
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        try:
            context.load_cert_chain(self.certfile, self.keyfile)
        except (OSError, ssl.SSLError) as error:
            reason = getattr(error, "strerror", None) or str(error)
            raise ServingOptionsError(
                f"--certfile {self.certfile} / --keyfile {self.keyfile}: {reason}"
            ) from None
        return context

    def _authenticator(self) -> Any:
        if self.auth is None:
            return None
        if self.auth == "dev":
            raise ServingOptionsError(
                "auth 'dev' is resolved when serving starts: serve with run_server or"
                " Server.run, or give the options of its running server (with_issuer)"
            )
        # Imported here: a server without authorization does not load the auth stack.
        from ..auth.server import BearerAuth, IntrospectionVerifier, JwtVerifier

        assert self.resource is not None and self.issuer is not None
        audience = self.audience or self.resource
        verifier: Any
        if self.auth == "jwt":
            verifier = JwtVerifier(self.issuer, self.jwks_url, audience=audience)
        else:
            assert self.introspection_url and self.client_id and self.client_secret
            verifier = IntrospectionVerifier(
                self.introspection_url,
                client_id=self.client_id,
                client_secret=self.client_secret,
                issuer=self.issuer,
                audience=audience,
            )
        return BearerAuth(
            verifier,
            authorization_servers=[self.issuer],
            resource=self.resource,
            path=self.path,
            scopes=self.scopes,
        )


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address to bind) is this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _where(setting: Setting) -> str:
    return setting.flag or setting.variable


def _serve_table(config_file: str) -> dict[str, Any]:
    try:
        document = tomllib.loads(Path(config_file).read_text(encoding="utf-8"))
    except OSError as error:
        raise ServingOptionsError(f"--config {config_file}: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise ServingOptionsError(f"--config {config_file}: {error}") from None
    table = document.get("serve", {})
    if not isinstance(table, dict):
        raise ServingOptionsError(f"--config {config_file}: [serve] must be a table")
    unknown = sorted(set(table) - set(_BY_NAME))
    if unknown:
        known = ", ".join(_BY_NAME)
        raise ServingOptionsError(
            f"--config {config_file}: unknown [serve] setting {unknown[0]!r} (known: {known})"
        )
    return table


def _typed(setting: Setting, value: Any, config_file: str | None) -> Any:
    """``value`` as the option holds it: a tuple of strings for a list, else a string."""
    where = f"[serve] {setting.name} in {config_file}" if config_file else setting.variable
    if setting.is_list:
        items: Sequence[Any] = [value] if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)) or not all(isinstance(i, str) for i in items):
            raise ServingOptionsError(f"{where}: give a list of strings")
        return tuple(items)
    if not isinstance(value, str):
        raise ServingOptionsError(f"{where}: give a string")
    return value
