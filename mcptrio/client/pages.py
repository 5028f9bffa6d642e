"""Every item of a paginated list, following ``nextCursor`` from page to page (the client's
``iter_*`` methods)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

from ..protocol.types.common import PaginatedResult
from .errors import RepeatedCursor
from .options import CallOptions

__all__ = ["every_item"]

PageT = TypeVar("PageT", bound=PaginatedResult)
ItemT = TypeVar("ItemT")


async def every_item(
    list_page: Callable[..., Awaitable[PageT]],
    items_of: Callable[[PageT], list[ItemT]],
    options: CallOptions,
) -> AsyncIterator[ItemT]:
    """Every item of every page ``list_page(cursor, **options)`` returns, following
    ``nextCursor``; a cursor seen before raises :class:`~.errors.RepeatedCursor` rather than
    list for ever."""
    seen: set[str] = set()
    cursor: str | None = None
    while True:
        page = await list_page(cursor, **options)
        for item in items_of(page):
            yield item
        next_cursor = page.next_cursor
        if not isinstance(next_cursor, str):
            return
        if next_cursor in seen:
            raise RepeatedCursor(
                f"The server answered nextCursor {next_cursor!r} a second time; stopping"
                " instead of listing for ever"
            )
        seen.add(next_cursor)
        cursor = next_cursor
