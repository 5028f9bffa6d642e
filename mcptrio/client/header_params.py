"""What the client remembers of the tools' ``x-mcp-header`` arguments (2026-07-28, SEP-2243).

Over Streamable HTTP in the stateless era, an argument whose input-schema property is annotated
``x-mcp-header`` also travels as an ``Mcp-Param-{Name}`` header, which the server checks against
the body. The client learns the annotations from each ``tools/list`` page; a tool whose
annotations break the rules is left out of what the client shows (the spec says clients must
drop it), with a warning in the log.
"""

from __future__ import annotations

import logging

import msgspec

from ..protocol.http_headers import InvalidHeaderAnnotation, PropertyPath, header_params
from ..protocol.types.tools import ListToolsResult

__all__ = ["HeaderParamsOfTools"]

log = logging.getLogger("mcptrio.client")

#: Tools remembered at most (a server listing more is not a reason to grow without bound).
MAX_TOOLS = 10_000


class HeaderParamsOfTools:
    """Tool name -> its annotated arguments (property path -> header name), as last listed."""

    __slots__ = ("_by_tool",)

    def __init__(self) -> None:
        self._by_tool: dict[str, dict[PropertyPath, str]] = {}

    def get(self, name: str) -> dict[PropertyPath, str] | None:
        return self._by_tool.get(name)

    def learn(self, page: ListToolsResult) -> ListToolsResult:
        """Remember the page's annotations; the page without the tools that break the rules."""
        kept = []
        for tool in page.tools:
            try:
                found = header_params(tool.input_schema)
            except InvalidHeaderAnnotation as exc:
                log.warning(
                    "left out tool %r: its x-mcp-header annotations are invalid (%s)",
                    tool.name,
                    exc,
                )
                self._by_tool.pop(tool.name, None)
                continue
            if found:
                if len(self._by_tool) >= MAX_TOOLS and tool.name not in self._by_tool:
                    self._by_tool.pop(next(iter(self._by_tool)))
                self._by_tool[tool.name] = found
            else:
                self._by_tool.pop(tool.name, None)
            kept.append(tool)
        if len(kept) == len(page.tools):
            return page
        return msgspec.structs.replace(page, tools=kept)
