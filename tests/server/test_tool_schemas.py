"""Tools: signature -> inputSchema, return annotation -> outputSchema, names and definitions."""

from __future__ import annotations

import dataclasses
import enum
import functools
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any, Literal, TypedDict

import attrs
import jsonschema
import msgspec
import pytest
from contexts import as_json
from jsonschema import Draft202012Validator

from mcptrio.protocol.types import (
    CallToolResult,
    ContentBlock,
    Icon,
    ImageContent,
    ToolAnnotations,
)
from mcptrio.server.context import Context
from mcptrio.server.media import Audio, File, Image
from mcptrio.server.tools import RegisteredTool, make_tool

from conftest import as_sent
from schema_validation import HANDSHAKE_REVISIONS, validate_definition


def check_schema(schema: dict[str, Any]) -> None:
    """A tool schema: valid JSON Schema 2020-12, an object at the root, every $ref resolvable."""
    Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object"
    for ref in refs(schema):
        assert ref.startswith("#/$defs/"), ref
        assert ref.removeprefix("#/$defs/") in schema["$defs"], ref


def refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for value in node.values():
            yield from refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from refs(value)


def described(fn: Any, **kwargs: Any) -> RegisteredTool:
    """``make_tool`` plus the checks every generated definition must pass."""
    tool = make_tool(fn, **kwargs)
    check_schema(tool.input_schema)
    if tool.output_schema is not None:
        check_schema(tool.output_schema)
    for revision in HANDSHAKE_REVISIONS:
        validate_definition(as_json(as_sent(tool.definition, revision)), revision, "Tool")
    return tool


def accepts(schema: dict[str, Any], instance: Any) -> bool:
    return Draft202012Validator(schema).is_valid(instance)


# ------------------------------------------------------------------ model types


class Point(msgspec.Struct):
    """A point on the plane."""

    x: int
    y: int = 0


# Point's definition, under ``$defs`` wherever a schema refers to it.
POINT_SCHEMA = {
    "title": "Point",
    "description": "A point on the plane.",
    "type": "object",
    "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}},
    "required": ["x"],
}


@dataclasses.dataclass
class Box:
    label: str
    tags: list[str] = dataclasses.field(default_factory=list)


@attrs.define
class Pet:
    name: str
    age: int = 1


class Address(TypedDict):
    street: str
    zip: str


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Route(msgspec.Struct):
    start: Point
    stops: list[Point]
    color: Color = Color.RED


class Tree(msgspec.Struct):
    value: int
    children: list[Tree] = []


# ------------------------------------------------------------------ inputSchema


def test_scalars_defaults_and_required() -> None:
    def search(query: str, limit: int = 10, exact: bool = False, boost: float = 1.5) -> str:
        return query

    assert described(search).input_schema == {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer", "default": 10},
            "exact": {"type": "boolean", "default": False},
            "boost": {"type": "number", "default": 1.5},
        },
        "required": ["query"],
    }


def test_no_parameters_is_an_empty_object() -> None:
    def now() -> str:
        return "now"

    assert described(now).input_schema == {"type": "object", "properties": {}, "required": []}


def test_optional_parameter() -> None:
    def find(name: str | None = None) -> str:
        return str(name)

    assert described(find).input_schema["properties"] == {
        "name": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}
    }
    assert described(find).input_schema["required"] == []


def test_unannotated_parameter_accepts_anything() -> None:
    def echo(value):  # type: ignore[no-untyped-def]
        return value

    assert described(echo).input_schema["properties"] == {"value": {}}


def test_annotated_constraints_and_descriptions() -> None:
    def book(
        nights: Annotated[int, msgspec.Meta(ge=1, le=30, description="How many nights")],
        guest: Annotated[str, "The guest's full name"],
        code: Annotated[str, msgspec.Meta(pattern="^[A-Z]{3}$")] = "AAA",
        notes: list[Annotated[str, "One note"]] | None = None,
    ) -> str:
        return guest

    assert described(book).input_schema == {
        "type": "object",
        "properties": {
            "nights": {
                "type": "integer",
                "minimum": 1,
                "maximum": 30,
                "description": "How many nights",
            },
            "guest": {"type": "string", "description": "The guest's full name"},
            "code": {"type": "string", "pattern": "^[A-Z]{3}$", "default": "AAA"},
            "notes": {
                "anyOf": [
                    {"type": "array", "items": {"type": "string", "description": "One note"}},
                    {"type": "null"},
                ],
                "default": None,
            },
        },
        "required": ["nights", "guest"],
    }


