"""In-process composition: one :class:`~.server.Server` serving another's contents.

::

    weather = mcptrio.Server("weather")
    notes = mcptrio.Server("notes")
    app = mcptrio.Server("assistant")
    app.mount(weather, namespace="weather")   # tool "forecast" -> "weather_forecast"
    app.mount(notes, namespace="notes")

Naming. A mounted tool or prompt is named ``<namespace>_<name>``. The namespace must be 1-64
characters of ``A-Za-z0-9_-`` (the 2025-11-25 tool-name rules, SEP-986, allow ``.`` too, but
several LLM APIs refuse it in tool names, so the separator and the namespace keep to the
characters every client accepts). A name that would pass 128 characters is left out, with a
warning. Resources and templates keep their URIs: a URI names the resource wherever it is
served, and clients may have stored it. A URI already served by this server (its own or
another mount's) is left out, with a warning, rather than shadowed. MCP Apps views are the
exception: ``ui://<rest>`` is served as ``ui://<namespace>/<rest>`` and the tools that name it
say so, since a view's URI is a reference between a server's tools and its views, read afresh
from the tool, and app servers often name theirs alike; a view's calls of its server's tools by
their own names reach them (:mod:`.apps`).

Liveness. The mount does not copy handlers: each forwarded item looks the mounted server's item
up when it is called, and a change in the mounted server (a tool added or removed, a resource
updated) is heard through :meth:`~.server.Server.watch` and replayed here, so
this server's clients get ``notifications/<kind>/list_changed`` and
``notifications/resources/updated`` for it. Mounting and unmounting while sessions run send
list-changed too.

A mounted server's handlers receive a :class:`~.context.Context` whose ``server`` is the mounted
server (progress, logging, sampling and cancellation are those of the request, as usual). Its
lifespan is entered, after this server's, when this server starts serving (a server mounted
while this one serves has none open; see :meth:`~.server.Server.open_lifespan`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

import msgspec

from ..protocol.apps_extension import tool_ui
from ..protocol.types import (
    CallToolResult,
    CompleteArgument,
    CompleteContext,
    CompleteRequest,
    GetPromptResult,
    Implementation,
    PromptReference,
    ResourceContents,
    ResourceTemplateReference,
)
from .apps import namespaced_tool_meta, namespaced_view_reader, view_uri
from .completion import CompletionEngine
from .forwarding import (
    CompleteForwarder,
    ForwardedItem,
    ForwardedPrompt,
    ForwardedResource,
    ForwardedTemplate,
    ForwardedTool,
)
from .handler_context import ContextServer, HandlerContext
from .prompts import RegisteredPrompt
from .registry import Registry
from .resources import RegisteredResource, RegisteredTemplate, read_resource
from .session_state import ListKind
from .subscription_bus import Change
from .tools import RegisteredTool

__all__ = ["NAMESPACE", "Mount", "MountableServer", "Mounts"]

log = logging.getLogger("mcptrio.server")

#: What a namespace may be.
NAMESPACE = re.compile(r"[A-Za-z0-9_\-]{1,64}")


def check_namespace(namespace: str) -> str:
    """Return ``namespace``, or raise ``ValueError`` if :data:`NAMESPACE` refuses it."""
    if not isinstance(namespace, str) or not NAMESPACE.fullmatch(namespace):
        raise ValueError(
            f"Invalid namespace {namespace!r}: use 1-64 characters of A-Z, a-z, 0-9, '_', '-'"
        )
    return namespace


class MountableServer(ContextServer, Protocol):
    """What a mount reads and changes of the server mounting and of the server mounted (a
    :class:`~mcptrio.Server` has it): their contents, and how they tell of changes."""

    info: Implementation
    tools: Registry[RegisteredTool | ForwardedTool]
    resources: Registry[RegisteredResource | ForwardedResource]
    templates: Registry[RegisteredTemplate | ForwardedTemplate]
    prompts: Registry[RegisteredPrompt | ForwardedPrompt]
    completions: CompletionEngine

    def add_forwarded(self, item: ForwardedItem) -> ForwardedItem: ...

    def notify_resource_updated(self, uri: str) -> int: ...

    def watch(self, watcher: Callable[[Change], None]) -> Callable[[], None]: ...

    def open_lifespan(self) -> AbstractAsyncContextManager[Any]: ...


class Mount:
    """``child``'s contents served by ``parent`` under ``namespace`` (made by
    :meth:`~.server.Server.mount`; :meth:`~.server.Server.unmount` closes it)."""

    def __init__(
        self,
        parent: MountableServer,
        child: MountableServer,
        namespace: str,
        *,
        rename: Callable[[str], str] | None = None,
        wants: Callable[[str], bool] | None = None,
    ) -> None:
        self.parent = parent
        self.child = child
        self.namespace = check_namespace(namespace)
        # A gateway's in-process upstream names and filters as its other upstreams do.
        self._rename = rename
        self._wants = wants
        self._keys: dict[ListKind, list[tuple[str, str]]] = {
            "tools": [],
            "resources": [],
            "prompts": [],
        }
        for kind in self._keys:
            self._sync(kind)
        self._unwatch = child.watch(self._heard)

    def __repr__(self) -> str:
        return f"<Mount {self.child.info.name!r} as {self.namespace!r}>"

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools this mount serves."""
        return [key for registry, key in self._keys["tools"]]

    def close(self) -> None:
        """Stop following the mounted server and remove everything it added."""
        self._unwatch()
        for kind in self._keys:
            self._clear(kind)

    def name(self, name: str) -> str:
        """The name a mounted tool or prompt called ``name`` has here."""
        if self._rename is not None:
            return self._rename(name)
        return f"{self.namespace}_{name}"

    def wanted(self, key: str) -> bool:
        """Whether the item called (or at URI) ``key`` is served here."""
        return self._wants is None or self._wants(key)

    # ---------------------------------------------------------------- following the child

    def _heard(self, change: Change) -> None:
        what, value = change
        if what == "list_changed":
            self._sync(value)  # type: ignore[arg-type]
            return
        uri = view_uri(self.namespace, value)
        if any(key == uri for _, key in self._keys["resources"]) or any(
            isinstance(t, ForwardedTemplate) and t.match(uri) is not None
            for t in self._mounted_templates()
        ):
            self.parent.notify_resource_updated(uri)

    def _mounted_templates(self) -> list[Any]:
        return [
            self.parent.templates.get(key)
            for registry, key in self._keys["resources"]
            if registry == "templates"
        ]

    def _clear(self, kind: ListKind) -> None:
        for registry, key in self._keys[kind]:
            getattr(self.parent, registry).remove(key)
        self._keys[kind] = []

    def _sync(self, kind: ListKind) -> None:
        self._clear(kind)
        items: list[tuple[str, ForwardedItem]] = []
        wanted = self.wanted
        child = self.child
        if kind == "tools":
            views = any(tool_ui(tool.definition.meta) for tool in child.tools.values())
            items = [("tools", self._tool(name, views)) for name in child.tools if wanted(name)]
        elif kind == "prompts":
            items = [("prompts", self._prompt(name)) for name in child.prompts if wanted(name)]
        else:
            items = [("resources", self._resource(uri)) for uri in child.resources if wanted(uri)]
            items += [("templates", self._template(key)) for key in child.templates if wanted(key)]
        for registry, item in items:
            try:
                self.parent.add_forwarded(item)
            except ValueError as exc:
                log.warning("Mounting %r as %r: %s; left out", self.child.info.name, self, exc)
                continue
            self._keys[kind].append((registry, _key(item)))

    # ---------------------------------------------------------------- the forwarded items

    def _tool(self, name: str, views: bool) -> ForwardedTool:
        """Tool ``name`` of the child; ``views``: the child has MCP Apps views, so a view's
        call of ``name`` reaches it too (:func:`.apps.app_call_target`)."""
        child = self.child
        definition = child.tools[name].definition
        definition = msgspec.structs.replace(
            definition,
            name=self.name(name),
            meta=namespaced_tool_meta(self.namespace, definition.meta),
        )

        async def call(ctx: HandlerContext, arguments: dict[str, Any] | None) -> CallToolResult:
            return await child.tools.require(name).call(ctx.for_server(child), arguments)

        try:
            return ForwardedTool(definition, call, app_name=name if views else None)
        except ValueError as exc:
            raise ValueError(f"tool {name!r}: {exc}") from None

    def _prompt(self, name: str) -> ForwardedPrompt:
        child = self.child
        prompt = child.prompts[name]
        definition = msgspec.structs.replace(prompt.definition, name=self.name(name))

        async def render(ctx: HandlerContext, arguments: dict[str, str] | None) -> GetPromptResult:
            return await child.prompts.require(name).render(ctx.for_server(child), arguments)

        complete = self._completer(PromptReference(name=name), bool(prompt.completions))
        return ForwardedPrompt(definition, render, complete=complete)

    async def _read(self, ctx: HandlerContext, uri: str) -> list[ResourceContents]:
        child = self.child
        result = await read_resource(child.resources, child.templates, ctx.for_server(child), uri)
        return result.contents

    def _resource(self, uri: str) -> ForwardedResource:
        definition = self.child.resources[uri].definition
        served = view_uri(self.namespace, uri)
        if served == uri:
            return ForwardedResource(definition, self._read)
        definition = msgspec.structs.replace(definition, uri=served)
        return ForwardedResource(definition, namespaced_view_reader(self.namespace, self._read))

    def _template(self, key: str) -> ForwardedTemplate:
        template = self.child.templates[key]
        complete = self._completer(ResourceTemplateReference(uri=key), bool(template.completions))
        return ForwardedTemplate(template.definition, self._read, complete=complete)

    def _completer(
        self, ref: PromptReference | ResourceTemplateReference, has_completers: bool
    ) -> CompleteForwarder | None:
        """Completion through the mounted server's engine, when it can complete anything
        for ``ref`` (completers of its own, or the server's completion handler)."""
        child = self.child
        if not has_completers and child.completions.handler is None:
            return None

        async def complete(
            ctx: HandlerContext, argument: str, value: str, arguments: dict[str, str]
        ) -> list[str]:
            request = CompleteRequest(
                ref=ref,
                argument=CompleteArgument(name=argument, value=value),
                context=CompleteContext(arguments=arguments) if arguments else None,
            )
            answer = await child.completions.complete(ctx.for_server(child), request)
            return list(answer.completion.values)

        return complete


