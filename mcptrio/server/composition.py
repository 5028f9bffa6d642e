"""How a :class:`~mcptrio.server.Server` takes in contents from elsewhere: forwarded items
(:mod:`.forwarding`, the gateway's), mounted servers (:mod:`.mount`), and those watching it.

:class:`CompositionMethods` is a base of ``Server``; the registries it fills are the server's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, cast

from ..protocol.http_headers import header_params
from .forwarding import (
    ForwardedItem,
    ForwardedPrompt,
    ForwardedResource,
    ForwardedTemplate,
    ForwardedTool,
)

if TYPE_CHECKING:
    from .mount import Mount
    from .registry import Registry
    from .server import Server

__all__ = ["Change", "CompositionMethods"]

#: What a server tells those watching it (see :meth:`CompositionMethods.watch`):
#: ``("list_changed", kind)`` or ``("updated", uri)``, the messages of its subscription bus.
Change = tuple[Literal["list_changed", "updated"], str]


class CompositionMethods:
    """Forwarded items, mounting, and watching a server's changes."""

    if TYPE_CHECKING:
        # What these need of the server (``Server`` has them).
        tools: Registry[Any]
        resources: Registry[Any]
        templates: Registry[Any]
        prompts: Registry[Any]
        _watchers: list[Callable[[Change], None]]
        _mounts: dict[str, Mount]

    def add_forwarded(self, item: ForwardedItem) -> ForwardedItem:
        """Add a tool, resource, template or prompt whose definition and answers come from
        elsewhere (see :mod:`.forwarding`); removed as any other is (``remove_tool``...)."""
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

    def watch(self, watcher: Callable[[Change], None]) -> Callable[[], None]:
        """Call ``watcher`` with every list change and resource update of this server (a
        :data:`Change`), synchronously; returns the function that stops watching."""
        self._watchers.append(watcher)
        return lambda: self._watchers.remove(watcher) if watcher in self._watchers else None

    def mount(self, other: Server, namespace: str) -> Mount:
        """Serve ``other``'s tools, resources, templates, prompts and completions from this
        server, its tool and prompt names prefixed ``<namespace>_`` (see :mod:`.mount`).

        Allowed while sessions run: they get list-changed, as they do for ``other``'s own
        changes and resource updates later. ``ValueError`` for a namespace in use or one the
        tool-name rules forbid.
        """
        from .mount import Mount

        if namespace in self._mounts:
            raise ValueError(f"The namespace {namespace!r} is already mounted")
        if other is self:
            raise ValueError("A server cannot mount itself")
        mount = self._mounts[namespace] = Mount(cast("Server", self), other, namespace)
        return mount

    def unmount(self, namespace: str) -> bool:
        """Remove what :meth:`mount` added under ``namespace``; ``False`` if nothing was."""
        mount = self._mounts.pop(namespace, None)
        if mount is None:
            return False
        mount.close()
        return True
