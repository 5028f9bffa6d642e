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
  A probe answered after its timeout still counts if ``initialize`` then fails
  (:class:`LateProbe`: a stateless-era server that was slow to start).

The era found is remembered per server for the life of the process (:class:`EraCache`: per
command line for stdio, per URL for HTTP and WebSocket; a server in memory is not remembered),
so that the next connection to a handshake-era server does not probe again.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
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

__all__ = ["ERA_CACHE", "EraCache", "LateProbe", "Probed", "era_key", "probe_stateless"]

log = logging.getLogger("mcptrio.client")

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
    nursery: trio.Nursery,
    key: str | None = None,
) -> Probed | LateProbe | None:
    """Settle the stateless era with the server, or ``None`` to fall back to ``initialize``.

    On success the session's connection speaks the stateless era, and the answer is returned
    as it came and in the shape of an ``initialize`` result (what
    :class:`~mcptrio.client.Client` reads). A probe still unanswered after ``timeout`` (not
    pinned) is a :class:`LateProbe`: the caller falls back to ``initialize`` through it, while
    the probe waits on in ``nursery``.
    """
    versions = list(candidates)
    if not pinned and ERA_CACHE.get(key) == HANDSHAKE:
        return None
    retried = False
    while versions:
        meta = RequestMeta(revision_of(versions.pop(0)), capabilities, info)
        call = _ProbeCall()
        nursery.start_soon(call.run, session, DiscoverRequest(meta=meta.to_meta()))
        with trio.move_on_after(timeout):
            await call.done.wait()
        if not call.done.is_set():
            if pinned:
                call.scope.cancel()
                raise RequestTimeout(
                    f"The server did not answer server/discover within {timeout} s"
                )
            return LateProbe(session, call, meta, key)
        if call.error is not None:
            exc = call.error
            if exc.code == UNSUPPORTED_PROTOCOL_VERSION and not retried:
                retried = True
                versions = _common(exc.data, candidates)
                if versions:
                    continue
            if pinned or exc.code in STATELESS_ERROR_CODES:
                raise exc
            ERA_CACHE.remember(key, HANDSHAKE)
            return None
        assert call.result is not None
        return _settled(session, meta, call.result, key)
    return None


def _settled(session: Session, meta: RequestMeta, found: DiscoverResult, key: str | None) -> Probed:
    _adopt(session.connection, meta, found)
    ERA_CACHE.remember(key, meta.revision.version)
    return Probed(_as_initialize_result(meta, found), found)


class _ProbeCall:
    """One ``server/discover`` of the probe, run in a task of its own so that it can outlive
    the probe's timeout (see :class:`LateProbe`)."""

    def __init__(self) -> None:
        self.scope = trio.CancelScope()
        self.done = trio.Event()
        self.result: DiscoverResult | None = None
        self.error: McpError | None = None

    async def run(self, session: Session, request: DiscoverRequest) -> None:
        try:
            with self.scope:
                self.result = await session.request(request)
        except McpError as exc:
            self.error = exc
        finally:
            self.done.set()


class LateProbe:
    """A probe the server did not answer in time: the client falls back to ``initialize``
    (:meth:`fall_back`), and the probe's answer, should it come after all, still counts.

    A stateless-era server that is slow to start (a first ``uvx`` run, a loaded machine)
    answers the probe late, and some then refuse ``initialize`` on that connection (the
    official SDKs do). So ``initialize`` decides unless it fails: then a ``DiscoverResult``
    that came meanwhile (the server answers in order, so it is there before the refusal)
    settles the stateless era instead of the failure.
    """

    def __init__(self, session: Session, call: _ProbeCall, meta: RequestMeta, key: str | None):
        self._session = session
        self._call = call
        self._meta = meta
        self._key = key

    async def fall_back(
        self, initialize: Callable[[], Awaitable[InitializeResult]]
    ) -> InitializeResult | Probed:
        """``initialize()``'s result; or, if it fails, the late probe's, when the probe got one."""
        call = self._call
        try:
            result = await initialize()
        except McpError:
            # The server answers in order: a DiscoverResult sent before the refusal has been
            # read by now; a moment's wait covers an answer still being handed over.
            with trio.move_on_after(_LATE_ANSWER_GRACE):
                await call.done.wait()
            if call.result is None:
                raise
            log.info("server/discover was answered late; the server is of the stateless era")
            return _settled(self._session, self._meta, call.result, self._key)
        finally:
            # Still unanswered after initialize's answer: a handshake-era server that ignores
            # the probe (cancelling it is harmless there).
            call.scope.cancel()
        ERA_CACHE.remember(self._key, HANDSHAKE)
        return result


#: How long a late probe's answer may trail ``initialize``'s failure (seconds).
_LATE_ANSWER_GRACE = 0.5


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
