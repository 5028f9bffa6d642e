"""pydantic v2 models, ``Field`` and ``Annotated`` constraints as tool and prompt arguments and
results, as elicitation schemas, and mixed with msgspec Structs, dataclasses, attrs classes and
TypedDicts in one tool."""

from __future__ import annotations

import dataclasses
import enum
import json
import subprocess
import sys
from typing import Annotated, Any, Generic, Literal, TypedDict, TypeVar

import annotated_types
import attrs
import msgspec
import pytest
import trio
from jsonschema import Draft202012Validator
from pydantic import BaseModel, Field, field_validator, model_validator
from pydantic.dataclasses import dataclass as pydantic_dataclass

import mcptrio
from mcptrio.client import HANDSHAKE_ERA, Handlers
from mcptrio.protocol.errors import McpError
from mcptrio.protocol.types import CallToolResult, TextContent
from mcptrio.server.context import Context
from mcptrio.server.tools import make_tool
from mcptrio.testing import ScriptedElicitation, open_test_client

T = TypeVar("T")


class Species(enum.Enum):
    CAT = "cat"
    DOG = "dog"


class Owner(BaseModel):
    name: str = Field(description="the owner's name", min_length=1)


class Pet(BaseModel):
    name: str = Field(description="its name", pattern="^[A-Z]")
    age: int = Field(ge=0, le=40)
    species: Species = Species.CAT
    owner: Owner | None = None
    tags: list[str] = Field(default_factory=list)

    @field_validator("name", mode="before")
    @classmethod
    def strip(cls, value: Any) -> Any:
        return value.strip() if isinstance(value, str) else value


class Page(BaseModel, Generic[T]):
    items: list[T]
    total: int


class Span(BaseModel):
    start: int
    end: int

    @model_validator(mode="after")
    def ordered(self) -> Span:
        if self.end < self.start:
            raise ValueError("end is before start")
        return self


@pydantic_dataclass
class Size:
    width: Annotated[int, Field(gt=0)]


class Point(msgspec.Struct):
    x: int
    y: int


@dataclasses.dataclass
class Label:
    text: str


class Extra(TypedDict):
    note: str


@attrs.define
class Badge:
    code: str


def text(result: CallToolResult) -> str:
    first = result.content[0]
    assert isinstance(first, TextContent)
    return first.text


def shelter() -> mcptrio.Server:
    server = mcptrio.Server("shelter")

    @server.tool
    async def admit(
        pet: Pet,
        where: Point,
        label: Label,
        extra: Extra,
        badge: Badge,
        kind: Literal["stray", "surrendered"] = "stray",
        rooms: Annotated[int, Field(gt=0, description="rooms")] = 1,
        floor: Annotated[int, annotated_types.Le(3)] = 0,
        note: str | None = None,
        span: Span | None = None,
        size: Size | None = None,
        copies: int = Field(default=1, ge=1, le=5),
    ) -> Page[Pet]:
        """Admit a pet."""
        summary = [pet.name, pet.age, pet.species.value, where.x, label.text, extra["note"]]
        summary += [badge.code, kind, rooms, floor, note, span, size, copies, pet.tags]
        return Page[Pet](items=[pet.model_copy(update={"tags": [repr(summary)]})], total=1)

    @server.tool
    async def owners(count: int) -> list[Owner]:
        return [Owner(name=f"o{i}") for i in range(count)]

    @server.tool
    async def oldest(count: int) -> Pet | None:
        return Pet(name="Rex", age=count) if count else None

    @server.tool
    async def bad(count: int) -> Pet:
        return Owner(name="not a pet")  # type: ignore[return-value]

    @server.tool(structured_output=False)
    async def unstructured(count: int) -> Pet:
        return Pet(name="Rex", age=count)

    @server.prompt
    def visit(
        pet: Pet,
        minutes: Annotated[int, Field(ge=5, description="how long")] = 10,
        tone: str = Field(default="warm", description="the tone"),
        topics: list[str] = Field(default_factory=lambda: ["food"]),  # noqa: B008
    ) -> str:
        return f"Visit {pet.name} ({pet.age}) for {minutes} minutes, {tone}, about {topics}"

    @server.prompt
    def brief(topic: str = Field(description="what about")) -> str:
        return f"Brief on {topic}"

    @server.tool
    async def register(ctx: Context) -> str:
        answer = await ctx.elicit("Who adopts?", Owner)
        return f"{answer.action}: {answer.data!r}"

    return server


ADMIT = {
    "pet": {"name": "Rex  ", "age": 3, "owner": {"name": "Ada"}},
    "where": {"x": 1, "y": 2},
    "label": {"text": "front"},
    "extra": {"note": "calm"},
    "badge": {"code": "B1"},
}


