"""What a side declared in its capabilities.

Capabilities come typed (:class:`~.types.ClientCapabilities`, :class:`~.types.ServerCapabilities`
and their members) or as the plain dicts a stateless-era request's ``_meta`` holds; both are
read here the same way, by the wire (camelCase) names of their members:

- :func:`capability_declared`: whether a path such as ``("resources", "subscribe")`` is declared
  (an object counts when present, ``{}`` included; a leaf flag when true);
- :func:`extension_settings` / :func:`extension_declared`: the settings declared for an extension
  under ``extensions`` (SEP-2133), or whether it is declared at all.
"""

from __future__ import annotations

import functools
from typing import Any

from msgspec import UNSET

__all__ = ["capability_declared", "extension_declared", "extension_settings"]


@functools.cache
def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name)


def capability_declared(capabilities: Any, path: tuple[str, ...]) -> bool:
    """Whether ``path`` (e.g. ``("resources", "subscribe")``) is declared in ``capabilities``.

    An object counts as declared when present (``{}`` included); a leaf flag when true.
    """
    node = capabilities
    for name in path:
        if node is None or node is UNSET:
            return False
        node = (
            node.get(name, UNSET) if isinstance(node, dict) else getattr(node, _snake(name), UNSET)
        )
    return node is not None and node is not UNSET and node is not False


def extension_settings(capabilities: Any, extension: str) -> dict[str, Any] | None:
    """The settings ``capabilities`` (typed or a dict) declare for ``extension`` under
    ``extensions``; ``None`` if they do not declare it."""
    if capabilities is None or capabilities is UNSET:
        return None
    extensions = (
        capabilities.get("extensions")
        if isinstance(capabilities, dict)
        else getattr(capabilities, "extensions", None)
    )
    if not isinstance(extensions, dict):
        return None
    settings = extensions.get(extension)
    return settings if isinstance(settings, dict) else None


def extension_declared(capabilities: Any, extension: str) -> bool:
    """Whether ``capabilities`` (typed or a dict) declare ``extension`` under ``extensions``."""
    return extension_settings(capabilities, extension) is not None
