"""What a server serves: :class:`ServerContents`, its tools, resources, resource templates,
prompts and completions, and what they make it declare.

Each kind is a :class:`~.registry.Registry` (by name, URI or URI template, in registration
order); a change to one tells ``on_change`` the kind of list that changed, so that the server
tells its sessions (:mod:`.changes`). Registered items (:mod:`.tools`, :mod:`.resources`,
:mod:`.prompts`) and forwarded ones (:mod:`.forwarding`) sit side by side.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any, Protocol, Unpack

from ..protocol.http_headers import PropertyPath, header_params
from ..protocol.skills_extension import EXTENSION_ID as SKILLS_ID
from ..protocol.types import (
    PromptsCapability,
    ResourcesCapability,
    ServerCapabilities,
    ToolsCapability,
)
from .apps import apps_capability
from .completion import CompletionEngine
from .forwarding import (
    ForwardedItem,
    ForwardedPrompt,
    ForwardedResource,
    ForwardedTemplate,
    ForwardedTool,
)
from .prompts import PromptOptions, RegisteredPrompt, make_prompt
from .registry import Registry
from .resources import (
    RegisteredResource,
    RegisteredTemplate,
    ResourceOptions,
    make_resource,
    make_template,
)
from .session_state import ListKind
from .skills import Skills
from .task_calls import any_task_tools, tasks_capability
from .task_extension import tasks_extension_capability
from .tools import RegisteredTool, ToolOptions, make_tool

__all__ = ["ServerContents"]

_NO_SCOPES: frozenset[str] = frozenset()


class _Scoped(Protocol):
    @property
    def scopes(self) -> frozenset[str]: ...


class ServerContents:
    """One server's tools, resources, templates, prompts and completions."""

    __slots__ = (
        "_header_params",
        "_on_change",
        "completions",
        "prompts",
        "resources",
        "templates",
        "tools",
    )

    def __init__(self, on_change: Callable[[ListKind], None]) -> None:
        self._on_change = on_change
        self.tools: Registry[RegisteredTool | ForwardedTool] = Registry(
            "A tool named {key!r}", "Unknown tool: {key}", self._tools_changed
        )
        self.resources: Registry[RegisteredResource | ForwardedResource] = Registry(
            "A resource with URI {key!r}", on_change=partial(on_change, "resources")
        )
        self.templates: Registry[RegisteredTemplate | ForwardedTemplate] = Registry(
            "A resource template {key!r}", on_change=partial(on_change, "resources")
        )
        self.prompts: Registry[RegisteredPrompt | ForwardedPrompt] = Registry(
            "A prompt named {key!r}", "Unknown prompt: {key!r}", partial(on_change, "prompts")
        )
        self.completions = CompletionEngine(self.prompts, self.templates)
        # tool_header_params, by tool name, until the tool list changes.
        self._header_params: dict[str, dict[PropertyPath, str]] = {}

    def add_tool(self, fn: Callable[..., Any], **options: Unpack[ToolOptions]) -> RegisteredTool:
        """Register ``fn`` as a tool: refused for a name taken or an input schema whose
        ``x-mcp-header`` annotations break the rules."""
        tool = make_tool(fn, **options)
        header_params(tool.definition.input_schema)
        self.tools.add(tool.name, tool)
        return tool

    def add_resource(
        self, source: str | bytes | Callable[..., Any], uri: str, **options: Unpack[ResourceOptions]
    ) -> RegisteredResource | RegisteredTemplate:
        """Register a resource, or a template when ``uri`` holds ``{variables}``."""
        if "{" in uri:
            if not callable(source):
                raise TypeError("A resource template needs a function to read it")
            template = make_template(source, uri_template=uri, **options)
            self.templates.add(template.uri_template, template)
            return template
        resource = make_resource(source, uri=uri, **options)
        self.resources.add(resource.uri, resource)
        return resource

    def add_prompt(
        self, fn: Callable[..., Any], **options: Unpack[PromptOptions]
    ) -> RegisteredPrompt:
        """Register ``fn`` as a prompt: refused for a name taken."""
        prompt = make_prompt(fn, **options)
        self.prompts.add(prompt.name, prompt)
        return prompt

    def _tools_changed(self) -> None:
        self._header_params.clear()
        self._on_change("tools")

    def tool_header_params(self, name: str) -> dict[PropertyPath, str] | None:
        """The ``x-mcp-header`` arguments of tool ``name``; ``None`` for an unknown tool."""
        found = self._header_params.get(name)
        if found is None:
            tool = self.tools.get(name)
            if tool is None:
                return None
            found = self._header_params[name] = header_params(tool.definition.input_schema)
        return found

    def required_scopes(self, method: str, key: str) -> frozenset[str]:
        """The OAuth scopes of what a ``method`` call names by ``key`` (empty for anything else,
        and for what is not here)."""
        found: _Scoped | None = None
        if method == "tools/call":
            found = self.tools.get(key)
        elif method == "prompts/get":
            found = self.prompts.get(key)
        elif method == "resources/read":
            found = self.resources.get(key)
            if found is None:
                found = next((t for t in self.templates.values() if t.match(key) is not None), None)
        return _NO_SCOPES if found is None else found.scopes

    def add_forwarded(self, item: ForwardedItem) -> ForwardedItem:
        """Add ``item`` to the registry of its kind (a tool's header annotations checked)."""
        match item:
            case ForwardedTool():
                header_params(item.definition.input_schema)
                self.tools.add(item.name, item)
            case ForwardedResource():
                self.resources.add(item.uri, item)
            case ForwardedTemplate():
                self.templates.add(item.uri_template, item)
            case ForwardedPrompt():
                self.prompts.add(item.name, item)
            case _:
                raise TypeError(f"Not a forwarded item: {item!r}")
        return item

    def capabilities(
        self,
        declared: Iterable[ListKind],
        experimental: dict[str, dict[str, Any]] | None,
        skills: Skills | None,
    ) -> ServerCapabilities:
        """What a server with these contents declares: a feature when something of its kind is
        here or it is ``declared``; ``experimental`` as given; the extensions of task-capable
        tools, of published ``skills`` and of MCP Apps views (:mod:`.apps`)."""
        declared = frozenset(declared)
        task_tools = any_task_tools(self.tools.values())
        resources = bool(self.resources or self.templates) or "resources" in declared
        extensions = {
            **(tasks_extension_capability() if task_tools else {}),
            **({} if skills is None else {SKILLS_ID: skills.capability()}),
            **apps_capability((t.definition.meta for t in self.tools.values()), self.resources),
        }
        return ServerCapabilities(
            tools=ToolsCapability(list_changed=True) if self.tools or "tools" in declared else None,
            resources=ResourcesCapability(subscribe=True, list_changed=True) if resources else None,
            prompts=PromptsCapability(list_changed=True)
            if self.prompts or "prompts" in declared
            else None,
            completions={} if self.completions.has_any() else None,
            logging={},
            experimental=experimental,
            tasks=tasks_capability() if task_tools else None,
            extensions=extensions or None,
        )
