"""Every ``@server.<kind>`` decorator works bare and called with options, registers exactly what
it decorates, and hands the function back unchanged."""

from __future__ import annotations

from typing import Any

import pytest

import mcptrio
from mcptrio.protocol.types import ToolAnnotations


def test_a_bare_tool_decorator_registers_the_function_and_returns_it() -> None:
    server = mcptrio.Server("decorators")

    @server.tool
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    assert list(server.tools) == ["add"]
    assert server.tools["add"].fn is add
    assert server.tools["add"].description == "Add two integers."


def test_a_called_tool_decorator_takes_options_or_a_name() -> None:
    server = mcptrio.Server("decorators")

    @server.tool()
    def plain() -> str:
        return ""

    @server.tool(name="renamed", title="Renamed", annotations=ToolAnnotations(read_only_hint=True))
    def original() -> str:
        return ""

    @server.tool("positional", description="Named by position")
    def other() -> str:
        return ""

    assert list(server.tools) == ["plain", "renamed", "positional"]
    renamed = server.tools["renamed"]
    assert (renamed.fn, renamed.title, renamed.annotations) == (
        original,
        "Renamed",
        ToolAnnotations(read_only_hint=True),
    )
    assert server.tools["positional"].description == "Named by position"
    assert callable(plain) and callable(other)


def test_a_bare_prompt_decorator_registers_the_function_and_returns_it() -> None:
    server = mcptrio.Server("decorators")

    @server.prompt
    def review(code: str) -> str:
        """Review some code."""
        return code

    assert list(server.prompts) == ["review"]
    assert server.prompts["review"].fn is review
    assert review("x") == "x"


def test_a_called_prompt_decorator_takes_options_or_a_name() -> None:
    server = mcptrio.Server("decorators")

    @server.prompt()
    def plain() -> str:
        return ""

    @server.prompt(title="Styled", completions={"style": ["terse", "long"]})
    def styled(style: str) -> str:
        return style

    @server.prompt("positional")
    def other() -> str:
        return ""

    assert list(server.prompts) == ["plain", "styled", "positional"]
    assert server.prompts["styled"].title == "Styled"
    assert server.prompts["styled"].completions["style"].source == ("terse", "long")


def test_the_resource_decorator_takes_the_uri_and_options() -> None:
    server = mcptrio.Server("decorators")

    @server.resource("config://app", mime_type="application/json")
    def config() -> dict[str, Any]:
        return {}

    @server.resource("users://{user_id}", title="A user")
    def user(user_id: int) -> str:
        return str(user_id)

    assert server.resources["config://app"].fn is config
    assert server.resources["config://app"].mime_type == "application/json"
    assert server.templates["users://{user_id}"].fn is user
    assert server.templates["users://{user_id}"].title == "A user"


def test_a_bare_resource_decorator_says_the_uri_comes_first() -> None:
    server = mcptrio.Server("decorators")

    def config() -> str:
        return ""

    with pytest.raises(TypeError, match=r"@server\.resource needs the resource's URI first"):
        server.resource(config)  # type: ignore[arg-type]
    assert not server.resources and not server.templates


def test_the_completion_decorator_works_bare_and_called() -> None:
    bare_server = mcptrio.Server("decorators")

    @bare_server.completion
    def bare(ref: Any, argument: Any, context: Any) -> None:
        return None

    called_server = mcptrio.Server("decorators")

    @called_server.completion()
    def called(ref: Any, argument: Any, context: Any) -> None:
        return None

    assert bare_server.completions.handler is bare
    assert called_server.completions.handler is called


def test_a_name_given_twice_is_refused() -> None:
    server = mcptrio.Server("decorators")
    with pytest.raises(TypeError, match="The name is given twice: 'a' and 'b'"):
        server.tool("a", name="b")
    with pytest.raises(TypeError, match="The name is given twice"):
        server.prompt("a", name="b")


def test_add_methods_take_the_decorators_options() -> None:
    server = mcptrio.Server("decorators")

    def add(a: int, b: int) -> int:
        return a + b

    tool = server.add_tool(add, name="plus", structured_output=False)
    prompt = server.add_prompt(lambda topic: topic, name="about", title="About")
    resource = server.add_resource("hello", "note://hello", title="Hello", size=5)
    assert (tool.name, tool.output_schema) == ("plus", None)
    assert (prompt.name, prompt.title) == ("about", "About")
    assert (resource.name, resource.title) == ("note://hello", "Hello")
    assert server.tools["plus"] is tool
    assert server.prompts["about"] is prompt
    assert server.resources["note://hello"] is resource
