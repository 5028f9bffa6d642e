"""Protocol revisions and version negotiation.

The handshake-era revisions negotiate once, in ``initialize``: the client offers the revision it
prefers (its latest); a server that speaks it echoes it, otherwise it answers with its own latest.
A client that does not speak the server's answer refuses it and disconnects.
"""

from __future__ import annotations

from typing import Final

from .errors import UnsupportedProtocolVersion

__all__ = [
    "BATCH_REVISIONS",
    "LATEST",
    "SUPPORTED",
    "accept_server_answer",
    "choose_server_revision",
    "revision_at_least",
]

#: The revisions mcptrio speaks, newest first.
SUPPORTED: Final[tuple[str, ...]] = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST: Final[str] = SUPPORTED[0]
#: JSON-RPC batches exist in 2025-03-26 only (added there, removed in 2025-06-18).
BATCH_REVISIONS: Final[frozenset[str]] = frozenset({"2025-03-26"})


def revision_at_least(revision: str, minimum: str) -> bool:
    """Whether ``revision`` is ``minimum`` or later (revisions are ISO dates, so they sort)."""
    return revision >= minimum


def choose_server_revision(requested: str, supported: tuple[str, ...] = SUPPORTED) -> str:
    """The revision a server answers ``initialize`` with: the requested one, else its latest."""
    return requested if requested in supported else supported[0]


def accept_server_answer(answered: str, supported: tuple[str, ...] = SUPPORTED) -> str:
    """Check the revision a server answered with; raise if the client does not speak it."""
    if answered not in supported:
        raise UnsupportedProtocolVersion(
            f"Server answered with protocol version {answered!r}, which this client does not speak",
            {"supported": list(supported), "requested": answered},
        )
    return answered