def test_enums_and_literals() -> None:
    def paint(color: Color, finish: Literal["matte", "gloss"] = "matte") -> str:
        return color.value

    schema = described(paint).input_schema
    assert schema["properties"] == {
        "color": {"$ref": "#/$defs/Color"},
        "finish": {"enum": ["gloss", "matte"], "default": "matte"},
    }
    assert schema["$defs"] == {"Color": {"title": "Color", "enum": ["blue", "red"]}}
    assert accepts(schema, {"color": "red"})
    assert not accepts(schema, {"color": "green"})


class _FactoryProbe(msgspec.Struct):
    items: list[int] = msgspec.field(default_factory=list)


def factory_default() -> dict[str, Any]:
    """What msgspec states for a field made by an empty list's factory: ``{"default": []}``
    from 0.23, nothing before. Either is right; the rest of the schema is mcptrio's."""
    schema = msgspec.json.schema(_FactoryProbe)["$defs"]["_FactoryProbe"]["properties"]["items"]
    return {"default": []} if schema.get("default") == [] else {}


def test_struct_dataclass_attrs_and_typeddict_parameters() -> None:
    def ship(point: Point, box: Box, pet: Pet, to: Address) -> str:
        return "ok"

    schema = described(ship).input_schema
    assert schema["properties"] == {
        "point": {"$ref": "#/$defs/Point"},
        "box": {"$ref": "#/$defs/Box"},
        "pet": {"$ref": "#/$defs/Pet"},
        "to": {"$ref": "#/$defs/Address"},
    }
    assert schema["required"] == ["point", "box", "pet", "to"]
    assert schema["$defs"] == {
        "Point": POINT_SCHEMA,
        "Box": {
            "title": "Box",
            "type": "object",
            "properties": {
                "label": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}, **factory_default()},
            },
            "required": ["label"],
        },
        "Pet": {
            "title": "Pet",
            "type": "object",
            "properties": {"name": {"type": "string"}, "age": {"type": "integer", "default": 1}},
            "required": ["name"],
        },
        "Address": {
            "title": "Address",
            "type": "object",
            "properties": {"street": {"type": "string"}, "zip": {"type": "string"}},
            "required": ["street", "zip"],
        },
    }
    good = {
        "point": {"x": 1},
        "box": {"label": "b"},
        "pet": {"name": "Rex"},
        "to": {"street": "Main", "zip": "1000"},
    }
    assert accepts(schema, good)
    assert not accepts(schema, {**good, "point": {"y": 1}})


