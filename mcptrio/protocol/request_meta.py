"""The request ``_meta`` of the stateless era (2026-07-28): what replaced the handshake.

Every stateless-era request carries, in ``params._meta``, the revision it speaks, the client's
capabilities and (should) the client's identity, and may carry a log level (CHECKLIST 6.2,
10.9). :func:`read_request_meta` tells a stateless-era request from a handshake-era one (the
revision key is there or not) and checks it:

- the revision key present but not a string, or ``clientCapabilities`` missing or malformed, or
  a bad ``clientInfo`` / ``logLevel``: -32602 (the request is malformed);
- a revision that is not a stateless-era one this side speaks: -32022, with the versions it
  does speak in ``data``.

Results carry the server's identity under :data:`SERVER_INFO_KEY`, and every message of a
``subscriptions/listen`` stream the listen request's id under :data:`SUBSCRIPTION_ID_KEY`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, TypeGuard, TypeVar, get_args

import msgspec

from .base import Meta
from .errors import InvalidParams, UnsupportedProtocolVersion
from .revisions import Revision, revision_of, stateless_versions
from .types import ClientCapabilities, Implementation, LoggingLevel

__all__ = [
    "CLIENT_CAPABILITIES_KEY",
    "CLIENT_INFO_KEY",
    "LOG_LEVEL_KEY",
    "PROTOCOL_VERSION_KEY",
    "SERVER_INFO_KEY",
    "SUBSCRIPTION_ID_KEY",
    "RequestMeta",
    "read_request_meta",
    "request_meta_at",
    "request_meta_of",
]

PROTOCOL_VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY: Final = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY: Final = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY: Final = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_KEY: Final = "io.modelcontextprotocol/subscriptionId"

_LEVELS: Final = frozenset(get_args(LoggingLevel))
T = TypeVar("T")


class RequestMeta:
    """What one stateless-era request says about its client, read from its ``_meta``.

    The capabilities and the identity are typed when first asked for: most requests never ask
    (a handler that asks the client for input does), and typing them costs more than the rest
    of reading the request. One that does not fit raises
    :class:`~mcptrio.protocol.errors.InvalidParams` then.
    """

    __slots__ = ("_capabilities", "_info", "_wire", "log_level", "revision")

    def __init__(
        self,
        revision: Revision,
        client_capabilities: ClientCapabilities | Mapping[str, Any],
        client_info: Implementation | Mapping[str, Any] | None = None,
        log_level: LoggingLevel | None = None,
    ) -> None:
        self.revision = revision
        self._capabilities = client_capabilities
        self._info = client_info
        self.log_level = log_level
        # to_meta's members, for the log level they were made with (a client changes it).
        self._wire: tuple[LoggingLevel | None, Meta] | None = None

    def __repr__(self) -> str:
        return f"<RequestMeta {self.revision.version} log_level={self.log_level}>"

    @property
    def client_capabilities(self) -> ClientCapabilities:
        """The capabilities the client declared for this request."""
        caps = self._capabilities
        if not isinstance(caps, ClientCapabilities):
            caps = self._capabilities = _typed(caps, ClientCapabilities, CLIENT_CAPABILITIES_KEY)
        return caps

    @property
    def client_info(self) -> Implementation | None:
        """The client's identity, when the request carried it (self-reported)."""
        info = self._info
        if info is not None and not isinstance(info, Implementation):
            info = self._info = _typed(info, Implementation, CLIENT_INFO_KEY)
        return info

    def to_meta(self) -> Meta:
        """The ``_meta`` members a client puts on a request to say this."""
        return dict(self._members())

    def stamp(self, meta: dict[str, Any]) -> None:
        """Put :meth:`to_meta`'s members into a request's ``meta``, keeping what the request
        declares besides the client's own capabilities (the tasks extension, declared per
        request: SEP-2663)."""
        own = meta.get(CLIENT_CAPABILITIES_KEY)
        meta.update(self._members())
        if isinstance(own, dict):
            meta[CLIENT_CAPABILITIES_KEY] = _with_extensions(meta[CLIENT_CAPABILITIES_KEY], own)

    def _members(self) -> Meta:
        """:meth:`to_meta`'s members, made once for each log level: a client stamps every
        request with them, and only the log level can change (the revision, the capabilities
        and the identity are fixed when this is made). Shared between requests, so never
        changed: :meth:`to_meta` copies it, :meth:`stamp` copies from it."""
        wire = self._wire
        if wire is None or wire[0] != self.log_level:
            meta: Meta = {
                PROTOCOL_VERSION_KEY: self.revision.version,
                CLIENT_CAPABILITIES_KEY: msgspec.to_builtins(self.client_capabilities),
            }
            if self.client_info is not None:
                meta[CLIENT_INFO_KEY] = msgspec.to_builtins(self.client_info)
            if self.log_level is not None:
                meta[LOG_LEVEL_KEY] = self.log_level
            wire = self._wire = (self.log_level, meta)
        return wire[1]


