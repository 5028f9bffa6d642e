"""Tool search: the gateway lists two tools, ``search_tools`` and ``call_tool``, instead of every
upstream tool.

- ``search_tools(query, limit=5)`` ranks the upstream tools the client's toolsets show
  (:mod:`.toolsets`; all of them without toolsets) with BM25 (the ``rank-bm25`` package, the
  ``gateway-search`` extra, imported only in this mode) over each tool's name (counted twice: a
  name says most), title, description and argument names, split into words (``add_note``,
  ``addNote`` and ``add-note`` are ``add note``); it returns the best ``limit`` tools with a
  score above zero, each one's ``name``, ``description`` and ``inputSchema`` (and
  ``outputSchema``, ``annotations`` when it has them): what a client needs to call it.
- ``call_tool(name, arguments)`` checks ``arguments`` against the tool's ``inputSchema`` (JSON
  Schema 2020-12, ``jsonschema``) and forwards the call in the request's own task: progress goes
  to the ``call_tool`` request's progress token, cancelling it cancels the upstream request, an
  upstream's elicitation or sampling is put to its client, as for a direct call. What the
  upstream answers is answered unchanged. An unknown tool or arguments the schema refuses are a
  tool error the model reads (it can search again, or fix the arguments).

The upstream tools are not listed, but a client that calls one by its name (learnt from a
search) is answered as in pass-through mode: search mode changes what a client must read, not
what it may call.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import jsonschema.exceptions  # type: ignore[import-untyped]
import msgspec

from ..protocol.types import CallToolResult, TextContent, Tool
from ..server import Server
from ..server.forwarding import ForwardedTool
from ..server.handler_context import HandlerContext
from ..server.tool_results import error_result
from .toolsets import ToolView

__all__ = ["ToolSearch", "install_tool_search", "parse_tool_search", "tool_words"]


@dataclass(frozen=True, kw_only=True)
class ToolSearch:
    """Tool search mode: ``limit`` is how many tools a search returns by default (a client may
    ask for up to ``max_limit``)."""

    limit: int = 5
    max_limit: int = 20

    def __post_init__(self) -> None:
        if not 1 <= self.limit <= self.max_limit:
            raise ValueError("Tool search: 'limit' must be between 1 and 'maxLimit'")
        if self.max_limit < 1:
            raise ValueError("Tool search: 'maxLimit' must be positive")


_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


def tool_words(tool: Tool) -> list[str]:
    """The words a tool is found by: its name twice, its title, its description, its argument
    names, lower-cased, split at ``_``, ``-``, ``.``, spaces and camelCase."""
    properties = tool.input_schema.get("properties")
    arguments = " ".join(properties) if isinstance(properties, dict) else ""
    text = " ".join((tool.name, tool.name, tool.title or "", tool.description or "", arguments))
    return [word.lower() for word in _WORDS.findall(text)]


SEARCH_TOOLS = Tool(
    name="search_tools",
    description=(
        "Search the tools of this gateway's servers by what you want to do; returns the best"
        " matches with their input schemas. Then call one with call_tool."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What the tool should do, in words."},
            "limit": {"type": "integer", "minimum": 1, "description": "How many tools at most."},
        },
        "required": ["query"],
    },
)

CALL_TOOL = Tool(
    name="call_tool",
    description="Call a tool found with search_tools, with arguments that fit its inputSchema.",
    input_schema={
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The tool's name, as search_tools gave it."},
            "arguments": {"type": "object", "description": "The tool's arguments."},
        },
        "required": ["name"],
    },
)


class _Index:
    """A BM25 index of some tools, kept while those tools are the same objects."""

    def __init__(self, tools: Sequence[ForwardedTool]) -> None:
        from rank_bm25 import BM25Okapi  # type: ignore[import-untyped]

        self.tools = list(tools)
        self.key = [id(tool) for tool in tools]
        self._bm25: Any = BM25Okapi([tool_words(t.definition) for t in tools]) if tools else None

    def search(self, query: str, limit: int) -> list[ForwardedTool]:
        words = [word.lower() for word in _WORDS.findall(query)]
        if self._bm25 is None or not words:
            return []
        scores = self._bm25.get_scores(words)
        ranked = sorted(range(len(self.tools)), key=lambda i: -scores[i])
        return [self.tools[i] for i in ranked[:limit] if scores[i] > 0]


class ToolSearcher:
    """The two tools of search mode over ``view``'s upstream tools (see the module docstring)."""

    def __init__(self, view: ToolView, search: ToolSearch) -> None:
        self.view = view
        self.search = search
        self._index: _Index | None = None
        self._validators: dict[int, Any] = {}

    def index(self, shown: Sequence[ForwardedTool]) -> _Index:
        key = [id(tool) for tool in shown]
        if self._index is None or self._index.key != key:
            self._index = _Index(shown)
            live = set(key)
            self._validators = {k: v for k, v in self._validators.items() if k in live}
        return self._index

    async def search_tools(
        self, ctx: HandlerContext, arguments: dict[str, Any] | None
    ) -> CallToolResult:
        arguments = arguments or {}
        query, limit = arguments.get("query"), arguments.get("limit", self.search.limit)
        if not isinstance(query, str) or not isinstance(limit, int) or limit < 1:
            return error_result("search_tools takes a 'query' string and a positive 'limit'")
        shown = [item for _upstream, item in self.view.shown(ctx).values()]
        found = self.index(shown).search(query, min(limit, self.search.max_limit))
        tools = [_described(tool.definition) for tool in found]
        answer = {"tools": tools}
        text = json.dumps(answer) if tools else "No tool matches; try other words."
        return CallToolResult(content=[TextContent(text=text)], structured_content=answer)

    async def call_tool(
        self, ctx: HandlerContext, arguments: dict[str, Any] | None
    ) -> CallToolResult:
        arguments = arguments or {}
        name, given = arguments.get("name"), arguments.get("arguments", {})
        if not isinstance(name, str) or not isinstance(given, dict):
            return error_result("call_tool takes a tool 'name' and its 'arguments' object")
        found = self.view.shown(ctx).get(name)
        if found is None:
            return error_result(f"No tool {name!r}: use a name search_tools returned")
        tool = found[1]
        problem = self._check(tool, given)
        if problem is not None:
            return error_result(f"Arguments of {name!r}: {problem}")
        return await tool.call(ctx, given)

    def _check(self, tool: ForwardedTool, arguments: dict[str, Any]) -> str | None:
        validator: Any = self._validators.get(id(tool))
        if validator is None:
            schema = tool.definition.input_schema
            try:
                validator = jsonschema.Draft202012Validator(schema)
                validator.check_schema(schema)
            except jsonschema.exceptions.SchemaError:
                validator = False  # the upstream's schema is not ours to judge: it checks
            self._validators[id(tool)] = validator
        if validator is False:
            return None
        error = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
        if error is None:
            return None
        where = "/".join(str(part) for part in error.absolute_path)
        message: str = error.message
        return f"{where}: {message}" if where else message


