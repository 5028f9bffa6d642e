"""RFC 6570 URI templates: parse once, then expand values or match concrete URIs.

:class:`UriTemplate` implements all four levels of RFC 6570 for expansion: every operator
(none, ``+``, ``#``, ``.``, ``/``, ``;``, ``?``, ``&``), several variables per expression, prefix
modifiers (``{var:3}``) and explode (``{list*}``). :meth:`UriTemplate.expand` follows the
algorithm of the RFC's appendix A exactly.

Matching (:meth:`UriTemplate.match`) is the reverse: it takes a concrete URI and gives back the
percent-decoded variable values (so ``{var}`` gives ``../x`` for ``..%2Fx``: a value meant as a
file name is checked by its handler's annotation, see :mod:`.path_parameters`). Expansion is
not always invertible (``{x}{y}`` gives ``"ab"`` for many pairs), so matching follows a small
set of rules that keep it unambiguous and cheap:

- Each variable stops at the first character that can end it: its operator's separator, a URI
  delimiter its operator encodes (``/``, ``?``, ``#``), and the first character of whatever the
  template puts after it. ``{var}`` never spans a ``/``; ``{+var}`` may.
- One variable per template is *flexible* and may contain the character that follows it,
  found by backtracking: the first ``{+var}`` / ``{#var}`` if there is one, else the last
  variable (so ``{name}.json`` matches ``a.b.json`` with ``name="a.b"``).
- Query expressions (``{?a,b}`` and the ``{&c}`` that follow it) and path-style parameters
  (``{;x,y}``) are matched by name, in any order, and any of their variables may be missing.
  A name the template does not have makes the URI not match.
- An undefined variable is left out of the result. A variable of an expression without a leading
  character (``{x}``, ``{+x}``) is always defined: an empty match is ``""``.
- Exploded variables (``{/list*}``, ``{?list*}``) come back as lists of strings; everything else
  as a string. Associative arrays are not recovered (they come back as lists of ``key=value``).

Everything is compiled once, at construction, into one regular expression; :meth:`match` runs it
and decodes the groups. Because only one variable may backtrack, a failed match costs at worst
quadratic time in the URI's length, and URIs longer than :data:`MAX_MATCH_LENGTH` are refused
without trying.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias
from urllib.parse import quote, unquote

__all__ = ["MAX_MATCH_LENGTH", "TemplateValue", "UriTemplate"]

#: URIs longer than this never match a template (a bound on the cost of a failed match).
MAX_MATCH_LENGTH = 8192

#: What a variable may be given for expansion: a string (or number), a list, or a mapping.
TemplateValue: TypeAlias = str | int | float | Sequence[str] | Mapping[str, str]


@dataclass(frozen=True, slots=True)
class _Operator:
    """One row of the table in RFC 6570 appendix A."""

    char: str
    first: str
    sep: str
    named: bool
    ifemp: str
    allow_reserved: bool


_OPERATORS: dict[str, _Operator] = {
    "": _Operator("", "", ",", False, "", False),
    "+": _Operator("+", "", ",", False, "", True),
    "#": _Operator("#", "#", ",", False, "", True),
    ".": _Operator(".", ".", ".", False, "", False),
    "/": _Operator("/", "/", "/", False, "", False),
    ";": _Operator(";", ";", ";", True, "", False),
    "?": _Operator("?", "?", "&", True, "=", False),
    "&": _Operator("&", "&", "&", True, "=", False),
}
# Reserved by the RFC for future operators: a template using them is malformed.
_RESERVED_OPERATORS = frozenset("=,!@|")

_VARCHAR = r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})"
_VARSPEC = re.compile(rf"({_VARCHAR}(?:\.?{_VARCHAR})*)(?::([1-9][0-9]{{0,3}})|(\*))?")
_PCT_TRIPLET = re.compile(r"(%[0-9A-Fa-f]{2})")
_RESERVED_CHARS = ":/?#[]@!$&'()*+,;="


@dataclass(frozen=True, slots=True)
class _VarSpec:
    name: str
    prefix: int | None
    explode: bool


@dataclass(frozen=True, slots=True)
class _Expression:
    operator: _Operator
    varspecs: tuple[_VarSpec, ...]


_Part: TypeAlias = str | _Expression


def _encode(text: str, allow_reserved: bool) -> str:
    """Percent-encode ``text``: unreserved characters stay (and reserved ones, when allowed)."""
    if not allow_reserved:
        return quote(text, safe="")
    # Reserved expansion keeps existing pct-encoded triplets as they are (RFC 6570 §3.2.3).
    pieces = _PCT_TRIPLET.split(text)
    return "".join(
        piece if i % 2 else quote(piece, safe=_RESERVED_CHARS) for i, piece in enumerate(pieces)
    )


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    raise TypeError(f"URI template values must be strings or numbers, not {type(value).__name__}")


def _parse(template: str) -> tuple[_Part, ...]:
    parts: list[_Part] = []
    position = 0
    while position < len(template):
        start = template.find("{", position)
        end_of_literal = len(template) if start < 0 else start
        literal = template[position:end_of_literal]
        if "}" in literal:
            raise ValueError(
                f"Malformed URI template {template!r}: '}}' without '{{' at "
                f"{position + literal.index('}')}"
            )
        if literal:
            parts.append(literal)
        if start < 0:
            break
        close = template.find("}", start)
        if close < 0:
            raise ValueError(f"Malformed URI template {template!r}: unclosed '{{' at {start}")
        parts.append(_parse_expression(template, template[start + 1 : close], start))
        position = close + 1
    return tuple(parts)


def _parse_expression(template: str, body: str, at: int) -> _Expression:
    where = f"in expression {{{body}}} at {at} of URI template {template!r}"
    if not body:
        raise ValueError(f"Malformed URI template: empty expression {where}")
    op_char = body[0] if body[0] in _OPERATORS and body[0] else ""
    if body[0] in _RESERVED_OPERATORS:
        raise ValueError(f"Malformed URI template: reserved operator {body[0]!r} {where}")
    varspecs: list[_VarSpec] = []
    for text in body[len(op_char) :].split(","):
        found = _VARSPEC.fullmatch(text)
        if found is None:
            raise ValueError(f"Malformed URI template: bad variable {text!r} {where}")
        name, prefix, explode = found.groups()
        varspecs.append(_VarSpec(name, int(prefix) if prefix else None, explode is not None))
    return _Expression(_OPERATORS[op_char], tuple(varspecs))


# ---------------------------------------------------------------------------------- matching


@dataclass(frozen=True, slots=True)
class _Positional:
    """A regex group holding one variable of a none / ``+`` / ``#`` / ``.`` / ``/`` expression."""

    group: str
    varspec: _VarSpec
    sep: str


