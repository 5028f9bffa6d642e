"""``server/discover`` (2026-07-28): what a server speaks and offers, asked without a handshake.

Servers must implement it; clients may call it (a dual-era client probes with it). Its result
carries the cache hints of SEP-2549 like the list results.
"""

from __future__ import annotations

from ..base import Request, Result
from .common import CacheScope
from .lifecycle import ServerCapabilities

__all__ = ["DiscoverRequest", "DiscoverResult"]


class DiscoverResult(Result, kw_only=True):
    """The answer to ``server/discover``; ``_meta`` carries the server's ``serverInfo``."""

    supported_versions: list[str]
    capabilities: ServerCapabilities
    instructions: str | None = None
    ttl_ms: int | None = None
    cache_scope: CacheScope | None = None


class DiscoverRequest(Request[DiscoverResult], kw_only=True):
    """``server/discover``: its params hold only the request ``_meta``."""

    METHOD = "server/discover"
