"""A handshake-era session's state as bytes, and back: what lets another worker adopt it.

:class:`SessionSnapshots` is what the HTTP endpoint is given to keep its sessions in the shared
store (``McpHttpApp(session_keeper=...)``, made by :mod:`.scale_out`): the endpoint cannot read a
server's per-session state itself (transports sit below the server layer), so it asks this.

A snapshot holds what the client negotiated and set, and nothing in flight: the revision, the
client's info and capabilities, the log level, and the URIs it subscribed to. Restored on a
fresh session, that is the whole of what the client can tell apart: its requests are gated and
answered as before, its log messages filtered at the same level, and its subscriptions feed its
GET stream again. Requests that were running on the dead worker are not in it: they are never
run again (see ``docs/explanation/session-adoption.md``).
"""

from __future__ import annotations

from typing import Final, Protocol

import msgspec

from ..protocol.types import ClientCapabilities, Implementation
from ..protocol.types.logging import LoggingLevel
from ..runtime.session import Session
from .session_state import ServerSessionState

__all__ = ["SNAPSHOT_METHODS", "SessionSnapshots"]

#: The methods after which a session's snapshot may have changed (besides ``initialize``).
SNAPSHOT_METHODS: Final = frozenset(
    {"logging/setLevel", "resources/subscribe", "resources/unsubscribe"}
)


class _Snapshot(msgspec.Struct, omit_defaults=True, forbid_unknown_fields=False):
    revision: str
    client_info: Implementation | None = None
    capabilities: ClientCapabilities | None = None
    log_level: LoggingLevel | None = None
    subscriptions: list[str] = []


_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(_Snapshot).decode


class StatefulServer(Protocol):
    """A server whose per-session state a snapshot holds (a :class:`~mcptrio.Server` is one)."""

    def session_state(self, session: Session) -> ServerSessionState: ...


class SessionSnapshots:
    """Snapshots of the sessions of ``server``; see the module docstring."""

    saved_after = SNAPSHOT_METHODS

    def __init__(self, server: StatefulServer) -> None:
        self.server = server

    def export(self, session: Session) -> bytes | None:
        """The snapshot of ``session``; ``None`` before its handshake completed."""
        revision = session.revision
        if revision is None:
            return None
        connection = session.connection
        state = self.server.session_state(session)
        capabilities = connection.peer_capabilities
        return _encode(
            _Snapshot(
                revision,
                connection.peer_info,
                capabilities if isinstance(capabilities, ClientCapabilities) else None,
                state.log_level,
                sorted(state.subscriptions),
            )
        )

    def restore(self, session: Session, snapshot: bytes) -> None:
        """Put ``snapshot`` into ``session``, which runs and has not read anything yet.
        ``ValueError`` for a snapshot this server cannot take (a revision it does not speak)."""
        try:
            saved = _decode(snapshot)
        except msgspec.DecodeError as exc:
            raise ValueError(f"unreadable session snapshot: {exc}") from None
        session.resume_handshake(
            saved.revision, saved.client_info, saved.capabilities or ClientCapabilities()
        )
        state = self.server.session_state(session)
        state.log_level = saved.log_level
        for uri in saved.subscriptions:
            state.subscribe(uri)
