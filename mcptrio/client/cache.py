"""The client's cache of results (2026-07-28, SEP-2549).

In the stateless era the results of ``server/discover``, ``tools/list``, ``prompts/list``,
``resources/list``, ``resources/templates/list`` and ``resources/read`` carry ``ttlMs`` (how
long they stay fresh) and ``cacheScope`` (``"public"`` or ``"private"``: who may share them).
A :class:`ResultCache` keeps them:

- **Key**: the method and the parameter that changes the result: the ``cursor`` of a list
  page, the ``uri`` of a read. Each page is an entry of its own, fresh by its own ``ttlMs``.
- **Fresh** while ``now < received + ttlMs`` (``trio.current_time()``, so tests may use an
  autojump clock). An absent or negative ``ttlMs`` counts as 0: stale at once, never stored.
  Handshake-era results carry no ``ttlMs``: nothing is cached in that era.
- **Invalidated** by the notification that says the result changed: a list change drops the
  pages of that list (``resources`` drops the templates' pages too), ``resources/updated`` the
  read of that URI. An answer to a request sent before such a notification is not stored (it
  may predate the change). An error answer to a request with a cursor drops that list's pages
  (the cursor may be stale; the SEP has clients list again from the start).
- **Bounded**: at most ``CachePolicy.size`` entries; past that, the least recently used goes.
- **Per connection**: each :class:`~mcptrio.Client` has its own cache and nothing is shared
  between clients, so a ``"private"`` result is never served to another authorization context,
  and neither is a ``"public"`` one (a shared cache is a gateway's business, not a client's).

In the stateless era the client hears of changes only on a listen stream, and only of the kinds
that stream asked for (:mod:`.listen_actor`). The cache does not open a stream to be able to
invalidate: it trusts a ``ttlMs`` because the server said so. With a ``list_changes()`` block,
a ``subscribe()`` block or an ``on_list_changed`` callback open, the notifications they bring
invalidate early; without them an entry is served until its ``ttlMs`` runs out, which is the
freshness the server promised.

Each call chooses (``cache=`` in :class:`~mcptrio.client.options.CallOptions`): ``"use"``
(default) answers a fresh entry without asking the server; ``"refresh"`` always asks and stores
the answer; ``"bypass"`` asks and stores nothing. Results are returned as stored: treat them as
read-only.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias, TypeVar, cast, get_args

import msgspec
import trio

from ..protocol.base import Request, Result
from ..protocol.errors import McpError
from ..protocol.types import (
    DiscoverRequest,
    ListPromptsRequest,
    ListResourcesRequest,
    ListResourceTemplatesRequest,
    ListToolsRequest,
    ReadResourceRequest,
)
from .notifications import ListKind

__all__ = [
    "DEFAULT_CACHE_SIZE",
    "CacheKey",
    "CacheMode",
    "CachePolicy",
    "CacheStatistics",
    "ResultCache",
    "cache_key",
    "cache_mode",
]

ResultT = TypeVar("ResultT", bound=Result)

#: ``"use"``: a fresh entry answers; ``"refresh"``: ask, store; ``"bypass"``: ask, store nothing.
CacheMode: TypeAlias = Literal["use", "refresh", "bypass"]
_MODES: Final = frozenset(get_args(CacheMode))
#: A cached result's key: the method, and the cursor (lists) or URI (reads) if any.
CacheKey: TypeAlias = tuple[str, str | None]
#: How many results a client keeps unless its :class:`CachePolicy` says otherwise.
DEFAULT_CACHE_SIZE: Final = 256

# What invalidates each method's results: a list kind, "read" (by URI), or nothing.
_LISTS: Final[dict[type[Request[Any]], ListKind]] = {
    ListToolsRequest: "tools",
    ListPromptsRequest: "prompts",
    ListResourcesRequest: "resources",
    ListResourceTemplatesRequest: "resources",
}
_GROUP_OF_METHOD: Final[dict[str, str]] = {
    **{request.METHOD: kind for request, kind in _LISTS.items()},
    ReadResourceRequest.METHOD: "read",
}


@dataclass(frozen=True, kw_only=True)
class CachePolicy:
    """How many results a client keeps (``open_client(cache=CachePolicy(size=...))``).

    ``size`` entries at most, the least recently used dropped first; 0 keeps nothing.
    """

    size: int = DEFAULT_CACHE_SIZE

    def __post_init__(self) -> None:
        if self.size < 0:
            raise ValueError(f"CachePolicy.size must be 0 or more, not {self.size}")


class CacheStatistics(msgspec.Struct, frozen=True):
    """A snapshot of a client's cache."""

    #: Results stored now.
    entries: int
    #: Calls answered from the cache.
    hits: int
    #: Calls with ``cache="use"`` that found no fresh entry and asked the server.
    misses: int


