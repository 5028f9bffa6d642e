"""The era a test speaks when the revision matters to what it checks.

The client probes the stateless era first by default (2026-07-28), so a test of a handshake-era
mechanism (``initialize``, a session id, ``ping``, ``logging/setLevel``, ``resources/subscribe``,
a server's own requests to the client outside an input-required result) says so.
"""

from __future__ import annotations

from typing import Final

from mcptrio.client import Revisions
from mcptrio.protocol.revisions import HANDSHAKE_SUPPORTED

#: Only the revisions negotiated by ``initialize``: no probe.
HANDSHAKE_ERA: Final = Revisions(supported=HANDSHAKE_SUPPORTED)