@dataclass(frozen=True, slots=True)
class _NamedRun:
    """A regex group holding a run of ``;`` expressions, or of ``?`` / ``&`` expressions."""

    group: str
    varspecs: dict[str, _VarSpec]
    pair_sep: str


_Capture: TypeAlias = _Positional | _NamedRun


def _char_class(excluded: str) -> str:
    if not excluded:
        return "."
    return "[^" + "".join(sorted({re.escape(c) for c in excluded})) + "]"


class _MatcherBuilder:
    """Turns parsed parts into one regular expression plus the meaning of each group."""

    def __init__(self, parts: tuple[_Part, ...]) -> None:
        self.parts = self._merge_named_runs(parts)
        self.captures: list[_Capture] = []
        self.flexible = self._pick_flexible()

    @staticmethod
    def _merge_named_runs(parts: tuple[_Part, ...]) -> list[_Part | list[_Expression]]:
        """Group adjacent ``;`` expressions, and a ``?`` / ``&`` with the ``&`` after it."""
        merged: list[_Part | list[_Expression]] = []
        for part in parts:
            previous = merged[-1] if merged else None
            if isinstance(part, _Expression) and part.operator.named:
                if isinstance(previous, list):
                    run_op = previous[0].operator.char
                    if (run_op == ";") == (part.operator.char == ";") and part.operator.char != "?":
                        previous.append(part)
                        continue
                merged.append([part])
            else:
                merged.append(part)
        return merged

    def _pick_flexible(self) -> int:
        """The index (in ``parts``) of the one part allowed to backtrack."""
        for index, part in enumerate(self.parts):
            if isinstance(part, _Expression) and part.operator.allow_reserved:
                return index
        for index in range(len(self.parts) - 1, -1, -1):
            if not isinstance(self.parts[index], str):
                return index
        return -1

    def _terminator(self, index: int) -> str:
        """The first character of what the template puts after part ``index`` ("" at the end)."""
        if index + 1 >= len(self.parts):
            return ""
        following = self.parts[index + 1]
        if isinstance(following, str):
            return _encode(following, True)[0]
        if isinstance(following, list):
            return following[0].operator.first
        return following.operator.first

    def _query_follows(self, index: int) -> bool:
        for part in self.parts[index + 1 :]:
            if isinstance(part, str) and "?" in part:
                return True
            if isinstance(part, list) and part[0].operator.char in "?&":
                return True
        return False

    def build(self) -> re.Pattern[str]:
        pieces: list[str] = []
        for index, part in enumerate(self.parts):
            if isinstance(part, str):
                pieces.append(re.escape(_encode(part, True)))
            elif isinstance(part, list):
                pieces.append(self._named_run(index, part))
            else:
                pieces.append(self._positional(index, part))
        return re.compile("".join(pieces), re.DOTALL)

    def _new_group(self) -> str:
        return f"g{len(self.captures)}"

    def _positional(self, index: int, expression: _Expression) -> str:
        op = expression.operator
        flexible = index == self.flexible
        several = len(expression.varspecs) > 1
        excluded = "" if op.char == "#" else "#"
        if op.char == "+":
            excluded += "?" if self._query_follows(index) else ""
        elif op.char != "#":
            excluded += "/?"
        terminator = self._terminator(index)
        patterns: list[str] = []
        for position, varspec in enumerate(expression.varspecs):
            own = excluded + (op.sep if several or varspec.explode else "")
            # Only the flexible variable (the first one of a flexible expression) may contain
            # the character that follows it; the others stop there, so nothing else backtracks.
            if not (flexible and position == 0):
                own += terminator
            cls = _char_class(own)
            quantifier = "*" if flexible else "*+"
            group = self._new_group()
            self.captures.append(_Positional(group, varspec, op.sep))
            body = f"{cls}{quantifier}"
            if varspec.explode:
                body = f"{body}(?:{re.escape(op.sep)}{body}){quantifier}"
            patterns.append(f"(?P<{group}>{body})")
        tail = ""
        for pattern in reversed(patterns[1:]):
            tail = f"(?:{re.escape(op.sep)}{pattern}{tail})?"
        full = patterns[0] + tail
        return f"(?:{re.escape(op.first)}{full})?" if op.first else full

    def _named_run(self, index: int, run: list[_Expression]) -> str:
        op = run[0].operator
        flexible = index == self.flexible
        varspecs: dict[str, _VarSpec] = {}
        for expression in run:
            for varspec in expression.varspecs:
                varspecs.setdefault(varspec.name, varspec)
        excluded = ";/?#" if op.char == ";" else "&#"
        if not flexible:
            excluded += self._terminator(index)
        cls = _char_class(excluded)
        quantifier = "*" if flexible else "*+"
        group = self._new_group()
        self.captures.append(_NamedRun(group, varspecs, op.sep))
        if op.char == "?":
            pairs = f"{cls}{quantifier}(?:&{cls}{quantifier}){quantifier}"
            return f"(?:\\?(?P<{group}>{pairs}))?"
        sep = re.escape(op.sep)
        return f"(?P<{group}>(?:{sep}{cls}{quantifier}){quantifier})"


