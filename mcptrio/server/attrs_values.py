"""attrs classes in tools' arguments and results, through cattrs.

msgspec describes an attrs class (its fields become the schema, as a Struct's do) and builds one
from JSON on its own, but it sets the fields directly: an attribute's ``converter`` does not
run, and neither does a ``cattrs`` hook you registered for your types. When ``cattrs`` is
installed (``pip install mcptrio[attrs]``), a tool whose parameters or return annotation hold
attrs classes (anywhere: ``Pet``, ``list[Pet]``, ``Pet | None``) goes through it instead:

- **Arguments** are first checked by msgspec against the schema the client was shown (types,
  ``Annotated`` constraints, required fields), so a bad call gets the same reason as any other;
  then each such argument is structured from the JSON the client sent by the cattrs converter:
  attrs converters and validators run, and so does ``__attrs_post_init__``. A failure there
  (a validator refusing a value) is answered as invalid arguments, a tool error the model can
  read, with cattrs' account of where it failed.
- **Results** are unstructured by the converter, then made JSON by msgspec, and checked against
  the return annotation as every structured result is.

The converter is :func:`make_converter`'s unless the tool names one (``converter=`` in
:class:`~mcptrio.server.tools.ToolOptions`): a ``cattrs.Converter`` that leaves to msgspec the
types msgspec reads and writes for the schema (dates and times, UUIDs, decimals, bytes as
base64, msgspec Structs, dataclasses and TypedDicts), so both sides of a tool agree with its
schema. Start from it to add hooks of your own; hooks that change a class's shape (renamed keys)
would disagree with the schema the client is shown, so pass an ``input_schema`` then.

Without cattrs, attrs classes are read and written by msgspec alone, as above.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import functools
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, get_args, get_origin, is_typeddict

import msgspec

if TYPE_CHECKING:
    import cattrs

__all__ = [
    "StructureError",
    "arguments_structurer",
    "cattrs_available",
    "contains_attrs",
    "default_converter",
    "make_converter",
    "result_unstructurer",
]

_MSGSPEC_SCALARS: frozenset[Any] = frozenset(
    {
        datetime.datetime,
        datetime.date,
        datetime.time,
        datetime.timedelta,
        uuid.UUID,
        decimal.Decimal,
        bytes,
        bytearray,
    }
)


class StructureError(ValueError):
    """An argument msgspec accepted that the cattrs converter did not (a validator refused it)."""


@functools.cache
def cattrs_available() -> bool:
    """Whether cattrs (and attrs) can be imported."""
    try:
        import attrs  # noqa: F401
        import cattrs  # noqa: F401
    except ImportError:
        return False
    return True


def contains_attrs(annotation: Any) -> bool:
    """Whether ``annotation`` is an attrs class, or holds one at any depth."""
    if not cattrs_available():
        return False
    import attrs

    return _contains(annotation, attrs.has, set())


def _contains(annotation: Any, test: Callable[[type], bool], seen: set[int]) -> bool:
    if id(annotation) in seen:
        return False
    seen.add(id(annotation))
    if isinstance(annotation, type) and test(annotation):
        return True
    return any(_contains(arg, test, seen) for arg in get_args(annotation))


def make_converter() -> cattrs.Converter:
    """A ``cattrs.Converter`` for tools: attrs classes by cattrs, the rest by msgspec."""
    import cattrs

    converter = cattrs.Converter()
    converter.register_structure_hook_func(_read_by_msgspec, _structure_by_msgspec)
    converter.register_structure_hook_func(_is_annotated, _structure_annotated(converter))
    return converter


@functools.cache
def default_converter() -> cattrs.Converter:
    """The converter tools use unless they name one (made once)."""
    return make_converter()


def _read_by_msgspec(tp: Any) -> bool:
    if tp in _MSGSPEC_SCALARS:
        return True
    if not isinstance(tp, type):
        return False
    return issubclass(tp, msgspec.Struct) or dataclasses.is_dataclass(tp) or is_typeddict(tp)


def _structure_by_msgspec(value: Any, tp: Any) -> Any:
    return msgspec.convert(value, tp, str_keys=True)


def _is_annotated(tp: Any) -> bool:
    return get_origin(tp) is Annotated


def _structure_annotated(converter: cattrs.Converter) -> Callable[[Any, Any], Any]:
    # msgspec checked the constraints already: the converter builds the type underneath.
    def structure(value: Any, tp: Any) -> Any:
        return converter.structure(value, get_args(tp)[0])

    return structure


def arguments_structurer(
    parameters: Sequence[tuple[str, Any, Any]], converter: cattrs.Converter | None
) -> Callable[[dict[str, Any], Mapping[str, Any]], dict[str, Any]] | None:
    """For the parameters ``(name, annotation, default)`` that hold attrs classes, a function
    ``(values, sent) -> values`` that structures each from what the client ``sent``; ``None``
    when no parameter holds one (or cattrs is not installed)."""
    chosen = [
        (name, annotation) for name, annotation, _ in parameters if contains_attrs(annotation)
    ]
    if not chosen:
        return None
    use = converter if converter is not None else default_converter()
    from cattrs.errors import BaseValidationError

    def structure(values: dict[str, Any], sent: Mapping[str, Any]) -> dict[str, Any]:
        for name, annotation in chosen:
            if name not in sent:
                continue  # the default, as the function declared it
            try:
                values[name] = use.structure(sent[name], annotation)
            except BaseValidationError as exc:
                import cattrs

                where = "; ".join(cattrs.transform_error(exc, path=f"$.{name}"))
                raise StructureError(where) from None
            except (TypeError, ValueError) as exc:
                raise StructureError(f"{exc} - at `$.{name}`") from None
        return values

    return structure


def result_unstructurer(
    annotation: Any, converter: cattrs.Converter | None
) -> Callable[[Any], Any] | None:
    """A function turning a value of ``annotation`` into JSON-ready builtins through the cattrs
    converter; ``None`` when ``annotation`` holds no attrs class (or cattrs is not installed)."""
    if not contains_attrs(annotation):
        return None
    use = converter if converter is not None else default_converter()
    target = _strip_annotated(annotation)

    def unstructure(value: Any) -> Any:
        return msgspec.to_builtins(use.unstructure(value, unstructure_as=target), str_keys=True)

    return unstructure


def _strip_annotated(annotation: Any) -> Any:
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return annotation