def test_nested_models_containers_and_dicts() -> None:
    def plan(routes: list[Route], weights: dict[str, float], tree: Tree | None = None) -> str:
        return "ok"

    schema = described(plan).input_schema
    assert schema["properties"] == {
        "routes": {"type": "array", "items": {"$ref": "#/$defs/Route"}},
        "weights": {"type": "object", "additionalProperties": {"type": "number"}},
        "tree": {"anyOf": [{"$ref": "#/$defs/Tree"}, {"type": "null"}], "default": None},
    }
    assert set(schema["$defs"]) == {"Route", "Point", "Color", "Tree"}
    assert schema["$defs"]["Tree"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Tree"}
    route = {"start": {"x": 0}, "stops": [{"x": 1, "y": 2}], "color": "blue"}
    assert accepts(schema, {"routes": [route], "weights": {"a": 1.0}})
    assert accepts(schema, {"routes": [], "weights": {}, "tree": {"value": 1, "children": []}})
    assert not accepts(schema, {"routes": [{"start": {}, "stops": []}], "weights": {}})


def test_a_non_empty_mutable_default_is_described_and_copied_per_call() -> None:
    def tag(names: list[str] = ["a", "b"]) -> str:  # noqa: B006
        return ",".join(names)

    schema = described(tag).input_schema
    assert schema["properties"]["names"] == {
        "type": "array",
        "items": {"type": "string"},
        "default": ["a", "b"],
    }


def test_context_parameters_are_not_in_the_schema() -> None:
    def work(ctx: Context, n: int, maybe: Context | None = None) -> str:
        return str(n)

    assert described(work).input_schema["properties"] == {"n": {"type": "integer"}}
    assert described(work).input_schema["required"] == ["n"]


def test_var_args_are_refused() -> None:
    def many(*values: int) -> int:
        return sum(values)

    def loose(**options: str) -> str:
        return ""

    for fn in (many, loose):
        with pytest.raises(ValueError, match=r"\*args and \*\*kwargs"):
            make_tool(fn)


def test_an_unsupported_parameter_type_is_refused_at_registration() -> None:
    class Opaque:
        pass

    def use(thing: Opaque) -> str:
        return ""

    with pytest.raises(ValueError) as refused:
        make_tool(use)
    message = str(refused.value)
    line = use.__code__.co_firstlineno
    assert message.startswith(
        "Tool 'use': parameter 'thing' of"
        f" test_an_unsupported_parameter_type_is_refused_at_registration.<locals>.use() in"
        f" {__file__}:{line} has type Opaque, which has no JSON Schema; supported types are str,"
    )
    assert "msgspec Structs, dataclasses, attrs classes, TypedDicts" in message
    assert "\n" not in message
    assert "schema_hook" not in message


class Unschemable:
    pass


@dataclasses.dataclass
class Crate:
    items: list[Unschemable]


def test_a_refusal_names_the_unsupported_type_inside_a_parameter() -> None:
    def store(count: int, crate: Crate | None = None) -> str:
        return ""

    with pytest.raises(
        ValueError,
        match=r"Tool 'store': parameter 'crate' of .*store\(\) in .*test_tool_schemas.py:\d+"
        r" has type Crate \| None, and Unschemable in it has no JSON Schema; supported types",
    ):
        make_tool(store)


def test_a_class_whose_field_hints_do_not_resolve_is_refused_in_words() -> None:
    class Local:
        pass

    @dataclasses.dataclass
    class Parcel:
        item: Local  # a string hint (this module's annotations) naming a local class

    def pack(box: Parcel) -> str:
        return ""

    with pytest.raises(
        ValueError,
        match=r"Tool 'pack': parameter 'box' of .*pack\(\) in .*:\d+ has type Parcel, whose field"
        r" hints do not resolve \(name 'Local' is not defined\): define the types they name at"
        r" the top level of the class's module; supported types are ",
    ):
        make_tool(pack)


def test_an_unresolvable_hint_says_what_to_do() -> None:
    def use(thing: NotDefinedAnywhere) -> str:  # type: ignore[name-defined]  # noqa: F821
        return ""

    with pytest.raises(ValueError, match="cannot resolve a type hint"):
        make_tool(use)


def test_arguments_convert_into_every_kind_of_model() -> None:
    seen: dict[str, Any] = {}

    def take(
        point: Point, box: Box, pet: Pet, to: Address, color: Color, routes: list[Route]
    ) -> str:
        seen.update(point=point, box=box, pet=pet, to=to, color=color, routes=routes)
        return "ok"

    def tag(names: list[str] = ["a"]) -> list[str]:  # noqa: B006
        names.append("x")  # mutating the default must not leak into the next call
        return names

    arguments = msgspec.convert(
        {
            "point": {"x": 1},
            "box": {"label": "b", "tags": ["t"]},
            "pet": {"name": "Rex"},
            "to": {"street": "Main", "zip": "1000"},
            "color": "blue",
            "routes": [{"start": {"x": 0, "y": 1}, "stops": []}],
        },
        make_tool(take).arguments_type,
        str_keys=True,
    )
    take(**msgspec.structs.asdict(arguments))
    assert seen == {
        "point": Point(1, 0),
        "box": Box("b", ["t"]),
        "pet": Pet("Rex", 1),
        "to": {"street": "Main", "zip": "1000"},
        "color": Color.BLUE,
        "routes": [Route(Point(0, 1), [])],
    }
    tag_arguments = make_tool(tag).arguments_type
    for _ in range(2):
        assert tag(**msgspec.structs.asdict(msgspec.convert({}, tag_arguments))) == ["a", "x"]


# ------------------------------------------------------------------ outputSchema

WRAPPED_INT = {
    "type": "object",
    "properties": {"result": {"type": "integer"}},
    "required": ["result"],
}


def test_object_return_types_are_the_output_schema() -> None:
    def point() -> Point:
        return Point(1)

    def box() -> Box:
        return Box("b")

    def pet() -> Pet:
        return Pet("Rex")

    def address() -> Address:
        return {"street": "s", "zip": "z"}

    def counts() -> dict[str, int]:
        return {}

    assert described(point).output_schema == {
        "title": "Point",
        "description": "A point on the plane.",
        "type": "object",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}},
        "required": ["x"],
    }
    assert described(box).output_schema is not None
    assert described(pet).output_schema is not None
    assert described(address).output_schema == {
        "title": "Address",
        "type": "object",
        "properties": {"street": {"type": "string"}, "zip": {"type": "string"}},
        "required": ["street", "zip"],
    }
    assert described(counts).output_schema == {
        "type": "object",
        "properties": {},
        "additionalProperties": {"type": "integer"},
    }


