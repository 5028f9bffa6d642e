"""attrs classes as tool parameters and results, structured and unstructured by cattrs, next to
msgspec Structs, dataclasses and TypedDicts."""

from __future__ import annotations

import dataclasses
import datetime
from typing import Annotated, Any, TypedDict

import attrs
import cattrs
import msgspec
import pytest
import trio

import mcptrio
from mcptrio.client import HANDSHAKE_ERA
from mcptrio.protocol.types import CallToolResult, TextContent
from mcptrio.server.attrs_values import make_converter
from mcptrio.server.tools import make_tool
from mcptrio.testing import open_test_client


class Point(msgspec.Struct):
    x: int
    y: int


@dataclasses.dataclass
class Label:
    text: str


class Extra(TypedDict):
    note: str


@attrs.define
class Pet:
    name: str = attrs.field(converter=str.strip)
    age: int = attrs.field(default=1, validator=attrs.validators.ge(0))
    born: datetime.date | None = None
    home: Point | None = None
    tags: list[Label] = attrs.Factory(list)
    greeting: str = attrs.field(init=False, default="")

    def __attrs_post_init__(self) -> None:
        self.greeting = f"Hi, {self.name}"


@attrs.frozen
class Kennel:
    pets: list[Pet]
    extra: Extra | None = None


def text(result: CallToolResult) -> str:
    first = result.content[0]
    assert isinstance(first, TextContent)
    return first.text


def kennel_server(converter: cattrs.Converter | None = None) -> mcptrio.Server:
    server = mcptrio.Server("kennel")
    options: dict[str, Any] = {} if converter is None else {"converter": converter}

    @server.tool(**options)
    async def adopt(pet: Pet, friends: list[Pet] | None = None) -> str:
        names = [p.name for p in friends or []]
        return f"{pet.greeting} ({pet.age}, {pet.born}, {pet.home}, {pet.tags}) {names}"

    @server.tool(**options)
    async def kennel(count: int) -> Kennel:
        pets = [Pet(f" pet{i} ", age=i, born=datetime.date(2020, 1, i + 1)) for i in range(count)]
        return Kennel(pets, extra={"note": "clean"})

    @server.tool(**options)
    async def oldest(count: int) -> Pet | None:
        return Pet(" Rex ", age=count) if count else None

    return server


@pytest.mark.parametrize("era", [HANDSHAKE_ERA, None])
async def test_attrs_arguments_are_structured_by_cattrs(era: Any) -> None:
    options = {} if era is None else {"revisions": era}
    with trio.fail_after(5):
        async with open_test_client(kennel_server(), **options) as client:
            result = await client.call_tool(
                "adopt",
                {
                    "pet": {
                        "name": "  Rex ",
                        "age": 3,
                        "born": "2021-05-04",
                        "home": {"x": 1, "y": 2},
                        "tags": [{"text": "good"}],
                    },
                    "friends": [{"name": " Fido"}],
                },
            )
    # The converter ran (name stripped), __attrs_post_init__ ran, msgspec read the date, the
    # Struct and the dataclass inside.
    assert text(result) == (
        "Hi, Rex (3, 2021-05-04, Point(x=1, y=2), [Label(text='good')]) ['Fido']"
    )


async def test_attrs_results_are_unstructured_by_cattrs_and_described_by_their_fields() -> None:
    server = kennel_server()
    tool = server.tools["kennel"]
    assert tool.output_schema is not None
    assert tool.output_schema["$defs"]["Pet"]["properties"]["born"] == {
        "anyOf": [{"type": "string", "format": "date"}, {"type": "null"}],
        "default": None,
    }
    with trio.fail_after(5):
        async with open_test_client(server) as client:
            result = await client.call_tool("kennel", {"count": 2})
            none = await client.call_tool("oldest", {"count": 0})
            rex = await client.call_tool("oldest", {"count": 4})
    # A field the class sets itself (init=False) is optional in the schema; cattrs leaves it out.
    assert "greeting" not in tool.output_schema["$defs"]["Pet"]["required"]
    assert result.structured_content == {
        "pets": [
            {
                "name": "pet0",
                "age": 0,
                "born": "2020-01-01",
                "home": None,
                "tags": [],
            },
            {
                "name": "pet1",
                "age": 1,
                "born": "2020-01-02",
                "home": None,
                "tags": [],
            },
        ],
        "extra": {"note": "clean"},
    }
    assert none.structured_content == {"result": None}
    assert rex.structured_content == {
        "result": {
            "name": "Rex",
            "age": 4,
            "born": None,
            "home": None,
            "tags": [],
        }
    }


async def test_a_refused_attrs_argument_is_a_tool_error_the_model_can_read() -> None:
    with trio.fail_after(5):
        async with open_test_client(kennel_server()) as client:
            negative = await client.call_tool("adopt", {"pet": {"name": "Rex", "age": -1}})
            missing = await client.call_tool("adopt", {"pet": {"age": 2}})
    assert negative.is_error and missing.is_error
    assert text(negative).startswith("Invalid arguments for tool 'adopt': ")
    assert "age" in text(negative)
    assert text(missing) == (
        "Invalid arguments for tool 'adopt': Object missing required field `name` - at `$.pet`"
    )


async def test_a_converter_of_your_own_adds_hooks() -> None:
    converter = make_converter()

    @attrs.define
    class Shout:
        value: str

    converter.register_structure_hook(Shout, lambda v, _: Shout(str(v["value"]).upper()))
    converter.register_unstructure_hook(Shout, lambda s: {"value": s.value + "!"})
    server = mcptrio.Server("loud")

    @server.tool(converter=converter)
    async def echo(message: Shout) -> Shout:
        return message

    with trio.fail_after(5):
        async with open_test_client(server) as client:
            result = await client.call_tool("echo", {"message": {"value": "hi"}})
    assert result.structured_content == {"value": "HI!"}


def test_tools_without_attrs_classes_have_no_cattrs_step() -> None:
    def plain(point: Point, label: Label, extra: Extra) -> Point:
        return point

    tool = make_tool(plain)
    assert tool._arguments.structure is None and tool._output.unstructure is None
    with_attrs = make_tool(lambda pet: pet, name="x")
    assert with_attrs._arguments.structure is None

    def annotated(pet: Annotated[Pet, "a pet"]) -> list[Pet]:
        return [pet]

    tool = make_tool(annotated)
    assert tool._arguments.structure is not None and tool._output.unstructure is not None
    assert tool.input_schema["properties"]["pet"]["description"] == "a pet"
