"""Where each MCP client keeps the servers it starts, per platform, and in what shape.

=================  ==========================================================  ==============
client             file (user scope)                                           servers under
=================  ==========================================================  ==============
``claude-desktop`` macOS ``~/Library/Application Support/Claude/``,            ``mcpServers``
                   Windows ``%APPDATA%\\Claude\\``, Linux
                   ``$XDG_CONFIG_HOME/Claude/`` (``~/.config``);
                   ``claude_desktop_config.json``
``claude-code``    ``~/.claude.json`` (``$CLAUDE_CONFIG_DIR/.claude.json``     ``mcpServers``
                   when set), the top-level ``mcpServers`` (user scope)
``cursor``         ``~/.cursor/mcp.json``                                      ``mcpServers``
``vscode``         the user profile's ``mcp.json``: macOS                      ``servers``
                   ``~/Library/Application Support/Code/User/``, Windows
                   ``%APPDATA%\\Code\\User\\``, Linux
                   ``$XDG_CONFIG_HOME/Code/User/`` (``~/.config``)
=================  ==========================================================  ==============

Claude Code and VS Code entries carry ``"type": "stdio"`` (VS Code requires it, and
``claude mcp add`` writes it); Claude Desktop and Cursor entries have no type. The sources and
the dates they were checked are in ``docs/explanation/command-line.md``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

__all__ = ["CLIENTS", "ClientConfig", "client_config"]

#: The clients ``mcptrio install`` knows, as the command line names them.
CLIENTS: Final = ("claude-desktop", "claude-code", "cursor", "vscode")


@dataclass(frozen=True)
class ClientConfig:
    """One client's configuration file: where it is and how it lists servers."""

    #: The client's name for people ("Claude Desktop").
    title: str
    path: Path
    #: The top-level member holding the servers, by name.
    servers_key: str
    #: Whether an entry says ``"type": "stdio"``.
    typed: bool

    def entry(self, entry: Mapping[str, Any]) -> dict[str, Any]:
        """``entry`` (command, args, env) as this client writes it."""
        return {"type": "stdio", **entry} if self.typed else dict(entry)


def client_config(
    client: str,
    *,
    platform: str = sys.platform,
    environ: Mapping[str, str] = os.environ,
    home: Path | None = None,
) -> ClientConfig:
    """The configuration file of ``client`` (one of :data:`CLIENTS`) for the user ``home``
    (default: this user's) on ``platform`` (``sys.platform``'s spelling), with the variables
    of ``environ`` that move it (``APPDATA``, ``XDG_CONFIG_HOME``, ``CLAUDE_CONFIG_DIR``)."""
    home = Path.home() if home is None else home
    if client == "claude-desktop":
        folder = _application_folder(platform, environ, home) / "Claude"
        path = folder / "claude_desktop_config.json"
        return ClientConfig("Claude Desktop", path, "mcpServers", typed=False)
    if client == "claude-code":
        moved = environ.get("CLAUDE_CONFIG_DIR")
        path = Path(moved) / ".claude.json" if moved else home / ".claude.json"
        return ClientConfig("Claude Code", path, "mcpServers", typed=True)
    if client == "cursor":
        return ClientConfig("Cursor", home / ".cursor" / "mcp.json", "mcpServers", typed=False)
    if client == "vscode":
        path = _application_folder(platform, environ, home) / "Code" / "User" / "mcp.json"
        return ClientConfig("VS Code", path, "servers", typed=True)
    raise ValueError(f"unknown client {client!r}: use one of {', '.join(CLIENTS)}")


def _application_folder(platform: str, environ: Mapping[str, str], home: Path) -> Path:
    """Where desktop applications keep their settings: ``~/Library/Application Support`` on
    macOS, ``%APPDATA%`` on Windows, the XDG configuration folder elsewhere."""
    if platform == "darwin":
        return home / "Library" / "Application Support"
    if platform == "win32":
        appdata = environ.get("APPDATA")
        return Path(appdata) if appdata else home / "AppData" / "Roaming"
    # The XDG base directory spec ignores a relative XDG_CONFIG_HOME.
    configured = environ.get("XDG_CONFIG_HOME", "")
    return Path(configured) if os.path.isabs(configured) else home / ".config"
