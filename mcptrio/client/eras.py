"""Which era the client speaks with a server: the probe of the stateless era, and its fallback.

A client that may speak the stateless era (2026-07-28) asks ``server/discover`` first, with its
``_meta``, on the stream it opened (CHECKLIST 6.2):

- a ``DiscoverResult``: the server is of the stateless era; every later request carries the
  client's ``_meta`` and the server's capabilities come from the answer;
- -32022 naming a revision both sides speak: asked again at that revision, once (even the one
  just refused: a server may refuse a first try and accept the retry);
- a recognised stateless-era error (-32020, -32021, -32022 otherwise): the server is of that era
  but refuses this client; raised;
- any other answer, or none within ``Timeouts.probe``: a handshake-era server; the client falls
  back to ``initialize`` (never keyed on one error code). A pinned revision does not fall back.

The era found is remembered per server for the life of the process (:class:`EraCache`: per
command line for stdio, per URL for HTTP and WebSocket; a server in memory is not remembered),
so that the next connection to a handshake-era server does not probe again.
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple

import msgspec
import trio

from ..protocol.connection import Connection
from ..protocol.errors import (
    STATELESS_ERROR_CODES,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
    RequestTimeout,
)
from ..protocol.request_meta import SERVER_INFO_KEY, RequestMeta
from ..protocol.revisions import revision_of
from ..protocol.types import (
    ClientCapabilities,
    DiscoverRequest,
    DiscoverResult,
    Implementation,
    InitializeResult,
)
from ..runtime.session import Session

__all__ = ["ERA_CACHE", "EraCache", "Probed", "era_key", "probe_stateless"]

_UNKNOWN_SERVER = Implementation(name="unknown", version="unknown")
#: What the cache remembers of a handshake-era server.
HANDSHAKE: Final = "handshake"


class EraCache:
    """The era each server spoke, by :func:`era_key`: a stateless-era revision or
    :data:`HANDSHAKE`. Bounded: past ``size`` servers the oldest is forgotten."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._eras: dict[str, str] = {}

    def get(self, key: str | None) -> str | None:
        return None if key is None else self._eras.get(key)

    def remember(self, key: str | None, era: str) -> None:
        if key is None:
            return
        self._eras.pop(key, None)
        if len(self._eras) >= self.size:
            self._eras.pop(next(iter(self._eras)))
        self._eras[key] = era

    def clear(self) -> None:
        self._eras.clear()


#: The process's cache of eras.
ERA_CACHE: Final = EraCache()


def era_key(target: object) -> str | None:
    """Who ``target`` is, for :data:`ERA_CACHE` (``None``: not remembered)."""
    url = getattr(target, "url", None)
    if isinstance(url, str):
        return url
    command = getattr(target, "command", None)
    if isinstance(command, list | tuple):
        return "\0".join(map(str, command))
    return None


class Probed(NamedTuple):
    """What a successful probe found: the server as an ``initialize`` result would describe
    it, and the ``server/discover`` answer itself (the client's cache keeps it for its
    ``ttlMs``, so that a ``discover()`` right after connecting asks nothing)."""

    initialize_result: InitializeResult
    discover_result: DiscoverResult


async def probe_stateless(
    session: Session,
    candidates: tuple[str, ...],
    *,
    capabilities: ClientCapabilities,
    info: Implementation,
    timeout: float,
    pinned: bool,
    key: str | None = None,
) -> Probed | None:
    """Settle the stateless era with the server, or ``None`` to fall back to ``initialize``.

    On success the session's connection speaks the stateless era, and the answer is returned
    as it came and in the shape of an ``initialize`` result (what
    :class:`~mcptrio.client.Client` reads).
    """
    versions = list(candidates)
    if not pinned and ERA_CACHE.get(key) == HANDSHAKE:
        return None
    retried = False
    while versions:
        meta = RequestMeta(revision_of(versions.pop(0)), capabilities, info)
        try:
            with trio.fail_after(timeout):
                found = await session.request(DiscoverRequest(meta=meta.to_meta()))
        except trio.TooSlowError:
            if pinned:
                raise RequestTimeout(
                    f"The server did not answer server/discover within {timeout} s"
                ) from None
            ERA_CACHE.remember(key, HANDSHAKE)
            return None
        except McpError as exc:
            if exc.code == UNSUPPORTED_PROTOCOL_VERSION and not retried:
                retried = True
                versions = _common(exc.data, candidates)
                if versions:
                    continue
            if pinned or exc.code in STATELESS_ERROR_CODES:
                raise
            ERA_CACHE.remember(key, HANDSHAKE)
            return None
        _adopt(session.connection, meta, found)
        ERA_CACHE.remember(key, meta.revision.version)
        return Probed(_as_initialize_result(meta, found), found)
    return None


def _common(data: Any, candidates: tuple[str, ...]) -> list[str]:
    """The revisions both sides speak, the client's preferred first, from -32022's data."""
    supported = data.get("supported") if isinstance(data, dict) else None
    if not isinstance(supported, list):
        return []
    return [version for version in candidates if version in supported][:1]


def _adopt(connection: Connection, meta: RequestMeta, found: DiscoverResult) -> None:
    connection.start_stateless(meta, found.capabilities)
    connection.peer_info = _server_info(found)
    if isinstance(found.instructions, str):
        connection.peer_instructions = found.instructions


def _server_info(found: DiscoverResult) -> Implementation:
    raw = found.meta.get(SERVER_INFO_KEY) if isinstance(found.meta, dict) else None
    if isinstance(raw, dict):
        try:
            return msgspec.convert(raw, Implementation)
        except msgspec.ValidationError:
            pass
    return _UNKNOWN_SERVER


def _as_initialize_result(meta: RequestMeta, found: DiscoverResult) -> InitializeResult:
    return InitializeResult(
        protocol_version=meta.revision.version,
        capabilities=found.capabilities,
        server_info=_server_info(found),
        instructions=found.instructions,
    )
