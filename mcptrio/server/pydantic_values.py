"""pydantic models in handlers' arguments and results, and in elicitation schemas.

mcptrio reads types with msgspec; pydantic v2 (``pip install mcptrio[pydantic]``) takes over
wherever a type is pydantic's to describe: a ``BaseModel`` (nested, generic, with validators), a
pydantic dataclass, ``Annotated[T, Field(...)]`` or an ``annotated_types`` constraint
(``Annotated[int, Gt(0)]``), a parameter whose default is ``Field(...)``, and any type holding
one of them (``list[Pet]``, ``Pet | None``, a dataclass with a ``Pet`` field).

- **Arguments** of a tool: the parameters pydantic describes get the schema pydantic writes
  (its ``title`` per property, its ``$defs``, merged with the ones of the other parameters at
  the root), are validated by one pydantic model built for them (validators run, defaults and
  ``default_factory`` apply) and reach the function as pydantic built them. A refusal is a tool
  error naming each failing field's path and pydantic's reason. The other parameters go through
  msgspec exactly as before, so a tool can mix both.
- **Results**: the ``outputSchema`` is pydantic's serialization schema, the value is validated
  against the annotation and dumped in JSON mode (``structuredContent``, and its JSON as text).
  A model returned by a tool without an ``outputSchema`` becomes its JSON text.
- **Text values** (a prompt's arguments, a URI template's variables) convert through pydantic in
  lax mode (``"3"`` becomes ``3``); text starting with ``{`` or ``[`` is parsed as JSON (a
  model, a list), and other text for a list splits on commas.
- **Elicitation**: ``ctx.elicit(message, Model)`` sends the model's schema and returns a
  validated instance.

pydantic is never imported by mcptrio: a type can only hold pydantic's classes once the user's
code has imported pydantic, so every check here first looks in ``sys.modules`` and costs nothing
to a server that does not use it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, get_args, get_origin, get_type_hints, is_typeddict

__all__ = [
    "PydanticArguments",
    "PydanticOutput",
    "encode_model",
    "field_is_required",
    "is_field_info",
    "model_class",
    "needs_pydantic",
    "pydantic_arguments",
    "pydantic_output",
    "pydantic_schema",
    "text_converter",
    "validated_model",
    "validation_reason",
]

_EMPTY = inspect.Parameter.empty
# The model every tool's pydantic arguments validate in: named so that no user model collides
# with it in the schema's $defs.
_ARGUMENTS_MODEL_NAME = "__mcptrio_tool_arguments__"


def _pydantic() -> Any:
    """The pydantic module when the user's code has imported it, else ``None``."""
    return sys.modules.get("pydantic")


def needs_pydantic(annotation: Any, default: Any = _EMPTY) -> bool:
    """Whether ``annotation`` (or a parameter's ``default``) is pydantic's to describe."""
    pydantic = _pydantic()
    if pydantic is None:
        return False
    if isinstance(default, pydantic.fields.FieldInfo):
        return True
    return _holds_pydantic(annotation, pydantic, set())


def _holds_pydantic(annotation: Any, pydantic: Any, seen: set[int]) -> bool:
    if id(annotation) in seen:
        return False
    seen.add(id(annotation))
    extras = annotation.__metadata__ if get_origin(annotation) is Annotated else ()
    if any(_is_pydantic_metadata(extra) for extra in extras):
        return True
    if isinstance(annotation, type):
        if issubclass(annotation, pydantic.BaseModel):
            return True
        if pydantic.dataclasses.is_pydantic_dataclass(annotation):
            return True
        if dataclasses.is_dataclass(annotation) or is_typeddict(annotation):
            return any(_holds_pydantic(t, pydantic, seen) for t in _field_types(annotation))
    return any(_holds_pydantic(arg, pydantic, seen) for arg in get_args(annotation))


def _is_pydantic_metadata(extra: Any) -> bool:
    module = type(extra).__module__
    return module.startswith(("pydantic.", "annotated_types"))


def _field_types(cls: type) -> list[Any]:
    try:
        return list(get_type_hints(cls, include_extras=True).values())
    except Exception:
        return []


@contextlib.contextmanager
def _refusal_as_type_error(pydantic: Any) -> Iterator[None]:
    """pydantic's refusal to describe a type (a ``RuntimeError`` of its own) as the
    ``TypeError`` every schema step raises for a type it cannot describe."""
    try:
        yield
    except pydantic.PydanticUserError as exc:
        raise TypeError(" ".join(str(exc).split())) from None


def validation_reason(exc: Any, prefix: str = "$") -> str:
    """A pydantic ``ValidationError`` as the model reads it: each failure's reason and the path
    of the field (``Input should be greater than 0 - at `$.pet.age```), one after another."""
    reasons = []
    for error in exc.errors(include_url=False):
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
        reasons.append(f"{error['msg']} - at `{prefix}{path}`" if path else error["msg"])
    return "; ".join(reasons)


@dataclass(frozen=True, slots=True)
class PydanticArguments:
    """The parameters of a tool that pydantic describes and validates."""

    #: Their names, in order.
    names: tuple[str, ...]
    #: The schema pydantic writes for each.
    properties: dict[str, Any]
    #: The ones the schema requires.
    required: frozenset[str]
    #: The ``$defs`` their schemas refer to.
    defs: dict[str, Any]
    #: ``sent -> values``: the validated values of these parameters (defaults filled) from what
    #: the client sent; raises ``ValueError`` with :func:`validation_reason`'s account.
    validate: Callable[[Mapping[str, Any]], dict[str, Any]]


