"""The call key each ``tools/call`` of an mcptrio client carries (see
:mod:`mcptrio.protocol.call_key`).

Every copy of a request the client sends carries the key of its first copy: the 2026-07-28
re-issue of a request whose response stream broke, and a request sent again in the new session
that replaced an ended one. A server that keeps call records (an mcptrio server with stores)
then runs the call once, however many copies reach it, on whichever worker. Keys are a random
prefix drawn once per client and a counter: unique without a draw per call, and unguessable by
another client (a server scopes them to the principal as well).
"""

from __future__ import annotations

import itertools
import secrets
from typing import Any, TypeVar

import msgspec

from ..protocol.base import Request
from ..protocol.call_key import CALL_KEY

__all__ = ["CallKeys"]

R = TypeVar("R", bound=Request[Any])


class CallKeys:
    """Draws the call keys of one client."""

    __slots__ = ("_count", "_prefix")

    def __init__(self) -> None:
        self._prefix = secrets.token_urlsafe(16)
        self._count = itertools.count(1)

    def mark(self, request: R) -> R:
        """``request`` with a fresh call key in its ``_meta`` (one it has already is kept)."""
        meta = dict(request.meta) if isinstance(request.meta, dict) else {}
        if CALL_KEY in meta:
            return request
        meta[CALL_KEY] = f"{self._prefix}.{next(self._count)}"
        return msgspec.structs.replace(request, meta=meta)
