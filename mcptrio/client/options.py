"""What a client is configured with, declared once: per call, and per connection.

**Per call.** Every request method of :class:`~mcptrio.Client` (and of
:class:`~mcptrio.ClientGroup`) takes the keywords of :class:`CallOptions`::

    await client.call_tool("add", {"a": 1}, timeout=5, on_progress=show)

**Per connection.** :func:`~mcptrio.open_client` (and :func:`~mcptrio.open_client_group`,
:meth:`~mcptrio.ClientGroup.connect`) take the keywords of :class:`ClientOptions`, one per
thing they configure, each a frozen record:

- ``identity``: :class:`ClientIdentity`, who the client says it is;
- ``revisions``: :class:`Revisions`, which protocol revisions it speaks;
- ``timeouts``: :class:`Timeouts`, how long the handshake and each call may take;
- ``handlers``: :class:`~mcptrio.client.server_requests.Handlers`, how it answers the server's
  requests (sampling, elicitation, roots), which also decides the capabilities it declares;
- ``notifications``: :class:`~mcptrio.client.notifications.NotificationCallbacks`, what it calls
  for the server's notifications;
- ``cache``: :class:`~mcptrio.client.cache.CachePolicy`, how many results it keeps.

How to reach the server (the command and its environment, the URL and its headers...) is not
among them: it belongs to the target (see :mod:`~mcptrio.client.targets`).

Both keyword sets are ``TypedDict`` classes read with ``**options: Unpack[...]``, so a type
checker checks every keyword and its type, and the methods still check at run time that no
keyword is misspelt (:func:`check_options`): a misspelt ``timout=`` raises ``TypeError``
instead of being ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, TypedDict

from ..protocol.revisions import (
    HANDSHAKE_SUPPORTED,
    SUPPORTED,
    revision_of,
    stateless_versions,
)
from ..protocol.types import ClientCapabilities, Implementation
from ..runtime.outgoing import ProgressCallback
from .cache import CacheMode, CachePolicy
from .notifications import NotificationCallbacks
from .server_requests import Handlers

__all__ = [
    "DEFAULT_CLIENT_INFO",
    "HANDSHAKE_ERA",
    "CallOptions",
    "ClientIdentity",
    "ClientOptions",
    "Revisions",
    "Timeouts",
    "check_options",
]

#: The ``clientInfo`` a client sends unless its :class:`ClientIdentity` names another.
DEFAULT_CLIENT_INFO = Implementation(name="mcptrio-client", version="0.1.0")


class CallOptions(TypedDict, total=False):
    """The keywords every request method of a client takes.

    ``timeout``
        Seconds to wait for the answer, restarted by each progress notification of the call;
        past it the server is sent ``notifications/cancelled`` and
        :class:`~mcptrio.protocol.errors.RequestTimeout` is raised. ``None`` or absent: the
        connection's ``Timeouts.request``.
    ``max_total_timeout``
        A hard limit, in seconds, that progress does not push back (``None``: none).
    ``on_progress``
        ``(progress, total, message)``, plain or async, called with each progress notification
        of the call; giving it asks the server for them (a ``progressToken``).
    ``cache``
        For a request whose result may be cached (lists, ``resources/read``,
        ``server/discover``; see :mod:`~mcptrio.client.cache`): ``"use"`` (the default) answers
        from a fresh cached result without asking the server, ``"refresh"`` asks and stores the
        answer, ``"bypass"`` asks and stores nothing. Other requests ignore it.

    Leaving the caller's cancel scope sends ``notifications/cancelled`` as a timeout does.
    """

    timeout: float | None
    max_total_timeout: float | None
    on_progress: ProgressCallback | None
    cache: CacheMode


@dataclass(frozen=True, kw_only=True)
class ClientIdentity:
    """Who the client says it is in ``initialize``.

    ``info`` is its ``clientInfo``. ``capabilities`` are merged over the capabilities the client
    derives from its :class:`~mcptrio.client.server_requests.Handlers` (its members win): for
    experimental capabilities, or to declare less detail.
    """

    info: Implementation = DEFAULT_CLIENT_INFO
    capabilities: ClientCapabilities | None = None


@dataclass(frozen=True, kw_only=True)
class Revisions:
    """Which protocol revisions the client speaks.

    The client offers ``protocol_version`` (``None``: the first, newest, of ``supported``) and
    accepts an answer in any of ``supported``; a server answering another raises
    :class:`~mcptrio.protocol.errors.UnsupportedProtocolVersion`. A client that offers an older
    revision gets, and may send, only what that revision has.

    By default ``supported`` is every revision, and the client probes the stateless era
    (2026-07-28) first, on every transport, as the official SDKs do: it asks
    ``server/discover`` and speaks the stateless era to a server that answers, and falls back to
    ``initialize`` when the server answers anything else (or nothing within
    ``Timeouts.probe``). ``protocol_version`` set to a stateless-era revision pins it: no
    fallback. :data:`HANDSHAKE_ERA` (only the handshake revisions) never probes. See
    ``docs/explanation/client-design.md`` for what changes with the era.
    """

    protocol_version: str | None = None
    supported: tuple[str, ...] = SUPPORTED

    def __post_init__(self) -> None:
        if not self.supported:
            raise ValueError("Revisions.supported names no revision")
        if self.protocol_version is not None and self.protocol_version not in self.supported:
            raise ValueError(
                f"protocol_version {self.protocol_version!r} is not one of supported"
                f" {self.supported}"
            )

    @property
    def stateless(self) -> tuple[str, ...]:
        """The stateless-era revisions to try first, preferred first (empty: none)."""
        pinned = self.protocol_version
        if pinned is not None:
            return (pinned,) if revision_of(pinned).era == "stateless" else ()
        return stateless_versions(self.supported)

    @property
    def pinned_stateless(self) -> bool:
        """Whether ``protocol_version`` pins a stateless-era revision (no fallback)."""
        return self.protocol_version is not None and bool(self.stateless)

    @property
    def offered(self) -> str:
        """The revision ``initialize`` offers."""
        return self.supported[0] if self.protocol_version is None else self.protocol_version

    @property
    def in_preference_order(self) -> tuple[str, ...]:
        """``supported``, the offered revision first."""
        offered = self.offered
        return (offered, *(r for r in self.supported if r != offered))


#: Only the revisions negotiated by ``initialize`` (2024-11-05 to 2025-11-25): no probe of the
#: stateless era. For a server whose tools rely on the handshake era (a session's log level,
#: ``resources/subscribe``, requests to the client outside an input-required result).
HANDSHAKE_ERA: Final = Revisions(supported=HANDSHAKE_SUPPORTED)


@dataclass(frozen=True, kw_only=True)
class Timeouts:
    """How long the client waits, in seconds.

    ``initialize`` bounds the handshake (past it, :func:`~mcptrio.open_client` raises
    :class:`~mcptrio.protocol.errors.RequestTimeout`); ``initialize`` is never cancelled with
    ``notifications/cancelled``, as the spec says. ``request`` is the ``timeout`` of every call
    that passes none (``None``: no limit). ``probe`` bounds the stateless era's probe.
    ``listen`` bounds the wait for a listen stream's acknowledgement (stateless era).
    """

    initialize: float = 30.0
    request: float | None = None
    #: How long the stateless era's probe (``server/discover``) waits before the client falls
    #: back to ``initialize``.
    probe: float = 5.0
    #: How long opening a ``subscriptions/listen`` stream waits for its acknowledgement before
    #: :class:`~mcptrio.protocol.errors.RequestTimeout`.
    listen: float = 10.0


class ClientOptions(TypedDict, total=False):
    """The keywords of :func:`~mcptrio.open_client`, one per thing they configure.

    Each is a frozen record; one that is absent takes that record's defaults. See the module
    documentation for what each configures.
    """

    identity: ClientIdentity
    revisions: Revisions
    timeouts: Timeouts
    handlers: Handlers
    notifications: NotificationCallbacks
    cache: CachePolicy


def check_options(where: str, options: Mapping[str, Any], accepted: type[Any]) -> None:
    """Raise ``TypeError`` if ``options`` holds a keyword that the ``TypedDict`` ``accepted``
    does not declare (``**options`` would otherwise take a misspelt keyword silently)."""
    known: frozenset[str] = accepted.__optional_keys__ | accepted.__required_keys__
    unknown = options.keys() - known
    if unknown:
        raise TypeError(
            f"{where} got unexpected keyword arguments {sorted(unknown)}"
            f" (it takes {', '.join(sorted(known))})"
        )
