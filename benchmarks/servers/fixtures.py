"""What every benchmark server serves, independent of the library (see ``matrix.FIXTURES``).

The values and descriptions live here so that the three servers return the same bytes; each
server declares its tools and resource with its own library's decorators.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final

from ..matrix import BLOB_100K_SIZE, FIXTURES, LISTED_TOOLS, SWEEP_SIZES, TEXT_10K_SIZE

#: ``text_10k()``'s result and ``bench://blob/100k``'s text.
TEXT_10K: Final = "x" * TEXT_10K_SIZE
BLOB_100K: Final = "y" * BLOB_100K_SIZE
BLOB_URI: Final = "bench://blob/100k"
BLOB_MIME_TYPE: Final = "text/plain"
#: The payload sweep's other resources (``read-1k``, ``read-10k``, ``read-1m``): URI, name
#: and text, ``SWEEP_SIZES[workload]`` of ``"y"``.
SWEEP_BLOBS: Final = tuple(
    (
        FIXTURES[workload][1]["uri"],
        f"blob_{workload.removeprefix('read-')}",
        "y" * size,
    )
    for workload, size in SWEEP_SIZES.items()
    if FIXTURES[workload][1]["uri"] != BLOB_URI
)

#: ``tool_00`` .. ``tool_46``: with ``add``, ``add_sync`` and ``text_10k``, ``tools/list`` lists
#: 50 tools.
SEARCH_TOOL_NAMES: Final = tuple(f"tool_{i:02d}" for i in range(LISTED_TOOLS - 3))


def search_tool_description(name: str) -> str:
    """A description of the length a real tool's has (a sentence or two)."""
    return (
        f"{name}: search the benchmark catalogue for entries matching a query, returning at most "
        "`limit` results whose score is above `ratio`, optionally only flagged ones, filtered by "
        "tags."
    )


def search_result(
    name: str, query: str, limit: int, ratio: float, flag: bool, tags: list[str]
) -> str:
    """What a search tool returns (never called by the benchmark; it lists them)."""
    return f"{name}: {query!r} limit={limit} ratio={ratio} flag={flag} tags={','.join(tags)}"


SearchTool = Callable[[str, float, list[str], int, bool], Awaitable[str]]


def search_tool(name: str) -> SearchTool:
    """The function behind tool ``name``: every library derives the same five-parameter schema
    from its signature."""

    async def search(
        query: str, ratio: float, tags: list[str], limit: int = 10, flag: bool = False
    ) -> str:
        return search_result(name, query, limit, ratio, flag, tags)

    return search


def blob_reader(text: str) -> Callable[[], Awaitable[str]]:
    """The function behind one of ``SWEEP_BLOBS``' resources: returns its text."""

    async def read_blob() -> str:
        return text

    return read_blob