def test_the_input_schema_is_pydantics_merged_with_msgspecs() -> None:
    tool = shelter().tools["admit"]
    schema = tool.input_schema
    Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object"
    assert schema["required"] == ["pet", "where", "label", "extra", "badge"]
    properties = schema["properties"]
    assert properties["pet"] == {"$ref": "#/$defs/Pet"}
    assert properties["where"] == {"$ref": "#/$defs/Point"}
    assert properties["rooms"] == {
        "default": 1,
        "description": "rooms",
        "exclusiveMinimum": 0,
        "title": "Rooms",
        "type": "integer",
    }
    assert properties["floor"] == {"default": 0, "maximum": 3, "title": "Floor", "type": "integer"}
    assert properties["copies"] == {
        "default": 1,
        "maximum": 5,
        "minimum": 1,
        "title": "Copies",
        "type": "integer",
    }
    assert properties["kind"] == {"enum": ["stray", "surrendered"], "default": "stray"}
    defs = schema["$defs"]
    assert defs["Pet"]["properties"]["name"] == {
        "description": "its name",
        "pattern": "^[A-Z]",
        "title": "Name",
        "type": "string",
    }
    assert defs["Pet"]["properties"]["age"] == {
        "maximum": 40,
        "minimum": 0,
        "title": "Age",
        "type": "integer",
    }
    assert defs["Pet"]["required"] == ["name", "age"]
    assert defs["Species"] == {"enum": ["cat", "dog"], "title": "Species", "type": "string"}
    assert defs["Owner"]["properties"]["name"]["minLength"] == 1
    assert defs["Size"]["properties"]["width"]["exclusiveMinimum"] == 0
    assert {"Point", "Label", "Extra", "Badge", "Span"} <= set(defs)
    assert Draft202012Validator(schema).is_valid(ADMIT)
    assert not Draft202012Validator(schema).is_valid({**ADMIT, "copies": 9})


def test_the_output_schema_is_pydantics_serialization_schema() -> None:
    server = shelter()
    page = server.tools["admit"].output_schema
    assert page is not None
    Draft202012Validator.check_schema(page)
    assert page["title"] == "Page[Pet]"
    assert page["properties"]["items"] == {
        "items": {"$ref": "#/$defs/Pet"},
        "title": "Items",
        "type": "array",
    }
    assert "Pet" in page["$defs"]
    listed = server.tools["owners"].output_schema
    assert listed is not None
    assert listed["properties"]["result"] == {"items": {"$ref": "#/$defs/Owner"}, "type": "array"}
    assert listed["required"] == ["result"]
    assert "Owner" in listed["$defs"]
    assert server.tools["unstructured"].output_schema is None


@pytest.mark.parametrize("era", [HANDSHAKE_ERA, None])
async def test_pydantic_arguments_are_validated_by_pydantic_and_results_dumped(era: Any) -> None:
    options = {} if era is None else {"revisions": era}
    sent = {**ADMIT, "span": {"start": 1, "end": 2}, "size": {"width": 3}, "copies": 2}
    with trio.fail_after(5):
        async with open_test_client(shelter(), **options) as client:
            result = await client.call_tool("admit", sent)
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert not result.is_error
    assert result.structured_content is not None
    (pet,) = result.structured_content["items"]
    # The validator stripped the name; the defaults and default_factory were filled.
    assert pet["name"] == "Rex" and pet["species"] == "cat" and pet["owner"] == {"name": "Ada"}
    summary = (
        "['Rex', 3, 'cat', 1, 'front', 'calm', 'B1', 'stray', 1, 0, None,"
        " Span(start=1, end=2), Size(width=3), 2, []]"
    )
    assert pet["tags"] == [summary]
    assert json.loads(text(result)) == result.structured_content
    assert tools["admit"].input_schema["$defs"]["Pet"]["properties"]["name"]["pattern"] == "^[A-Z]"


async def test_a_refused_pydantic_argument_is_a_tool_error_with_its_path_and_reason() -> None:
    with trio.fail_after(5):
        async with open_test_client(shelter()) as client:
            young = await client.call_tool("admit", {**ADMIT, "pet": {"name": "rex", "age": -1}})
            owner = await client.call_tool(
                "admit", {**ADMIT, "pet": {"name": "Rex", "age": 1, "owner": {"name": ""}}}
            )
            span = await client.call_tool("admit", {**ADMIT, "span": {"start": 3, "end": 1}})
            copies = await client.call_tool("admit", {**ADMIT, "copies": 0})
            missing = await client.call_tool(
                "admit", {k: v for k, v in ADMIT.items() if k != "pet"}
            )
            struct = await client.call_tool("admit", {**ADMIT, "where": {"x": "one", "y": 2}})
    assert all(r.is_error for r in (young, owner, span, copies, missing, struct))
    assert text(young) == (
        "Invalid arguments for tool 'admit': String should match pattern '^[A-Z]' - at"
        " `$.pet.name`; Input should be greater than or equal to 0 - at `$.pet.age`"
    )
    assert text(owner) == (
        "Invalid arguments for tool 'admit': String should have at least 1 character - at"
        " `$.pet.owner.name`"
    )
    assert text(span) == (
        "Invalid arguments for tool 'admit': Value error, end is before start - at `$.span`"
    )
    assert text(copies) == (
        "Invalid arguments for tool 'admit': Input should be greater than or equal to 1 - at"
        " `$.copies`"
    )
    assert text(missing) == "Invalid arguments for tool 'admit': Field required - at `$.pet`"
    assert text(struct) == (
        "Invalid arguments for tool 'admit': Expected `int`, got `str` - at `$.where.x`"
    )


