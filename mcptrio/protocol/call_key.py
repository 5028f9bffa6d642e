"""The call key: how an mcptrio client marks the requests that are one logical call.

A client that may send a request again (the 2026-07-28 re-issue of a request whose response
stream broke, a request sent again in a new session) puts one key in the request's ``_meta``
under :data:`CALL_KEY`, the same in every copy; a server that keeps call records runs a call
with a key at most once (:mod:`mcptrio.server.call_once`). The name follows the spec's ``_meta``
key rules: a reverse-DNS prefix of our own (``io.mcptrio/``, not reserved: its second label is
not ``modelcontextprotocol`` or ``mcp``) and a name of letters and hyphens.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["CALL_KEY", "MAX_CALL_KEY_LENGTH", "call_key_of"]

#: The ``_meta`` member that holds a request's call key.
CALL_KEY: Final = "io.mcptrio/call-key"
#: The longest call key a server takes (a longer one is ignored, as if absent).
MAX_CALL_KEY_LENGTH: Final = 128


def call_key_of(meta: Any) -> str | None:
    """The call key in a request's ``_meta``; ``None`` when it has none usable."""
    if not isinstance(meta, dict):
        return None
    key = meta.get(CALL_KEY)
    if isinstance(key, str) and 0 < len(key) <= MAX_CALL_KEY_LENGTH:
        return key
    return None
