"""The entry with which an MCP client starts a TARGET over stdio: what ``mcptrio config``
prints and what ``mcptrio install`` writes into a client's configuration file.

The entry runs ``python -m mcptrio run TARGET`` with the absolute path of this Python (a
desktop application starts servers with a ``PATH`` of its own, where a virtualenv's
``mcptrio`` script is rarely found), a file by its absolute path (the client starts it from a
folder of its own), and, for a module found only because it is in the current folder,
``"env": {"PYTHONPATH": <that folder>}``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from .loading import load_server, parse_server_spec

__all__ = ["stdio_entry"]


def stdio_entry(target: str, name: str | None = None) -> tuple[str, dict[str, Any]]:
    """Load ``target`` (a usage error if it does not load) and return the entry's name
    (``name``, or the server's own) and the entry."""
    spec = parse_server_spec(target)
    server = load_server(spec)
    source = str(Path(spec.source).resolve()) if spec.is_file else spec.source
    served = source if spec.attribute is None else f"{source}:{spec.attribute}"
    entry: dict[str, Any] = {"command": sys.executable, "args": ["-m", "mcptrio", "run", served]}
    if not spec.is_file:
        module = sys.modules.get(spec.source)
        found_in = getattr(module, "__file__", None) or ""
        # A module found only because we run here: the client starts elsewhere, so say where.
        if found_in.startswith(os.getcwd() + os.sep):
            entry["env"] = {"PYTHONPATH": os.getcwd()}
    return name or server.info.name, entry