async def test_model_results_are_structured_content_plus_their_json_text() -> None:
    with trio.fail_after(5):
        async with open_test_client(shelter()) as client:
            owners = await client.call_tool("owners", {"count": 2})
            none = await client.call_tool("oldest", {"count": 0})
            rex = await client.call_tool("oldest", {"count": 4})
            plain = await client.call_tool("unstructured", {"count": 5})
            bad = await client.call_tool("bad", {"count": 1})
    assert bad.is_error and text(bad) == (
        "Error executing tool bad: returned Owner does not match its return type Pet: Input"
        " should be a valid dictionary or instance of Pet"
    )
    assert owners.structured_content == {"result": [{"name": "o0"}, {"name": "o1"}]}
    assert json.loads(text(owners)) == [{"name": "o0"}, {"name": "o1"}]
    assert none.structured_content == {"result": None}
    rex_data = {"name": "Rex", "age": 4, "species": "cat", "owner": None, "tags": []}
    assert rex.structured_content == {"result": rex_data}
    assert plain.structured_content is None
    assert json.loads(text(plain)) == {**rex_data, "age": 5}


async def test_prompt_arguments_convert_through_pydantic() -> None:
    server = shelter()
    with trio.fail_after(5):
        async with open_test_client(server) as client:
            (prompt,) = [p for p in (await client.list_prompts()).prompts if p.name == "visit"]
            shown = await client.get_prompt("visit", {"pet": '{"name": "Rex", "age": 2}'})
            longer = await client.get_prompt(
                "visit",
                {
                    "pet": '{"name": "Rex", "age": 2}',
                    "minutes": "30",
                    "tone": "cold",
                    "topics": "a,b",
                },
            )
            (brief,) = [p for p in (await client.list_prompts()).prompts if p.name == "brief"]
            with pytest.raises(McpError) as missing:
                await client.get_prompt("brief", {})
            with pytest.raises(McpError) as short:
                await client.get_prompt(
                    "visit", {"pet": '{"name": "Rex", "age": 2}', "minutes": "1"}
                )
    minutes = next(a for a in prompt.arguments or [] if a.name == "minutes")
    assert minutes.description == "how long" and not minutes.required
    first = shown.messages[0].content
    assert isinstance(first, TextContent)
    assert first.text == "Visit Rex (2) for 10 minutes, warm, about ['food']"
    later = longer.messages[0].content
    assert isinstance(later, TextContent)
    assert later.text == "Visit Rex (2) for 30 minutes, cold, about ['a', 'b']"
    tone = next(a for a in prompt.arguments or [] if a.name == "tone")
    assert tone.description == "the tone" and not tone.required
    assert [(a.name, a.required, a.description) for a in brief.arguments or []] == [
        ("topic", True, "what about")
    ]
    assert str(missing.value) == "Missing required argument 'topic' for prompt 'brief'"
    assert str(short.value) == (
        "Invalid value for argument 'minutes' of prompt 'visit': Input should be greater than or"
        " equal to 5"
    )


async def test_elicit_with_a_model_returns_a_validated_instance() -> None:
    elicitation = ScriptedElicitation({"name": "Ada"}, {"name": ""})
    with trio.fail_after(5):
        async with open_test_client(
            shelter(), handlers=Handlers(elicitation=elicitation)
        ) as client:
            accepted = await client.call_tool("register", {})
            with pytest.raises(McpError, match="elicitation answer does not fit: String should"):
                await client.call_tool("register", {})
    assert text(accepted) == "accept: Owner(name='Ada')"
    requested = elicitation.requests[0].requested_schema
    assert requested["properties"]["name"] == {
        "description": "the owner's name",
        "minLength": 1,
        "title": "Name",
        "type": "string",
    }
    assert requested["required"] == ["name"]


def test_a_model_with_a_field_pydantic_cannot_describe_is_refused_naming_it() -> None:
    class Opaque:
        pass

    class Holder(BaseModel):
        model_config = {"arbitrary_types_allowed": True}
        thing: Opaque

    def keep(holder: Holder) -> str:
        return ""

    with pytest.raises(
        ValueError,
        match=r"Tool 'keep': parameter 'holder' of .*keep\(\) in .*test_pydantic_tools.py:\d+"
        r" has type Holder, and Opaque in it has no JSON Schema; supported types are .* pydantic",
    ):
        make_tool(keep)


def test_a_server_without_pydantic_never_imports_it() -> None:
    program = (
        "import sys, msgspec, dataclasses, mcptrio\n"
        "from typing import Annotated\n"
        "class P(msgspec.Struct):\n    x: int\n"
        "server = mcptrio.Server('s')\n"
        "@server.tool\n"
        "def f(p: P, n: Annotated[int, msgspec.Meta(ge=1)] = 1) -> P:\n    return p\n"
        "@server.prompt\n"
        "def g(n: int) -> str:\n    return ''\n"
        "print('pydantic' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "False"
