"""Tool names for operations: the ``operationId``, made to follow the MCP naming rules, or else
the method and path.

The rules (2025-11-25 on, unchanged in 2026-07-28): 1 to 128 characters of ``A-Z a-z 0-9 _ -
.``, unique within the server. A run of other characters becomes one ``_``; a name too long is
cut at 128; an operation without an ``operationId`` is named from its method and path
(``GET /items/{item_id}`` -> ``get_items_item_id``). A name already taken gets ``_2``, ``_3``...
"""

from __future__ import annotations

import re

from .operations import Operation

__all__ = ["ToolNames", "sanitise"]

_OTHER = re.compile(r"[^A-Za-z0-9_.\-]+")
_MAX = 128


def sanitise(text: str) -> str:
    """``text`` as a name the rules allow (``""`` if nothing of it is left)."""
    return _OTHER.sub("_", text).strip("_")[:_MAX]


def _from_route(operation: Operation) -> str:
    words = _OTHER.split(f"{operation.method.lower()} {operation.path}")
    return sanitise("_".join(word for word in words if word)) or operation.method.lower()


class ToolNames:
    """Hands out unique names, in the order operations are named."""

    def __init__(self) -> None:
        self._taken: set[str] = set()

    def take(self, name: str) -> str:
        """``name``, or ``name_N`` for the first free ``N`` from 2 (cut to fit 128)."""
        candidate, count = name, 1
        while candidate in self._taken:
            count += 1
            suffix = f"_{count}"
            candidate = name[: _MAX - len(suffix)] + suffix
        self._taken.add(candidate)
        return candidate

    def name(self, operation: Operation) -> str:
        """The operation's name (see the module docstring)."""
        given = sanitise(operation.operation_id or "")
        return self.take(given or _from_route(operation))
