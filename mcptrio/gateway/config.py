"""The gateway's configuration file: the ``mcpServers`` JSON of Claude Desktop, Cursor and VS
Code, with a few keys of the gateway's own.

::

    {
      "mcpServers": {
        "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]},
        "notes": {"command": "python", "args": ["notes.py"], "env": {"NOTES_DIR": "/tmp/notes"}},
        "search": {"url": "http://127.0.0.1:8000/mcp", "headers": {"Authorization": "Bearer x"}},
        "legacy": {"url": "http://127.0.0.1:9000/sse", "type": "sse"},
        "live": {"url": "ws://127.0.0.1:9100/mcp"}
      }
    }

Each server is either a command (``command``, ``args``, ``env``, ``cwd``: stdio) or a ``url``
with optional ``headers`` (``http(s)://``: Streamable HTTP, falling back to the legacy HTTP+SSE
endpoint, so ``"type": "sse"`` needs nothing more; ``ws(s)://``: WebSocket). VS Code's
``"servers"`` is read as ``"mcpServers"`` is. Decisions:

- ``env`` is added to the gateway's own environment (the server still finds ``PATH``), as
  Claude Desktop does;
- a relative ``cwd`` is taken from the configuration file's directory, and a command without
  ``cwd`` runs there, so a file and the servers it names can move together;
- ``"disabled": true`` leaves a server out;
- a ``command`` with spaces that names no file and no program on ``PATH`` (``"mcptrio run
  notes.py"``) is an error that shows the ``command`` and ``args`` to write instead (see
  :mod:`.commands`);
- servers whose tool names could meet are an error naming both (see
  :func:`~.names.check_apart`): the same namespace, a namespace that another one begins with
  before the ``_`` separator (``a`` and ``a_b``: ``a``'s tool ``b_c`` and ``a_b``'s ``c`` would
  both be ``a_b_c``), a rename into another server's namespace.

The gateway's own keys, per server: ``namespace``, ``include``, ``exclude`` and ``rename``,
``timeout`` and ``connectTimeout`` (seconds), ``protocolVersion`` (pin one revision; see
:class:`~.upstream.Upstream`), ``tools`` (per upstream tool: ``name``, ``description``,
``hidden``, ``fixed`` arguments; see :mod:`.transforms`). Anything else that is not understood
is an error naming the key, rather than a silently ignored mistake; ``type`` is checked against
the target it names.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict

from ..client import Revisions, Target, http, stdio, websocket
from ..protocol.errors import LocalError
from ..protocol.revisions import SUPPORTED
from .commands import check_command
from .names import check_apart
from .tool_search import ToolSearch, parse_tool_search
from .toolsets import Toolset, parse_toolsets
from .transforms import parse_transforms
from .upstream import Upstream

__all__ = [
    "ConfigError",
    "GatewayOptions",
    "load_config",
    "load_gateway_options",
    "parse_config",
    "parse_gateway_options",
]

_COMMAND_KEYS = {"command", "args", "env", "cwd"}
_URL_KEYS = {"url", "headers"}
_OWN_KEYS = {
    "namespace",
    "include",
    "exclude",
    "rename",
    "timeout",
    "connectTimeout",
    "protocolVersion",
    "disabled",
    "type",
    "description",
}
# Tool transformation (:mod:`.transforms`): {"tools": {"<upstream tool>": {"name": ...,
# "description": ..., "hidden": ..., "fixed": {...}}}}.
_TRANSFORM_KEYS = {"tools"}
_TYPES = {"stdio": "command", "http": "url", "streamable-http": "url", "sse": "url", "ws": "url"}


class ConfigError(LocalError, ValueError):
    """The configuration is not valid; the message names the server and the key."""


def load_config(path: str | os.PathLike[str]) -> list[Upstream]:
    """The upstreams a configuration file names (see the module docstring)."""
    return load_gateway_options(path)["upstreams"]


def _read(file: Path) -> Any:
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{file}: {exc}") from exc


def parse_config(data: Any, *, base: Path | None = None) -> list[Upstream]:
    """The upstreams of a parsed configuration; ``base`` is where relative paths start."""
    if not isinstance(data, dict):
        raise ConfigError("The configuration must be a JSON object")
    servers = data.get("mcpServers", data.get("servers"))
    if not isinstance(servers, dict):
        raise ConfigError('The configuration needs an "mcpServers" object')
    upstreams = []
    for name, entry in servers.items():
        if not isinstance(entry, dict):
            raise ConfigError(f"Server {name!r}: must be an object")
        if entry.get("disabled") is True:
            continue
        try:
            upstreams.append(_upstream(name, entry, base or Path.cwd()))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"Server {name!r}: {exc}") from None
    for n, later in enumerate(upstreams):
        for earlier in upstreams[:n]:
            try:
                check_apart(earlier, later)
            except ValueError as exc:
                raise ConfigError(str(exc)) from None
    return upstreams


# The file's own top-level keys: "toolsets" (:mod:`.toolsets`), "toolSearch" (:mod:`.tool_search`).


class GatewayOptions(TypedDict):
    """What a configuration file gives :class:`~.gateway.Gateway`: its keywords."""

    upstreams: list[Upstream]
    toolsets: list[Toolset]
    tool_search: ToolSearch | None


def load_gateway_options(path: str | os.PathLike[str]) -> GatewayOptions:
    """The :class:`~.gateway.Gateway` keywords of a configuration file: ``Gateway(name,
    **load_gateway_options(path))``."""
    file = Path(path)
    return parse_gateway_options(_read(file), base=file.resolve().parent)


def parse_gateway_options(data: Any, *, base: Path | None = None) -> GatewayOptions:
    """The :class:`~.gateway.Gateway` keywords of a parsed configuration."""
    upstreams = parse_config(data, base=base)
    try:
        toolsets = parse_toolsets(data.get("toolsets"), (u.name for u in upstreams))
        tool_search = parse_tool_search(data.get("toolSearch"))
    except (TypeError, ValueError) as exc:
        raise ConfigError(str(exc)) from None
    return GatewayOptions(upstreams=upstreams, toolsets=toolsets, tool_search=tool_search)


def _upstream(name: str, entry: Mapping[str, Any], base: Path) -> Upstream:
    unknown = set(entry) - _COMMAND_KEYS - _URL_KEYS - _OWN_KEYS - _TRANSFORM_KEYS
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(sorted(map(repr, unknown)))}")
    kind = entry.get("type")
    if kind is not None and kind not in _TYPES:
        raise ValueError(f"unknown type {kind!r} (known: {', '.join(_TYPES)})")
    if "command" in entry and "url" in entry:
        raise ValueError('give either "command" or "url", not both')
    if "command" in entry:
        if kind is not None and _TYPES[kind] != "command":
            raise ValueError(f'type {kind!r} needs a "url"')
        target = _command(entry, base)
    elif "url" in entry:
        if kind is not None and _TYPES[kind] != "url":
            raise ValueError(f'type {kind!r} needs a "command"')
        target = _url(entry)
    else:
        raise ValueError('needs a "command" or a "url"')
    version = entry.get("protocolVersion")
    if version is not None and version not in SUPPORTED:
        raise ValueError(f"unknown protocolVersion {version!r}")
    transforms, renames = parse_transforms(entry.get("tools"))
    rename = {**(_typed(entry, "rename", dict) or {}), **renames}
    return Upstream(
        name=name,
        target=target,
        namespace=_typed(entry, "namespace", str),
        include=_strings(entry, "include"),
        exclude=_strings(entry, "exclude") or (),
        rename=rename,
        tools=transforms,
        revisions=None if version is None else Revisions(protocol_version=version),
        timeout=float(_typed(entry, "timeout", (int, float)) or 300.0),
        connect_timeout=float(_typed(entry, "connectTimeout", (int, float)) or 30.0),
    )


def _command(entry: Mapping[str, Any], base: Path) -> Target:
    command = _typed(entry, "command", str)
    args = _strings(entry, "args") or []
    env = _typed(entry, "env", dict)
    if env is not None and not all(isinstance(v, str) for v in env.values()):
        raise TypeError('"env" values must be strings')
    cwd = _typed(entry, "cwd", str)
    folder = base if cwd is None else base / cwd
    env = None if env is None else {**os.environ, **env}
    check_command(command or "", args, folder, env)
    return stdio([command, *args], env=env, cwd=folder)


def _url(entry: Mapping[str, Any]) -> Target:
    url = _typed(entry, "url", str) or ""
    headers = _typed(entry, "headers", dict)
    if url.startswith(("ws://", "wss://")):
        return websocket(url, headers=headers)
    return http(url, headers=headers)


def _typed(entry: Mapping[str, Any], key: str, kind: Any) -> Any:
    value = entry.get(key)
    if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
        raise TypeError(f"{key!r} has the wrong type ({type(value).__name__})")
    return value


def _strings(entry: Mapping[str, Any], key: str) -> list[str] | None:
    value: list[str] | None = _typed(entry, key, list)
    if value is not None and not all(isinstance(v, str) for v in value):
        raise TypeError(f"{key!r} must be a list of strings")
    return value