def pydantic_arguments(
    parameters: Sequence[tuple[str, Any, Any]],
) -> PydanticArguments | None:
    """For the parameters ``(name, annotation, default)`` that pydantic describes, their
    schemas and validation; ``None`` when there are none."""
    chosen = [(n, a, d) for n, a, d in parameters if needs_pydantic(a, d)]
    if not chosen:
        return None
    pydantic = _pydantic()
    fields = {name: (annotation, ... if d is _EMPTY else d) for name, annotation, d in chosen}
    with _refusal_as_type_error(pydantic):
        model = pydantic.create_model(_ARGUMENTS_MODEL_NAME, **fields)
        schema = model.model_json_schema()
    names = tuple(name for name, _, _ in chosen)

    def validate(sent: Mapping[str, Any]) -> dict[str, Any]:
        try:
            parsed = model.model_validate({n: sent[n] for n in names if n in sent})
        except pydantic.ValidationError as exc:
            raise ValueError(validation_reason(exc)) from None
        return {name: getattr(parsed, name) for name in names}

    return PydanticArguments(
        names=names,
        properties=schema["properties"],
        required=frozenset(schema.get("required", ())),
        defs=schema.get("$defs", {}),
        validate=validate,
    )


@dataclass(frozen=True, slots=True)
class PydanticOutput:
    """A return annotation that pydantic describes."""

    #: pydantic's serialization schema of it (``$defs`` at its root).
    schema: dict[str, Any]
    #: The value checked against the annotation, as JSON-ready builtins; ``ValueError`` (with
    #: :func:`validation_reason`'s account) when it does not fit.
    dump: Callable[[Any], Any]


def pydantic_output(annotation: Any) -> PydanticOutput | None:
    """The schema and dump of a return annotation; ``None`` when pydantic does not describe it."""
    if not needs_pydantic(annotation):
        return None
    pydantic = _pydantic()
    with _refusal_as_type_error(pydantic):
        adapter = pydantic.TypeAdapter(annotation)
        schema = adapter.json_schema(mode="serialization")

    def dump(value: Any) -> Any:
        try:
            return adapter.dump_python(adapter.validate_python(value), mode="json")
        except pydantic.ValidationError as exc:
            raise ValueError(validation_reason(exc)) from None

    return PydanticOutput(schema, dump)


def pydantic_schema(annotation: Any) -> dict[str, Any]:
    """The JSON Schema pydantic writes for ``annotation`` (pydantic must be imported)."""
    pydantic = _pydantic()
    with _refusal_as_type_error(pydantic):
        schema: dict[str, Any] = pydantic.TypeAdapter(annotation).json_schema()
    return schema


def text_converter(annotation: Any) -> Callable[[str | Sequence[str]], Any] | None:
    """How a value given as text becomes ``annotation`` through pydantic (lax mode; text
    starting with ``{`` or ``[`` is parsed as JSON, other text for a list splits on commas);
    ``None`` when pydantic does not describe it. The validator is built at the first use (a
    tool's parameters, read the same way, never need it)."""
    if not needs_pydantic(annotation):
        return None
    pydantic = _pydantic()

    @functools.cache
    def adapter() -> tuple[Any, bool]:
        with _refusal_as_type_error(pydantic):
            built = pydantic.TypeAdapter(annotation)
            return built, built.json_schema().get("type") == "array"

    def convert(value: str | Sequence[str]) -> Any:
        validator, splits = adapter()
        try:
            if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
                return validator.validate_json(value)
            if splits and isinstance(value, str):
                value = value.split(",") if value else []
            return validator.validate_python(value)
        except pydantic.ValidationError as exc:
            raise ValueError(validation_reason(exc)) from None

    return convert


def encode_model(value: Any) -> Any:
    """msgspec's ``enc_hook`` for the JSON text of a result: a pydantic model as its JSON-mode
    dump; ``TypeError`` (msgspec's own words) for anything else."""
    pydantic = _pydantic()
    if pydantic is not None and isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json")
    raise TypeError(f"Encoding objects of type {type(value).__name__} is unsupported")


def is_field_info(extra: Any) -> bool:
    """Whether ``extra`` (an ``Annotated`` extra) is pydantic's ``Field(...)``."""
    pydantic = _pydantic()
    return pydantic is not None and isinstance(extra, pydantic.fields.FieldInfo)


def field_is_required(default: Any) -> bool:
    """Whether a parameter's default is a ``Field(...)`` without a default of its own."""
    return is_field_info(default) and bool(default.is_required())


def model_class(schema: Any) -> Any:
    """``schema`` when it is a pydantic model class (an elicitation schema), else ``None``."""
    pydantic = _pydantic()
    if pydantic is not None and isinstance(schema, type) and issubclass(schema, pydantic.BaseModel):
        return schema
    return None


def validated_model(model: Any, data: Mapping[str, Any]) -> Any:
    """``model`` validated from ``data``; ``ValueError`` with :func:`validation_reason`'s
    account."""
    try:
        return model.model_validate(data)
    except _pydantic().ValidationError as exc:
        raise ValueError(validation_reason(exc)) from None
