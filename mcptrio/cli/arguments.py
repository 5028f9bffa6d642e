"""The arguments of ``call`` and ``prompt`` on the command line: ``NAME=VALUE`` words, typed by
the tool's ``inputSchema``, ``NAME:=JSON`` words (httpie's convention), and one JSON object.

``a=1`` is the integer 1 when the schema says ``a`` is an integer, the string ``"1"`` when it
says string (or says nothing), and an error naming ``a`` and the type when ``VALUE`` cannot be
one. ``a:=[1, 2]`` is taken as JSON, whatever the schema says (the server checks it). A JSON
object given before the ``NAME=VALUE`` words is their base: a word sets its name over it.

A word is an argument when it starts with a name made of letters, digits, ``_``, ``-`` and
``.`` (not a ``-``) followed by ``=`` or ``:=``. That is what tells a tool's arguments from the
server's command they follow (``mcptrio call -- python server.py add a=1``); a name outside
that set is given in the JSON object.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import usage_error

__all__ = ["Assignment", "is_assignment", "read_assignments", "string_arguments", "typed_arguments"]

_ASSIGNMENT = re.compile(r"(?P<name>[A-Za-z0-9_.][A-Za-z0-9_.\-]*)(?P<json>:?)=(?P<value>.*)", re.S)
_INTEGER = re.compile(r"-?(0|[1-9][0-9]*)")
_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")

# The order values are tried in when a schema allows several types: the string, which any
# value is, comes last.
_TYPE_ORDER = ("null", "boolean", "integer", "number", "array", "object", "string")
_TYPE_NAMES = {
    "null": "null",
    "boolean": "a boolean (true or false)",
    "integer": "an integer",
    "number": "a number",
    "array": "a JSON array",
    "object": "a JSON object",
    "string": "a string",
}


@dataclass(frozen=True)
class Assignment:
    """One ``NAME=VALUE`` word (``value`` as written), or ``NAME:=JSON`` (``value`` decoded)."""

    name: str
    value: Any
    is_json: bool


def is_assignment(word: str) -> bool:
    """Whether ``word`` is a ``NAME=VALUE`` or ``NAME:=JSON`` argument."""
    return _ASSIGNMENT.fullmatch(word) is not None


def read_assignments(words: Iterable[str]) -> list[Assignment]:
    """``words`` as assignments; a word that is none, bad JSON after ``:=`` or a name given
    twice is a usage error."""
    assignments: list[Assignment] = []
    seen: set[str] = set()
    for word in words:
        match = _ASSIGNMENT.fullmatch(word)
        if match is None:
            raise usage_error(
                f"{word!r} is not an argument: give NAME=VALUE, NAME:=JSON or one JSON object"
            )
        name, text = match["name"], match["value"]
        if name in seen:
            raise usage_error(f"argument {name} is given twice")
        seen.add(name)
        if match["json"]:
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                message = f"argument {name}: {name}:= takes JSON ({exc}): {text!r}"
                raise usage_error(message) from None
            assignments.append(Assignment(name, value, is_json=True))
        else:
            assignments.append(Assignment(name, text, is_json=False))
    return assignments


def typed_arguments(
    tool: str,
    base: Mapping[str, Any] | None,
    assignments: list[Assignment],
    input_schema: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """``base`` with each assignment set over it, ``NAME=VALUE`` converted to the type
    ``input_schema`` gives ``NAME`` (``None``: the tool is not listed, and values stay strings).
    A value that cannot be converted is a usage error naming the tool, the argument and the
    type."""
    arguments = dict(base or {})
    schema = input_schema or {}
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    for assignment in assignments:
        name, value = assignment.name, assignment.value
        if not assignment.is_json:
            types = _types(properties.get(name, {}), schema, depth=0)
            converted = _convert(value, types)
            if converted is _REFUSED:
                expected = " or ".join(_TYPE_NAMES[kind] for kind in types)
                raise usage_error(
                    f"tool {tool}, argument {name}: expected {expected}, got {value!r}"
                    f" ({name}:=JSON gives any JSON value)"
                )
            value = converted
        arguments[name] = value
    return arguments


def string_arguments(
    base: Mapping[str, Any] | None, assignments: list[Assignment]
) -> dict[str, str] | None:
    """A prompt's arguments: ``base`` with the assignments set over it, every value a string
    (a ``NAME:=JSON`` too: a JSON string)."""
    if base is None and not assignments:
        return None
    arguments = dict(base or {})
    arguments.update((assignment.name, assignment.value) for assignment in assignments)
    for name, value in arguments.items():
        if not isinstance(value, str):
            raise usage_error(f"prompt arguments are strings: {name} is {json.dumps(value)}")
    return arguments


_REFUSED = object()


def _convert(text: str, types: list[str]) -> Any:
    """``text`` as the first of ``types`` it can be (``[]``: any, kept as a string), or
    ``_REFUSED``."""
    if not types:
        return text
    for kind in types:
        match kind:
            case "null" if text == "null":
                return None
            case "boolean" if text.lower() in ("true", "false"):
                return text.lower() == "true"
            case "integer" if _INTEGER.fullmatch(text):
                return int(text)
            case "number" if _NUMBER.fullmatch(text):
                return json.loads(text)
            case "array" | "object":
                try:
                    value = json.loads(text)
                except ValueError:
                    continue
                if isinstance(value, list if kind == "array" else dict):
                    return value
            case "string":
                return text
    return _REFUSED


def _types(schema: Any, root: Mapping[str, Any], *, depth: int) -> list[str]:
    """The JSON types ``schema`` allows, in the order :func:`_convert` tries them; ``[]`` when
    it does not say (or says anything). ``$ref`` is followed within the tool's schema."""
    if not isinstance(schema, Mapping) or depth > 20:
        return []
    found: set[str] = set()
    declared = schema.get("type")
    if isinstance(declared, str):
        found.add(declared)
    elif isinstance(declared, list):
        found.update(kind for kind in declared if isinstance(kind, str))
    for values in (schema.get("enum"), [schema["const"]] if "const" in schema else None):
        if isinstance(values, list):
            found.update(_type_of(value) for value in values)
    for key in ("anyOf", "oneOf", "allOf"):
        members = schema.get(key)
        if isinstance(members, list):
            for member in members:
                member_types = _types(member, root, depth=depth + 1)
                if not member_types:
                    return []
                found.update(member_types)
    reference = schema.get("$ref")
    if isinstance(reference, str):
        referenced = _types(_resolve(reference, root), root, depth=depth + 1)
        if not referenced:
            return []
        found.update(referenced)
    return [kind for kind in _TYPE_ORDER if kind in found]


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "string"


def _resolve(reference: str, root: Mapping[str, Any]) -> Any:
    """The schema a local ``#/...`` reference points at, or ``None``."""
    if not reference.startswith("#/"):
        return None
    target: Any = root
    for part in reference[2:].split("/"):
        if not isinstance(target, Mapping):
            return None
        target = target.get(part.replace("~1", "/").replace("~0", "~"))
    return target
