"""One entry of the gateway's configuration file, checked: what :mod:`.transforms` and
:mod:`.toolsets` read their keys with."""

from __future__ import annotations

from collections.abc import Set
from typing import Any

__all__ = ["checked_entry"]


def checked_entry(what: str, entry: Any, known: Set[str]) -> dict[str, Any]:
    """``entry`` (the configuration's object for ``what``, say ``"Toolset 'mail'"``), or
    ``ValueError`` naming ``what`` when it is not an object or has a key outside ``known``."""
    if not isinstance(entry, dict):
        raise ValueError(f"{what}: must be an object")
    unknown = set(entry) - known
    if unknown:
        raise ValueError(
            f"{what}: unknown key(s) {', '.join(sorted(map(repr, unknown)))}"
            f" (known: {', '.join(sorted(known))})"
        )
    return entry
