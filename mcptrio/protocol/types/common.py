"""Small building blocks shared by several feature modules.

- :class:`BaseMetadata`: the ``name`` / ``title`` pair that tools, prompts, prompt arguments,
  resources, resource templates, resource links, prompt references and implementations carry.
  The ``title`` member (a display name) was added in 2025-06-18; before that only ``name``
  existed.
- :class:`Described`: what tools, prompts, resources, templates and resource links add to that:
  ``description``, ``icons`` (2025-11-25) and ``_meta`` (2025-06-18).
- :class:`Annotations` (hints on content and resources), :class:`Icon` (2025-11-25) and
  :data:`Role`.
- :class:`PaginatedRequest` / :class:`PaginatedResult`: the ``cursor`` / ``nextCursor`` pair of
  the list methods (present in every revision; ``tasks/list`` joined in 2025-11-25).
- :data:`Cursor`: an opaque pagination cursor.

Note on ``kw_only``: msgspec applies ``kw_only=True`` only to the fields a class defines itself,
so every struct in this package passes ``kw_only=True`` again; that is what lets a subclass add
required fields after the optional ``_meta`` of its base.
"""

from __future__ import annotations

from typing import Literal, TypeAlias, TypeVar

from ..base import Meta, Request, Result, WireStruct, meta_field

__all__ = [
    "Annotations",
    "BaseMetadata",
    "CacheScope",
    "CacheablePaginatedResult",
    "Cursor",
    "Described",
    "Icon",
    "PaginatedRequest",
    "PaginatedResult",
    "Role",
]

#: An opaque pagination token (``Cursor`` in the schema).
Cursor: TypeAlias = str
#: The sender or recipient of a message (and an ``Annotations.audience`` entry).
Role: TypeAlias = Literal["user", "assistant"]

_ResultT = TypeVar("_ResultT", bound=Result)


class Annotations(WireStruct, kw_only=True):
    """Hints for the client about how to use or display an object.

    ``audience`` and ``priority`` (0..1) exist since 2024-11-05; ``lastModified`` (an ISO 8601
    timestamp) since 2025-06-18.
    """

    audience: list[Role] | None = None
    priority: float | None = None
    last_modified: str | None = None


class Icon(WireStruct, kw_only=True):
    """An icon for display (2025-11-25+).

    ``src`` is an ``https:`` or ``data:`` URI; ``sizes`` entries look like ``"48x48"`` or
    ``"any"``; ``theme`` says which background the icon is meant for.
    """

    src: str
    mime_type: str | None = None
    sizes: list[str] | None = None
    theme: Literal["light", "dark"] | None = None


class BaseMetadata(WireStruct, kw_only=True):
    """``name`` (programmatic identifier) and ``title`` (display name, 2025-06-18+)."""

    name: str
    title: str | None = None


class Described(BaseMetadata, kw_only=True):
    """A named thing a server offers: a description, icons (2025-11-25+), ``_meta``
    (2025-06-18+)."""

    description: str | None = None
    icons: list[Icon] | None = None
    meta: Meta | None = meta_field()


#: Who may reuse a cached result (2026-07-28, SEP-2549): anyone, or one authorization context.
CacheScope: TypeAlias = Literal["public", "private"]


class PaginatedResult(Result, kw_only=True):
    """Base of list results: ``nextCursor`` is present when there are more pages."""

    next_cursor: Cursor | None = None


class CacheablePaginatedResult(PaginatedResult, kw_only=True):
    """Base of the feature lists (tools, prompts, resources, templates).

    ``ttlMs`` / ``cacheScope`` (2026-07-28) say how long and for whom the page may be cached.
    """

    ttl_ms: int | None = None
    cache_scope: CacheScope | None = None


class PaginatedRequest(Request[_ResultT], kw_only=True):
    """Base of list requests: ``cursor`` asks for the page after a previous ``nextCursor``.

    The whole ``params`` object is optional on the wire for these requests.
    """

    cursor: Cursor | None = None