def _decode(raw: str) -> str:
    return unquote(raw, errors="strict")


def _merge(occurrences: list[tuple[str | list[str], _VarSpec]]) -> str | list[str] | None:
    """One value from every occurrence of a variable; ``None`` if they disagree."""
    full = [value for value, spec in occurrences if spec.prefix is None]
    if full:
        value = full[0]
        if any(other != value for other in full[1:]):
            return None
    else:
        value = max((v for v, _ in occurrences), key=len)
    for other, spec in occurrences:
        if spec.prefix is not None:
            if not isinstance(value, str) or not isinstance(other, str):
                return None
            if len(other) > spec.prefix or value[: spec.prefix] != other:
                return None
    return value


class UriTemplate:
    """An RFC 6570 URI template, parsed and compiled once.

    ``UriTemplate("file:///{+path}{?rev}")`` raises :class:`ValueError` when the template is
    malformed (unbalanced braces, an empty expression, a reserved operator, a bad variable name
    or prefix). Templates are immutable, hashable and compare by their text.
    """

    __slots__ = ("_captures", "_parts", "_pattern", "template", "variables")

    def __init__(self, template: str) -> None:
        self.template = template
        self._parts = _parse(template)
        names: dict[str, None] = {}
        for part in self._parts:
            if isinstance(part, _Expression):
                for varspec in part.varspecs:
                    names.setdefault(varspec.name, None)
        #: The variable names, in order of first appearance.
        self.variables: tuple[str, ...] = tuple(names)
        builder = _MatcherBuilder(self._parts)
        self._pattern = builder.build()
        self._captures = tuple(builder.captures)

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"

    def __str__(self) -> str:
        return self.template

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UriTemplate) and other.template == self.template

    def __hash__(self) -> int:
        return hash(self.template)

    @property
    def is_literal(self) -> bool:
        """Whether the template has no expression at all (it is a plain URI)."""
        return not self.variables

    # ------------------------------------------------------------------------------ expand

    def expand(self, values: Mapping[str, TemplateValue | None]) -> str:
        """Expand the template with ``values`` (RFC 6570 §3; missing or ``None`` = undefined).

        Lists and mappings that are empty count as undefined, as the RFC says. Raises
        :class:`TypeError` for a value of another type, and :class:`ValueError` for a prefix
        modifier on a list or mapping.
        """
        out: list[str] = []
        for part in self._parts:
            if isinstance(part, str):
                out.append(_encode(part, True))
            else:
                out.append(_expand_expression(part, values))
        return "".join(out)

    # ------------------------------------------------------------------------------ match

    def match(self, uri: str) -> dict[str, str | list[str]] | None:
        """The decoded variable values if ``uri`` is an expansion of this template, else ``None``.

        See the module docstring for how ambiguity is resolved.
        """
        if len(uri) > MAX_MATCH_LENGTH:
            return None
        found = self._pattern.fullmatch(uri)
        if found is None:
            return None
        occurrences: dict[str, list[tuple[str | list[str], _VarSpec]]] = {}
        try:
            for capture in self._captures:
                raw = found.group(capture.group)
                if raw is None:
                    continue
                if isinstance(capture, _Positional):
                    value: str | list[str] = (
                        [_decode(item) for item in raw.split(capture.sep)]
                        if capture.varspec.explode
                        else _decode(raw)
                    )
                    occurrences.setdefault(capture.varspec.name, []).append(
                        (value, capture.varspec)
                    )
                elif not _read_pairs(raw, capture, occurrences):
                    return None
        except UnicodeDecodeError:
            return None
        result: dict[str, str | list[str]] = {}
        for name, seen in occurrences.items():
            merged = _merge(seen)
            if merged is None:
                return None
            result[name] = merged
        return result


