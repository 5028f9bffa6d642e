"""Small building blocks shared by several feature modules.

- :class:`BaseMetadata`: the ``name`` / ``title`` pair that tools, prompts, prompt arguments,
  resources, resource templates, resource links, prompt references and implementations carry.
  The ``title`` member (a display name) was added in 2025-06-18; before that only ``name``
  existed.
- :class:`PaginatedRequest` / :class:`PaginatedResult`: the ``cursor`` / ``nextCursor`` pair of
  the list methods (present in every revision; ``tasks/list`` joined in 2025-11-25).
- :data:`Cursor`: an opaque pagination cursor.

Note on ``kw_only``: msgspec applies ``kw_only=True`` only to the fields a class defines itself,
so every struct in this package passes ``kw_only=True`` again; that is what lets a subclass add
required fields after the optional ``_meta`` of its base.
"""

from __future__ import annotations

from typing import TypeAlias, TypeVar

from ..base import UNSET, Request, Result, UnsetType, WireStruct

__all__ = ["BaseMetadata", "Cursor", "PaginatedRequest", "PaginatedResult"]

#: An opaque pagination token (``Cursor`` in the schema).
Cursor: TypeAlias = str

_ResultT = TypeVar("_ResultT", bound=Result)


class BaseMetadata(WireStruct, kw_only=True):
    """``name`` (programmatic identifier) and ``title`` (display name, 2025-06-18+)."""

    name: str
    title: str | UnsetType = UNSET


class PaginatedResult(Result, kw_only=True):
    """Base of list results: ``nextCursor`` is present when there are more pages."""

    next_cursor: Cursor | UnsetType = UNSET


class PaginatedRequest(Request[_ResultT], kw_only=True):
    """Base of list requests: ``cursor`` asks for the page after a previous ``nextCursor``.

    The whole ``params`` object is optional on the wire for these requests.
    """

    cursor: Cursor | UnsetType = UNSET