def cache_key(request: Request[Any]) -> CacheKey | None:
    """The cache key of ``request``; ``None`` for a request whose result is not cacheable."""
    kind = type(request)
    if kind is ReadResourceRequest:
        return (request.METHOD, cast(ReadResourceRequest, request).uri)
    if kind in _LISTS:
        cursor = getattr(request, "cursor", None)
        return (request.METHOD, cursor if isinstance(cursor, str) else None)
    if kind is DiscoverRequest:
        return DISCOVER_KEY
    return None


#: The key of ``server/discover``'s answer (the probe's answer is kept under it too).
DISCOVER_KEY: Final[CacheKey] = (DiscoverRequest.METHOD, None)


def cache_mode(options: Any) -> CacheMode:
    """The ``cache=`` of a call's options (``"use"`` when absent); ``ValueError`` if unknown."""
    mode = options.get("cache", "use")
    if mode not in _MODES:
        raise ValueError(f"cache= takes one of {sorted(_MODES)}, not {mode!r}")
    return cast(CacheMode, mode)


class _Entry:
    __slots__ = ("expires", "result", "scope")

    def __init__(self, result: Result, expires: float, scope: object) -> None:
        self.result = result
        self.expires = expires
        self.scope = scope


class ResultCache:
    """One client's cache of results (see the module docs); ``size`` 0 stores nothing."""

    def __init__(self, size: int = DEFAULT_CACHE_SIZE) -> None:
        self.size = size
        self._entries: dict[CacheKey, _Entry] = {}
        # Bumped by each invalidation of a group: an answer whose request was sent before the
        # bump is not stored.
        self._generations: dict[str, int] = {}
        self._hits = 0
        self._misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def statistics(self) -> CacheStatistics:
        return CacheStatistics(entries=len(self._entries), hits=self._hits, misses=self._misses)

    async def fetch(
        self, key: CacheKey, mode: CacheMode, ask: Callable[[], Awaitable[ResultT]]
    ) -> ResultT:
        """The result for ``key``: from the cache or from ``ask()``, as ``mode`` says."""
        if mode == "use":
            hit = self.get(key)
            if hit is not None:
                self._hits += 1
                await trio.lowlevel.checkpoint()
                return cast(ResultT, hit)
            self._misses += 1
        generation = self._generations.get(_GROUP_OF_METHOD.get(key[0], ""), 0)
        try:
            result = await ask()
        except McpError:
            if key[1] is not None and key[0] != ReadResourceRequest.METHOD:
                self._drop_group(_GROUP_OF_METHOD[key[0]])
            raise
        if mode != "bypass":
            self.store(key, result, generation)
        return result

    def get(self, key: CacheKey) -> Result | None:
        """The fresh result stored under ``key``, if any (a stale one is dropped)."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        if trio.current_time() >= entry.expires:
            del self._entries[key]
            return None
        # The most recently used last: the first entry is the one to drop.
        del self._entries[key]
        self._entries[key] = entry
        return entry.result

    def store(self, key: CacheKey, result: Result, generation: int | None = None) -> None:
        """Keep ``result`` under ``key`` for its ``ttlMs``; a result that may not be kept
        (``ttlMs`` absent or not positive, or invalidated since ``generation``) drops what
        was stored under ``key``."""
        self._entries.pop(key, None)
        ttl = getattr(result, "ttl_ms", None)
        if not isinstance(ttl, int) or ttl <= 0 or self.size == 0:
            return
        group = _GROUP_OF_METHOD.get(key[0], "")
        if generation is not None and self._generations.get(group, 0) != generation:
            return
        scope = getattr(result, "cache_scope", None)
        self._entries[key] = _Entry(result, trio.current_time() + ttl / 1000, scope)
        while len(self._entries) > self.size:
            del self._entries[next(iter(self._entries))]

    def list_changed(self, kind: ListKind) -> None:
        """``notifications/<kind>/list_changed``: drop that list's pages."""
        self._drop_group(kind)

    def resource_updated(self, uri: str) -> None:
        """``notifications/resources/updated``: drop the read of ``uri``."""
        self._generations["read"] = self._generations.get("read", 0) + 1
        self._entries.pop((ReadResourceRequest.METHOD, uri), None)

    def clear(self) -> None:
        """Forget every result (answers in flight are still stored when they come)."""
        self._entries.clear()

    def _drop_group(self, group: str) -> None:
        self._generations[group] = self._generations.get(group, 0) + 1
        for key in [key for key in self._entries if _GROUP_OF_METHOD.get(key[0]) == group]:
            del self._entries[key]