def read_request_meta(
    meta: Mapping[str, Any] | None, supported: tuple[str, ...]
) -> RequestMeta | None:
    """The stateless-era ``_meta`` of a request, or ``None`` for a handshake-era request.

    ``supported`` are the versions this side speaks; raises the spec's errors (module docstring).
    """
    if not meta:
        return None
    version = meta.get(PROTOCOL_VERSION_KEY)
    if version is None:
        return None
    if not isinstance(version, str):
        raise InvalidParams(f"_meta[{PROTOCOL_VERSION_KEY!r}] must be a string")
    speaks = stateless_versions(supported)
    if not speaks:
        # A server of the handshake era only: the request is one it cannot read as standing
        # alone, and answers as a handshake-era server does (before initialize).
        return None
    if version not in speaks:
        raise UnsupportedProtocolVersion(
            f"Unsupported protocol version {version!r}",
            {"supported": list(speaks), "requested": version},
        )
    return request_meta_at(revision_of(version), meta)


def request_meta_at(revision: Revision, meta: Mapping[str, Any]) -> RequestMeta:
    """The :class:`RequestMeta` of a request whose ``_meta`` names ``revision`` (already found to
    be one this side speaks); raises -32602 for a member that is missing or malformed."""
    capabilities = meta.get(CLIENT_CAPABILITIES_KEY)
    if capabilities is None:
        raise InvalidParams(f"Missing required _meta[{CLIENT_CAPABILITIES_KEY!r}]")
    if not isinstance(capabilities, dict):
        raise InvalidParams(f"_meta[{CLIENT_CAPABILITIES_KEY!r}] must be an object")
    info = meta.get(CLIENT_INFO_KEY)
    if info is not None and not isinstance(info, dict):
        raise InvalidParams(f"_meta[{CLIENT_INFO_KEY!r}] must be an object")
    level = meta.get(LOG_LEVEL_KEY)
    if level is not None and not _is_level(level):
        raise InvalidParams(f"Invalid _meta[{LOG_LEVEL_KEY!r}]: {level!r}")
    return RequestMeta(revision, capabilities, info, level)


def _with_extensions(capabilities: dict[str, Any], own: dict[str, Any]) -> dict[str, Any]:
    """``capabilities`` (a request's ``_meta`` form) with the members ``own`` adds to them; the
    extensions of both are merged."""
    merged = {**capabilities, **own}
    theirs, mine = capabilities.get("extensions"), own.get("extensions")
    if isinstance(theirs, dict) and isinstance(mine, dict):
        merged["extensions"] = {**theirs, **mine}
    return merged


def _is_level(value: Any) -> TypeGuard[LoggingLevel]:
    # The type first: a list or an object cannot be looked up in a set.
    return isinstance(value, str) and value in _LEVELS


def _typed(value: Any, cls: type[T], key: str) -> T:
    try:
        return msgspec.convert(value, cls)
    except msgspec.ValidationError as exc:
        raise InvalidParams(f"Malformed _meta[{key!r}]: {exc}") from None


def request_meta_of(params: Any) -> Mapping[str, Any] | None:
    """The ``_meta`` of request params (a struct), if it has one."""
    meta = getattr(params, "meta", None)
    return meta if isinstance(meta, dict) else None
