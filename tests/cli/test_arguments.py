"""``NAME=VALUE`` and ``NAME:=JSON`` arguments of ``call`` and ``prompt``, typed by the tool's
``inputSchema``."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from mcptrio.cli.arguments import (
    is_assignment,
    read_assignments,
    string_arguments,
    typed_arguments,
)
from mcptrio.cli.errors import EXIT_USAGE, CliError


class Point(msgspec.Struct):
    x: int
    y: int


def schema_of(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def typed(words: list[str], schema: dict[str, Any] | None, base: Any = None) -> dict[str, Any]:
    return typed_arguments("tool", base, read_assignments(words), schema)


def refusal(words: list[str], schema: dict[str, Any] | None) -> str:
    with pytest.raises(CliError) as raised:
        typed(words, schema)
    assert raised.value.code == EXIT_USAGE
    return raised.value.message


@pytest.mark.parametrize(
    ("schema", "text", "value"),
    [
        ({"type": "integer"}, "42", 42),
        ({"type": "integer"}, "-7", -7),
        ({"type": "number"}, "2.5", 2.5),
        ({"type": "number"}, "3", 3),
        ({"type": "number"}, "1e3", 1000.0),
        ({"type": "boolean"}, "true", True),
        ({"type": "boolean"}, "False", False),
        ({"type": "string"}, "42", "42"),
        ({"type": "array", "items": {"type": "number"}}, "[1, 2.5]", [1, 2.5]),
        ({"type": "object"}, '{"k": 1}', {"k": 1}),
        ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, "5", 5),
        ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, "null", None),
        ({"type": ["integer", "string"]}, "5", 5),
        ({"type": ["integer", "string"]}, "five", "five"),
        ({"enum": ["red", "green"]}, "red", "red"),
        ({"enum": [1, 2]}, "2", 2),
        ({}, "anything", "anything"),
        ({"anyOf": [{"type": "integer"}, {}]}, "5", "5"),
    ],
)
def test_a_value_takes_the_type_the_schema_gives(schema: Any, text: str, value: Any) -> None:
    converted = typed([f"a={text}"], schema_of(a=schema))["a"]
    assert converted == value
    assert type(converted) is type(value)


def test_types_are_read_through_references_as_msgspec_writes_them() -> None:
    schema = msgspec.json.schema(dict[str, Point])
    tool_schema = {
        "type": "object",
        "properties": {"at": {"$ref": "#/$defs/Point"}, "n": {"type": "integer"}},
        "$defs": schema["$defs"],
    }
    assert typed(['at={"x": 1, "y": 2}', "n=3"], tool_schema) == {"at": {"x": 1, "y": 2}, "n": 3}


def test_a_name_the_schema_does_not_know_or_an_unlisted_tool_keeps_strings() -> None:
    assert typed(["a=1", "b=true"], schema_of(a={"type": "integer"})) == {"a": 1, "b": "true"}
    assert typed(["a=1"], None) == {"a": "1"}


def test_json_after_colon_equals_is_taken_as_it_is() -> None:
    schema = schema_of(a={"type": "string"}, b={"type": "integer"})
    assert typed(['a:="x"', "b:=[1]", "c:=null"], schema) == {"a": "x", "b": [1], "c": None}


def test_assignments_set_their_names_over_the_json_object() -> None:
    schema = schema_of(a={"type": "integer"})
    assert typed(["a=2"], schema, base={"a": 1, "b": "kept"}) == {"a": 2, "b": "kept"}


@pytest.mark.parametrize(
    ("schema", "text", "expected"),
    [
        ({"type": "integer"}, "x", "expected an integer, got 'x'"),
        ({"type": "integer"}, "1.5", "expected an integer, got '1.5'"),
        ({"type": "number"}, "nan", "expected a number, got 'nan'"),
        ({"type": "boolean"}, "yes", "expected a boolean (true or false), got 'yes'"),
        ({"type": "array"}, "1,2", "expected a JSON array, got '1,2'"),
        ({"type": "object"}, "[1]", "expected a JSON object, got '[1]'"),
        (
            {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "none",
            "expected null or an integer, got 'none'",
        ),
    ],
)
def test_a_value_that_cannot_be_converted_is_one_line_naming_argument_and_type(
    schema: Any, text: str, expected: str
) -> None:
    message = refusal([f"count={text}"], schema_of(count=schema))
    assert message == (f"tool tool, argument count: {expected} (count:=JSON gives any JSON value)")


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["a=1", "a=2"], "argument a is given twice"),
        (["a:={bad"], "argument a: a:= takes JSON (Expecting property name"),
        (["-a=1"], "'-a=1' is not an argument: give NAME=VALUE, NAME:=JSON or one JSON object"),
        (["plain"], "'plain' is not an argument"),
    ],
)
def test_words_that_are_not_arguments_are_usage_errors(words: list[str], message: str) -> None:
    with pytest.raises(CliError) as raised:
        read_assignments(words)
    assert raised.value.code == EXIT_USAGE
    assert raised.value.message.startswith(message)


@pytest.mark.parametrize(
    ("word", "is_one"),
    [
        ("a=1", True),
        ("snake_case.dotted-name=x", True),
        ("a:=[1]", True),
        ("a=", True),
        ("--port=3", False),
        ("server.py", False),
        ("http://h/?a=b", False),
        ('{"a": 1}', False),
    ],
)
def test_what_counts_as_an_argument(word: str, is_one: bool) -> None:
    assert is_assignment(word) is is_one


def test_prompt_arguments_are_strings_from_either_form() -> None:
    assignments = read_assignments(["city=Oslo", 'days:="3"'])
    assert string_arguments({"lang": "en"}, assignments) == {
        "lang": "en",
        "city": "Oslo",
        "days": "3",
    }
    assert string_arguments(None, []) is None
    with pytest.raises(CliError) as raised:
        string_arguments(None, read_assignments(["days:=3"]))
    assert raised.value.message == "prompt arguments are strings: days is 3"
