"""Tool transformation: what the gateway changes of an upstream tool before its clients see it.

Per upstream tool (:attr:`.upstream.Upstream.tools`, the configuration's ``"tools"`` key), a
:class:`ToolTransform` may

- re-describe it (``description``);
- hide it (``hidden``): neither listed nor callable, as if the upstream did not have it;
- fix arguments (``fixed``): each one is removed from the ``inputSchema`` the clients see (from
  ``properties`` and ``required``), so the model never sees it, and put into every call's
  arguments with its fixed value, which wins over a value a client sends anyway.

Renaming is the upstream's ``rename`` mapping (the configuration's ``"name"`` of a tool joins
it), so that names that could meet another upstream's are refused in one place
(:func:`~.names.check_apart`).

What can only be checked against the upstream's definition is checked when the tool is listed: a
fixed argument the tool does not have, or a value its schema refuses, leaves the tool out with a
warning naming the upstream and the tool (every call would be refused, or mean something other
than what the configuration says); a transformation naming a tool the upstream does not list is a
warning too.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import jsonschema.exceptions  # type: ignore[import-untyped]
import msgspec

from ..protocol.types import CallToolResult, Tool
from ..server.forwarding import ForwardedTool, ToolForwarder
from ..server.handler_context import HandlerContext
from .config_entries import checked_entry

__all__ = ["ToolTransform", "parse_transforms", "transformed_tool", "warn_unmatched"]

log = logging.getLogger("mcptrio.gateway")


@dataclass(frozen=True, kw_only=True)
class ToolTransform:
    """What the gateway changes of one upstream tool (see the module docstring)."""

    description: str | None = None
    hidden: bool = False
    fixed: Mapping[str, Any] = field(default_factory=dict)


def transformed_tool(
    upstream: str,
    tool: Tool,
    exposed: str,
    transform: ToolTransform | None,
    call: ToolForwarder,
    meta: dict[str, Any] | None = None,
    *,
    app_name: str | None = None,
) -> ForwardedTool | None:
    """The gateway's tool for upstream ``upstream``'s ``tool``, named ``exposed`` and answered by
    ``call`` (with the fixed arguments put in), or ``None``: hidden, or left out with a warning
    (a definition the gateway cannot serve, a fixed argument that does not fit). ``meta`` is
    its ``_meta`` as the gateway shows it (an MCP Apps view's URI namespaced), ``app_name`` the
    name a view calls it by (see :class:`~mcptrio.server.forwarding.ForwardedTool`)."""
    transform = transform or ToolTransform()
    if transform.hidden:
        return None
    schema = tool.input_schema
    if transform.fixed:
        problem = _misfit(schema, transform.fixed)
        if problem is not None:
            what = "Upstream %r, tool %r: %s; the tool is left out"
            log.warning(what, upstream, tool.name, problem)
            return None
        schema = _without(schema, transform.fixed)
        call = _with_fixed(call, transform.fixed)
    definition = msgspec.structs.replace(
        tool,
        name=exposed,
        description=tool.description if transform.description is None else transform.description,
        input_schema=schema,
        meta=tool.meta if meta is None else meta,
    )
    try:
        return ForwardedTool(definition, call, app_name=app_name)
    except ValueError as exc:
        log.warning("Left out of the gateway: %s", exc)
        return None


def warn_unmatched(upstream: str, transforms: Mapping[str, Any], listed: Iterable[str]) -> None:
    """Warn of each transformation (or rename) naming a tool upstream ``upstream`` did not list."""
    for name in sorted(set(transforms) - set(listed)):
        log.warning("Upstream %r lists no tool %r to transform or rename", upstream, name)


def _misfit(schema: Mapping[str, Any], fixed: Mapping[str, Any]) -> str | None:
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    for name, value in fixed.items():
        if name not in properties:
            return f"the fixed argument {name!r} is not one of its arguments"
        try:
            jsonschema.validate(value, properties[name], cls=jsonschema.Draft202012Validator)
        except jsonschema.exceptions.ValidationError as exc:
            return f"the fixed argument {name!r}: {exc.message}"
        except jsonschema.exceptions.SchemaError:
            continue  # the upstream's schema is not ours to judge: the upstream will
    return None


def _without(schema: Mapping[str, Any], fixed: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` without the fixed arguments (a copy; the upstream's is kept for validation)."""
    copy = dict(schema)
    copy["properties"] = {k: v for k, v in schema["properties"].items() if k not in fixed}
    required = schema.get("required")
    if isinstance(required, list):
        copy["required"] = [name for name in required if name not in fixed]
        if not copy["required"]:
            del copy["required"]
    return copy


def _with_fixed(call: ToolForwarder, fixed: Mapping[str, Any]) -> ToolForwarder:
    async def with_fixed(ctx: HandlerContext, arguments: dict[str, Any] | None) -> CallToolResult:
        return await call(ctx, {**(arguments or {}), **fixed})

    return with_fixed


_KEYS = {"name", "description", "hidden", "fixed"}


def parse_transforms(value: Any) -> tuple[dict[str, ToolTransform], dict[str, str]]:
    """A server's ``"tools"`` key of the configuration file: its transformations, and the
    renames among them (``"name"``); ``ValueError`` (or ``TypeError``) naming the tool and the
    key for anything else."""
    if value is None:
        return {}, {}
    if not isinstance(value, dict):
        raise TypeError("'tools' must be an object of tool names")
    transforms: dict[str, ToolTransform] = {}
    renames: dict[str, str] = {}
    for tool, entry in value.items():
        entry = checked_entry(f"tool {tool!r}", entry, _KEYS)
        for key, kind in (("name", str), ("description", str), ("hidden", bool), ("fixed", dict)):
            if key in entry and not isinstance(entry[key], kind):
                raise TypeError(f"tool {tool!r}: {key!r} must be a {_KIND_NAMES[kind]}")
        if "name" in entry:
            renames[tool] = entry["name"]
        transforms[tool] = ToolTransform(
            description=entry.get("description"),
            hidden=entry.get("hidden", False),
            fixed=entry.get("fixed", {}),
        )
    return transforms, renames


_KIND_NAMES: dict[type, str] = {str: "string", bool: "boolean", dict: "JSON object"}
