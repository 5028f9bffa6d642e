"""Why a type in a user's signature cannot be described, said about the user's own code.

A tool's parameters and return annotation become JSON Schema at registration. When one cannot,
the ``ValueError`` names the function, the file and line that define it, the parameter (or the
return type), the type that has no schema (the innermost one: ``Opaque`` in
``list[Opaque] | None``), and the kinds of types that are supported, so that the user fixes their
line rather than reading the schema generator's internals.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable
from typing import Any, get_args, get_type_hints, is_typeddict

import msgspec

from .handler import Handler, underlying_callable
from .pydantic_values import needs_pydantic, pydantic_schema

__all__ = ["SCHEMA_ERRORS", "SUPPORTED_TYPES", "describes", "parameter_refusal", "return_refusal"]

# The module and enclosing-scope prefixes of a type's repr (``typing.``, ``app.models.``,
# ``build.<locals>.``).
_QUALIFIERS = re.compile(r"(?:[A-Za-z_][\w]*|<locals>)\.(?=[A-Za-z_<])")

#: The kinds of types a tool's parameters and structured results may have, in words.
SUPPORTED_TYPES = (
    "str, int, float, bool, None, bytes, datetime, date, time, timedelta, UUID, Decimal, enums,"
    " Literal, msgspec Structs, dataclasses, attrs classes, TypedDicts, NamedTuples, and lists,"
    " tuples, sets, dicts and unions of these, with Annotated[T, msgspec.Meta(...)] constraints;"
    " and pydantic models, pydantic dataclasses and Field(...) constraints (pip install"
    " mcptrio[pydantic])"
)


#: What describing a type may raise: ``NameError`` when a class's field hints name a type its
#: module does not define (a class local to a function, under ``from __future__ import
#: annotations``).
SCHEMA_ERRORS = (TypeError, ValueError, KeyError, NameError)


def describes(annotation: Any) -> bool:
    """Whether msgspec writes a JSON Schema for ``annotation``."""
    return _schema_error(annotation) is None


def parameter_refusal(owner: str, handler: Handler, exc: Exception) -> str:
    """The message for a tool whose parameters could not be described (``exc`` says why)."""
    where = _where(handler.fn)
    for parameter in handler.parameters:
        error = _schema_error(parameter.annotation)
        if error is not None:
            return (
                f"{owner}: parameter {parameter.name!r} of {where} has type"
                f" {_refused_phrase(parameter.annotation, error)}; supported types are"
                f" {SUPPORTED_TYPES}"
            )
    return f"{owner}: cannot describe the parameters of {where}: {_one_line(exc)}"


def return_refusal(owner: str, fn: Callable[..., Any] | None, annotation: Any) -> str:
    """The message for a tool (``fn``) whose return annotation cannot be described."""
    of = "its return type" if fn is None else f"the return type of {_where(fn)}"
    error = _schema_error(annotation) or TypeError()
    return (
        f"{owner}: {of} is {_refused_phrase(annotation, error)}; return one of"
        f" {SUPPORTED_TYPES} (or content: str, content blocks, Image/Audio/File), or pass"
        " structured_output=False"
    )


def _schema_error(annotation: Any) -> Exception | None:
    try:
        if needs_pydantic(annotation):
            pydantic_schema(annotation)
        else:
            msgspec.json.schema(annotation)
    except SCHEMA_ERRORS as exc:
        return exc
    return None


def _refused_phrase(annotation: Any, error: Exception) -> str:
    if isinstance(error, NameError):
        return (
            f"{_type_name(annotation)}, whose field hints do not resolve ({error}): define the"
            " types they name at the top level of the class's module"
        )
    culprit = _culprit(annotation, set())
    if culprit is None or culprit is annotation:
        return f"{_type_name(annotation)}, which has no JSON Schema"
    return f"{_type_name(annotation)}, and {_type_name(culprit)} in it has no JSON Schema"


def _culprit(annotation: Any, seen: set[int]) -> Any:
    """The innermost type in ``annotation`` that has no schema (``None`` if none is found)."""
    if id(annotation) in seen or describes(annotation):
        return None
    seen.add(id(annotation))
    for inner in (*get_args(annotation), *_field_types(annotation)):
        found = _culprit(inner, seen)
        if found is not None:
            return found
    return annotation


def _field_types(annotation: Any) -> list[Any]:
    """The field types of a class with fields (a Struct, dataclass, TypedDict, pydantic model)."""
    if not isinstance(annotation, type):
        return []
    model_fields = getattr(annotation, "model_fields", None)
    if isinstance(model_fields, dict) and needs_pydantic(annotation):
        # A pydantic model resolved its hints already (in scopes get_type_hints cannot see).
        return [field.annotation for field in model_fields.values()]
    is_struct = issubclass(annotation, msgspec.Struct)
    if not (is_struct or dataclasses.is_dataclass(annotation) or is_typeddict(annotation)):
        return []
    try:
        return list(get_type_hints(annotation, include_extras=True).values())
    except Exception:
        return []


def _where(fn: Callable[..., Any]) -> str:
    """``name() in file:line`` for the user's function, as far as it can be found."""
    target = underlying_callable(fn)
    name = getattr(target, "__qualname__", None) or repr(fn)
    try:
        path = inspect.getsourcefile(target)
        _, line = inspect.getsourcelines(target)
    except (TypeError, OSError):
        return f"{name}()"
    return f"{name}() in {path}:{line}" if path else f"{name}()"


def _type_name(annotation: Any) -> str:
    """``annotation`` as written in the source: ``list[Pet] | None``, not its dotted paths."""
    if isinstance(annotation, type) and not get_args(annotation):
        return annotation.__name__
    return _QUALIFIERS.sub("", repr(annotation))


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())