def _described(tool: Tool) -> dict[str, Any]:
    keep = msgspec.structs.replace(tool, icons=None, meta=None)
    described: dict[str, Any] = msgspec.to_builtins(keep)
    return described


def install_tool_search(gateway: Server, view: ToolView, search: ToolSearch) -> ToolSearcher:
    """Switch ``gateway`` to search mode: upstream tools leave its list, the two tools join."""
    if importlib.util.find_spec("rank_bm25") is None:
        raise ImportError(
            "Gateway tool search needs rank-bm25: pip install 'mcptrio[gateway-search]'"
        )
    searcher = ToolSearcher(view, search)
    view.listed_upstream_tools = False
    gateway.add_forwarded(ForwardedTool(SEARCH_TOOLS, searcher.search_tools))
    gateway.add_forwarded(ForwardedTool(CALL_TOOL, searcher.call_tool))
    return searcher


def parse_tool_search(value: Any) -> ToolSearch | None:
    """The configuration's ``"toolSearch"`` key: ``true``, or ``{"limit": n, "maxLimit": m}``."""
    if value is None or value is False:
        return None
    if value is True:
        return ToolSearch()
    if not isinstance(value, dict) or set(value) - {"limit", "maxLimit"}:
        raise ValueError('"toolSearch" is true, or an object with "limit" and "maxLimit"')
    numbers: dict[str, Any] = {k: value[k] for k in ("limit", "maxLimit") if k in value}
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers.values()):
        raise ValueError('"toolSearch": "limit" and "maxLimit" are whole numbers')
    default = ToolSearch()
    return ToolSearch(
        limit=numbers.get("limit", default.limit),
        max_limit=numbers.get("maxLimit", default.max_limit),
    )
