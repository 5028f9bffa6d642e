"""The era a test speaks when the revision matters to what it checks.

The client probes the stateless era first by default (2026-07-28), so a test of a handshake-era
mechanism (``initialize``, a session id, ``ping``, ``logging/setLevel``, ``resources/subscribe``,
a server's own requests to the client outside an input-required result) says so with the
client's own :data:`~mcptrio.client.HANDSHAKE_ERA`.
"""

from __future__ import annotations

from mcptrio.client import HANDSHAKE_ERA, Revisions

__all__ = ["HANDSHAKE_ERA", "only"]


def only(revision: str) -> Revisions:
    """The client offers ``revision`` and accepts no other: a test parametrized over revisions
    checks what each one sends."""
    return Revisions(supported=(revision,))