def test_non_object_return_types_are_wrapped_in_result() -> None:
    def add(a: int, b: int) -> int:
        return a + b

    def points() -> list[Point]:
        return []

    def maybe() -> Point | None:
        return None

    assert described(add).output_schema == WRAPPED_INT
    assert described(points).output_schema == {
        "type": "object",
        "properties": {"result": {"type": "array", "items": {"$ref": "#/$defs/Point"}}},
        "required": ["result"],
        "$defs": {"Point": POINT_SCHEMA},
    }
    assert described(maybe).output_schema["properties"]["result"] == {  # type: ignore[index]
        "anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}]
    }


def test_a_recursive_return_type_keeps_its_definition() -> None:
    def tree() -> Tree:
        return Tree(1)

    schema = described(tree).output_schema
    assert schema is not None
    assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Tree"}
    assert Draft202012Validator(schema).is_valid({"value": 1, "children": [{"value": 2}]})


def text() -> str:
    return ""


def nothing() -> None:
    return None


def unannotated():  # type: ignore[no-untyped-def]
    return 1


def anything() -> Any:
    return 1


def image() -> Image:
    return Image(b"\x89PNG\r\n\x1a\n", mime_type="image/png")


def media() -> list[Image | Audio | File | str]:
    return []


def blocks() -> list[ContentBlock]:
    return []


def one_block() -> ImageContent:
    return ImageContent(data="", mime_type="image/png")


def result() -> CallToolResult:
    return CallToolResult(content=[])


def raw() -> bytes:
    return b""


def texts() -> tuple[str, ...]:
    return ()


@pytest.mark.parametrize(
    "fn",
    [text, nothing, unannotated, anything, image, media, blocks, one_block, result, raw, texts],
)
def test_content_return_types_have_no_output_schema(fn: Any) -> None:
    tool = described(fn)
    assert tool.output_schema is None
    assert "outputSchema" not in as_json(tool.definition)


def test_structured_output_can_be_forced_or_turned_off() -> None:
    def add(a: int, b: int) -> int:
        return a + b

    assert described(add, structured_output=False).output_schema is None
    assert described(text, structured_output=True).output_schema == {
        "type": "object",
        "properties": {"result": {"type": "string"}},
        "required": ["result"],
    }
    for fn in (result, unannotated, one_block):
        with pytest.raises(ValueError, match="structured output needs"):
            make_tool(fn, structured_output=True)


def test_an_undescribable_return_type_is_refused() -> None:
    class Opaque:
        pass

    def make() -> Opaque:
        return Opaque()

    with pytest.raises(ValueError) as refused:
        make_tool(make)
    message = str(refused.value)
    assert message.startswith(
        "Tool 'make': the return type of test_an_undescribable_return_type_is_refused.<locals>"
        f".make() in {__file__}:{make.__code__.co_firstlineno} is Opaque, which has no JSON"
        " Schema; return one of str, int,"
    )
    assert message.endswith("or pass structured_output=False")
    assert "\n" not in message
    assert make_tool(make, structured_output=False).output_schema is None


# ------------------------------------------------------------------ names and descriptions


@pytest.mark.parametrize("name", ["a", "get_weather", "files.read-v2", "A" * 128, "x_1.Y-2"])
def test_good_names(name: str) -> None:
    assert make_tool(text, name=name).name == name


@pytest.mark.parametrize("name", ["", "A" * 129, "has space", "comma,name", "slash/name", "é"])
def test_bad_names_are_refused_at_registration(name: str) -> None:
    with pytest.raises(ValueError, match="Invalid tool name"):
        make_tool(text, name=name)