def _read_pairs(
    raw: str,
    run: _NamedRun,
    occurrences: dict[str, list[tuple[str | list[str], _VarSpec]]],
) -> bool:
    """Assign the ``name=value`` pairs of a named run; ``False`` for an unknown or repeated name."""
    collected: dict[str, str | list[str]] = {}
    for pair in raw.split(run.pair_sep):
        if not pair:
            continue
        name, _, raw_value = pair.partition("=")
        varspec = run.varspecs.get(name)
        if varspec is None:
            return False
        decoded = _decode(raw_value)
        if varspec.explode:
            existing = collected.setdefault(name, [])
            assert isinstance(existing, list)
            existing.append(decoded)
        elif name in collected:
            return False
        else:
            collected[name] = decoded
    for name, collected_value in collected.items():
        occurrences.setdefault(name, []).append((collected_value, run.varspecs[name]))
    return True


def _expand_expression(expression: _Expression, values: Mapping[str, Any]) -> str:
    op = expression.operator
    out: list[str] = []
    for varspec in expression.varspecs:
        value = values.get(varspec.name)
        if value is None:
            continue
        if isinstance(value, str | int | float):
            text = _scalar(value)
            if varspec.prefix is not None:
                text = text[: varspec.prefix]
            item = _encode(text, op.allow_reserved)
            if op.named:
                item = varspec.name + ("=" + item if text else op.ifemp)
        elif isinstance(value, Mapping):
            if not value:
                continue
            item = _expand_composite(
                varspec, op, [(_scalar(k), _scalar(v)) for k, v in value.items()]
            )
        elif isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
            if not value:
                continue
            item = _expand_composite(varspec, op, [(None, _scalar(v)) for v in value])
        else:
            raise TypeError(
                f"URI template variable {varspec.name!r}: expected a string, number, list or "
                f"mapping, not {type(value).__name__}"
            )
        out.append(item)
    if not out:
        return ""
    return op.first + op.sep.join(out)


def _expand_composite(
    varspec: _VarSpec, op: _Operator, members: list[tuple[str | None, str]]
) -> str:
    if varspec.prefix is not None:
        raise ValueError(
            f"URI template variable {varspec.name!r}: a prefix modifier cannot apply to a "
            "list or mapping"
        )

    def enc(text: str) -> str:
        return _encode(text, op.allow_reserved)

    if not varspec.explode:
        flat: list[str] = []
        for key, member in members:
            if key is not None:
                flat.append(enc(key))
            flat.append(enc(member))
        joined = ",".join(flat)
        return f"{varspec.name}={joined}" if op.named else joined
    exploded: list[str] = []
    for key, member in members:
        if key is None:
            if op.named:
                exploded.append(varspec.name + ("=" + enc(member) if member else op.ifemp))
            else:
                exploded.append(enc(member))
        elif op.named:
            exploded.append(enc(key) + ("=" + enc(member) if member else op.ifemp))
        else:
            exploded.append(enc(key) + "=" + enc(member))
    return op.sep.join(exploded)