class Mounts:
    """The servers mounted in ``parent``, by namespace."""

    __slots__ = ("_by_namespace", "_parent")

    def __init__(self, parent: MountableServer) -> None:
        self._parent = parent
        self._by_namespace: dict[str, Mount] = {}

    def add(self, child: MountableServer, namespace: str) -> Mount:
        """Mount ``child`` under ``namespace``; ``ValueError`` for a namespace in use, one the
        tool-name rules forbid, or the parent itself."""
        if namespace in self._by_namespace:
            raise ValueError(f"The namespace {namespace!r} is already mounted")
        if child is self._parent:
            raise ValueError("A server cannot mount itself")
        mount = self._by_namespace[namespace] = Mount(self._parent, child, namespace)
        return mount

    def remove(self, namespace: str) -> bool:
        """Unmount what is mounted under ``namespace``; ``False`` if nothing is."""
        mount = self._by_namespace.pop(namespace, None)
        if mount is None:
            return False
        mount.close()
        return True

    def lifespans(self) -> list[AbstractAsyncContextManager[Any]]:
        """The lifespans of the servers mounted now, to open while the parent serves."""
        return [mount.child.open_lifespan() for mount in self._by_namespace.values()]


def _key(item: ForwardedItem) -> str:
    """What ``item`` is registered under."""
    if isinstance(item, ForwardedResource):
        return item.uri
    if isinstance(item, ForwardedTemplate):
        return item.uri_template
    return item.name