def test_a_lambda_needs_a_name() -> None:
    with pytest.raises(ValueError, match=r"Cannot name a tool after .*: pass name="):
        make_tool(lambda: "x")
    assert make_tool(lambda: "x", name="anon").name == "anon"


def test_description_is_the_cleaned_docstring() -> None:
    def documented(a: int) -> int:
        """Add one.

        Indentation is removed.
        """
        return a + 1

    tool = described(documented)
    assert tool.description == "Add one.\n\nIndentation is removed."
    assert described(documented, description="Explicit").description == "Explicit"
    assert "description" not in as_json(described(text).definition)


class Multiplier:
    """Multiplies by a factor."""

    def __init__(self, factor: int) -> None:
        self.factor = factor

    async def __call__(self, value: int) -> int:
        return value * self.factor

    def scale(self, value: float) -> float:
        """Scale a value."""
        return value * self.factor


def test_callable_objects_partials_and_methods() -> None:
    def power(base: int, exponent: int) -> int:
        """Raise to a power."""
        return int(base**exponent)

    obj = described(Multiplier(3))
    assert obj.name == "Multiplier"
    assert obj.description == "Multiplies by a factor."
    assert obj.input_schema["properties"] == {"value": {"type": "integer"}}
    assert obj.output_schema == WRAPPED_INT

    square = described(functools.partial(power, exponent=2), name="square")
    assert square.description == "Raise to a power."
    assert square.input_schema["required"] == ["base"]
    assert square.input_schema["properties"]["exponent"] == {"type": "integer", "default": 2}

    method = described(Multiplier(2).scale)
    assert method.name == "scale"
    assert method.description == "Scale a value."
    assert method.input_schema["properties"] == {"value": {"type": "number"}}


def test_a_generator_is_described_by_its_items() -> None:
    def numbers() -> Iterator[int]:
        yield 1

    async def words() -> AsyncIterator[str]:
        yield "a"

    assert make_tool(numbers).output_schema == {
        "type": "object",
        "properties": {"result": {"type": "array", "items": {"type": "integer"}}},
        "required": ["result"],
    }
    assert make_tool(words).output_schema is None


# ------------------------------------------------------------------ per-revision definitions


def full_tool() -> RegisteredTool:
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return described(
        add,
        title="Adder",
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True),
        icons=[Icon(src="https://example.com/add.png", mime_type="image/png", sizes=["48x48"])],
        meta={"com.example/owner": "maths"},
    )


INPUT = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
}


def test_the_definition_as_each_revision_receives_it() -> None:
    tool = full_tool()
    base = {"name": "add", "description": "Add two integers.", "inputSchema": INPUT}
    assert as_json(as_sent(tool.definition, "2024-11-05")) == base
    assert as_json(as_sent(tool.definition, "2025-03-26")) == {
        **base,
        "annotations": {"title": "Adder", "readOnlyHint": True, "idempotentHint": True},
    }
    modern = {
        **base,
        "title": "Adder",
        "outputSchema": WRAPPED_INT,
        "annotations": {"readOnlyHint": True, "idempotentHint": True},
        "_meta": {"com.example/owner": "maths"},
    }
    assert as_json(as_sent(tool.definition, "2025-06-18")) == modern
    assert as_json(as_sent(tool.definition, "2025-11-25")) == {
        **modern,
        "icons": [
            {"src": "https://example.com/add.png", "mimeType": "image/png", "sizes": ["48x48"]}
        ],
    }
    # Built once, and sent as it is in the newest revision.
    assert tool.definition is tool.definition is as_sent(tool.definition, "2025-11-25")


def test_an_annotation_title_is_kept_in_2025_03_26() -> None:
    tool = make_tool(text, title="Shown", annotations=ToolAnnotations(title="Own"))
    assert as_json(as_sent(tool.definition, "2025-03-26"))["annotations"] == {"title": "Own"}


def test_every_definition_validates_against_its_revision() -> None:
    tool = full_tool()
    for revision in HANDSHAKE_REVISIONS:
        validate_definition(as_json(as_sent(tool.definition, revision)), revision, "Tool")
    with pytest.raises(jsonschema.ValidationError):
        # The 2024-11-05 Tool's schema is checked for real: a tool without inputSchema fails.
        validate_definition({"name": "x"}, "2024-11-05", "Tool")
