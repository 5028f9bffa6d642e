"""Prompts: signature -> arguments, rendering, per-revision shapes, the registry, and the wire."""

from __future__ import annotations

import enum
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal

import msgspec
import pytest
import trio
from contexts import LATEST, as_json, context_for
from eras import only

import mcptrio
from mcptrio.protocol.errors import InvalidParams, McpError
from mcptrio.protocol.types import (
    Annotations,
    AudioContent,
    EmbeddedResource,
    GetPromptRequest,
    GetPromptResult,
    Icon,
    ImageContent,
    ListPromptsRequest,
    PromptMessage,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from mcptrio.server.context import Context
from mcptrio.server.prompts import (
    RegisteredPrompt,
    assistant,
    make_prompt,
    to_prompt_messages,
    user,
)

from conftest import as_sent, open_recorded_client
from schema_validation import HANDSHAKE_REVISIONS, validate_definition, validate_message


async def render(
    prompt: RegisteredPrompt, arguments: dict[str, str] | None = None
) -> GetPromptResult:
    """What the prompt renders, in the newest shape."""
    return await prompt.render(context_for(GetPromptRequest(name="x")), arguments)


# ------------------------------------------------------------------ description


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


def code_review(
    code: Annotated[str, msgspec.Meta(description="The code to review", title="Code")],
    language: Annotated[str, "Language of the code"] = "python",
    ctx: Context | None = None,
) -> str:
    """Asks the LLM to review code.

    Indented lines are cleaned like inspect.getdoc does.
    """
    return f"Review this {language} code:\n{code}"


def test_arguments_come_from_the_signature() -> None:
    prompt = make_prompt(code_review)
    assert prompt.name == "code_review"
    assert [(a.name, a.required) for a in prompt.arguments] == [
        ("code", True),
        ("language", False),
    ]
    assert prompt.arguments[0].description == "The code to review"
    assert prompt.arguments[0].title == "Code"
    assert prompt.arguments[1].description == "Language of the code"
    assert prompt.description == (
        "Asks the LLM to review code.\n\nIndented lines are cleaned like inspect.getdoc does."
    )


def test_a_context_parameter_is_not_an_argument() -> None:
    def with_context(topic: str, ctx: Context) -> str:
        return topic

    def with_optional_context(ctx: Annotated[Context | None, "the request"], topic: str) -> str:
        return topic

    assert [a.name for a in make_prompt(with_context).arguments] == ["topic"]
    assert [a.name for a in make_prompt(with_optional_context).arguments] == ["topic"]


def test_explicit_name_and_description_win() -> None:
    prompt = make_prompt(code_review, name="review", description="Reviews code")
    assert prompt.name == "review"
    assert prompt.definition.description == "Reviews code"


def test_definition_leaves_out_what_a_revision_lacks() -> None:
    def greet(name: Annotated[str, msgspec.Meta(title="Name")]) -> str:
        return name

    icon = Icon(src="https://example.com/i.png", mime_type="image/png", sizes=["48x48"])
    prompt = make_prompt(greet, title="Greeting", icons=[icon], meta={"k": 1})
    old = as_json(as_sent(prompt.definition, "2025-03-26"))
    assert old == {"name": "greet", "arguments": [{"name": "name", "required": True}]}
    middle = as_json(as_sent(prompt.definition, "2025-06-18"))
    assert middle == {
        "name": "greet",
        "title": "Greeting",
        "arguments": [{"name": "name", "title": "Name", "required": True}],
        "_meta": {"k": 1},
    }
    latest = as_json(prompt.definition)
    assert latest == {
        **middle,
        "icons": [
            {"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"]}
        ],
    }
    for revision in HANDSHAKE_REVISIONS:
        validate_definition(as_json(as_sent(prompt.definition, revision)), revision, "Prompt")


def test_definition_is_built_once() -> None:
    prompt = make_prompt(code_review)
    assert prompt.definition is prompt.definition


def test_a_prompt_without_arguments_lists_none() -> None:
    def hello() -> str:
        return "hello"

    assert as_json(make_prompt(hello).definition) == {"name": "hello"}


def test_var_arguments_are_refused() -> None:
    def star(*topics: str) -> str:
        return ""

    with pytest.raises(ValueError, match=r"\*args and \*\*kwargs"):
        make_prompt(star)


def test_completions_for_an_unknown_argument_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown argument 'lang'"):
        make_prompt(code_review, completions={"lang": ["python"]})


def test_a_bare_string_is_not_a_completer() -> None:
    with pytest.raises(TypeError, match="sequence of strings"):
        make_prompt(code_review, completions={"language": "python"})


def test_completions_are_kept_per_argument() -> None:
    def complete_code(value: str, arguments: dict[str, str]) -> list[str]:
        return []

    prompt = make_prompt(
        code_review, completions={"language": ["python", "rust"], "code": complete_code}
    )
    sources = {name: completer.source for name, completer in prompt.completions.items()}
    assert sources == {"language": ("python", "rust"), "code": complete_code}


# ------------------------------------------------------------------ rendering


async def test_a_string_becomes_one_user_message_with_the_description() -> None:
    result = await render(make_prompt(code_review), {"code": "x = 1"})
    assert as_json(result) == {
        "description": make_prompt(code_review).description,
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Review this python code:\nx = 1"}}
        ],
    }


async def test_typed_arguments_are_converted_from_strings() -> None:
    seen: dict[str, Any] = {}

    async def typed(
        count: int,
        ratio: float,
        loud: bool,
        color: Color,
        mode: Literal["short", "long"] = "short",
    ) -> str:
        seen.update(count=count, ratio=ratio, loud=loud, color=color, mode=mode)
        return "ok"

    arguments = {"count": "3", "ratio": "0.5", "loud": "true", "color": "red", "mode": "long"}
    await render(make_prompt(typed), arguments)
    assert seen == {"count": 3, "ratio": 0.5, "loud": True, "color": Color.RED, "mode": "long"}


async def test_a_value_that_does_not_convert_gets_invalid_params_naming_it() -> None:
    def typed(count: int) -> str:
        return str(count)

    with pytest.raises(InvalidParams, match="'count'") as info:
        await render(make_prompt(typed), {"count": "many"})
    assert info.value.code == -32602


async def test_annotated_constraints_apply_to_string_arguments() -> None:
    def short(code: Annotated[str, msgspec.Meta(max_length=3)]) -> str:
        return code

    with pytest.raises(InvalidParams, match="'code'"):
        await render(make_prompt(short), {"code": "too long"})


async def test_a_missing_required_argument_gets_invalid_params_naming_it() -> None:
    with pytest.raises(InvalidParams, match="Missing required argument 'code'"):
        await render(make_prompt(code_review), {"language": "go"})
    with pytest.raises(InvalidParams, match="'code'"):
        await render(make_prompt(code_review), None)


async def test_an_unknown_argument_gets_invalid_params() -> None:
    with pytest.raises(InvalidParams, match="no argument 'colour'"):
        await render(make_prompt(code_review), {"code": "x", "colour": "red"})


async def test_optional_arguments_keep_their_defaults() -> None:
    result = await render(make_prompt(code_review), {"code": "x"})
    content = result.messages[0].content
    assert isinstance(content, TextContent)
    assert content.text.startswith("Review this python code")


async def test_the_context_parameter_receives_the_request_context() -> None:
    received: list[Context] = []

    async def about(topic: str, ctx: Context) -> str:
        received.append(ctx)
        return f"{topic} in {ctx.revision}"

    ctx = context_for(GetPromptRequest(name="x"), "2025-06-18")
    result = await make_prompt(about).render(ctx, {"topic": "trio"})
    assert received == [ctx]
    assert as_json(result)["messages"][0]["content"]["text"] == "trio in 2025-06-18"


async def test_sync_functions_run_in_a_worker_thread() -> None:
    threads: list[threading.Thread] = []

    def blocking(topic: str) -> str:
        threads.append(threading.current_thread())
        return topic

    await render(make_prompt(blocking), {"topic": "x"})
    assert threads and threads[0] is not threading.main_thread()


async def test_async_functions_run_in_the_request_task() -> None:
    threads: list[threading.Thread] = []

    async def nonblocking(topic: str) -> str:
        threads.append(threading.current_thread())
        await trio.lowlevel.checkpoint()
        return topic

    await render(make_prompt(nonblocking), {"topic": "x"})
    assert threads == [threading.main_thread()]


IMAGE = ImageContent(data="iVBORw0KGgo=", mime_type="image/png")
EMBEDDED = EmbeddedResource(
    resource=TextResourceContents(uri="file:///notes.txt", mime_type="text/plain", text="notes")
)


async def test_a_list_mixing_strings_messages_and_blocks_keeps_its_order() -> None:
    def conversation() -> list[Any]:
        return ["Look at this", IMAGE, assistant("I see a picture."), user(EMBEDDED)]

    result = await render(make_prompt(conversation))
    assert as_json(result)["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Look at this"}},
        {"role": "user", "content": as_json(IMAGE)},
        {"role": "assistant", "content": {"type": "text", "text": "I see a picture."}},
        {"role": "user", "content": as_json(EMBEDDED)},
    ]
    for revision in HANDSHAKE_REVISIONS:
        validate_definition(as_json(result), revision, "GetPromptResult")


async def test_a_single_block_or_message_is_one_message() -> None:
    def image() -> ImageContent:
        return IMAGE

    def answer() -> PromptMessage:
        return assistant("Sure.")

    assert (await render(make_prompt(image))).messages == [
        PromptMessage(role="user", content=IMAGE)
    ]
    assert (await render(make_prompt(answer))).messages == [
        PromptMessage(role="assistant", content=TextContent(text="Sure."))
    ]


async def test_a_returned_get_prompt_result_passes_through() -> None:
    mine = GetPromptResult(description="custom", messages=[user("hi")], meta={"x": 1})

    async def custom() -> GetPromptResult:
        return mine

    assert await render(make_prompt(custom)) is mine


async def test_an_unusable_return_value_is_a_type_error() -> None:
    def nothing() -> None:
        return None

    def numbers() -> list[int]:
        return [1, 2]

    with pytest.raises(TypeError, match="NoneType"):
        await render(make_prompt(nothing))
    with pytest.raises(TypeError, match="int"):
        await render(make_prompt(numbers))


def test_message_helpers_refuse_other_values() -> None:
    with pytest.raises(TypeError):
        user(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        to_prompt_messages({"role": "user"})


# ------------------------------------------------------------------ revisions

AUDIO = AudioContent(
    data="UklGRg==", mime_type="audio/wav", annotations=Annotations(audience=["user"])
)
LINK = ResourceLink(
    uri="file:///project/README.md",
    name="readme",
    title="Project README",
    description="What the project is.",
    icons=[Icon(src="https://example.com/doc.png")],
    meta={"k": "v"},
)
DATED_TEXT = TextContent(
    text="dated", annotations=Annotations(priority=0.5, last_modified="2025-01-12T15:00:58Z")
)


def every_block() -> list[Any]:
    return [AUDIO, LINK, DATED_TEXT, EMBEDDED]


async def test_blocks_a_revision_lacks_are_downgraded_to_text() -> None:
    prompt = make_prompt(every_block)
    rendered = await render(prompt)
    oldest = as_json(as_sent(rendered, "2024-11-05"))["messages"]
    assert [m["content"] for m in oldest] == [
        {
            "type": "text",
            "text": "[audio (audio/wav) left out: protocol revision 2024-11-05 has no audio]",
            "annotations": {"audience": ["user"]},
        },
        {
            "type": "text",
            "text": "[resource link: Project README <file:///project/README.md>]\n"
            "What the project is.",
        },
        {"type": "text", "text": "dated", "annotations": {"priority": 0.5}},
        as_json(EMBEDDED),
    ]
    audio_era = as_json(as_sent(rendered, "2025-03-26"))["messages"]
    assert audio_era[0]["content"] == as_json(AUDIO)
    assert audio_era[1]["content"]["type"] == "text"
    links_era = as_json(as_sent(rendered, "2025-06-18"))["messages"]
    link = as_json(LINK)
    del link["icons"]
    assert links_era[1]["content"] == link
    assert links_era[2]["content"] == as_json(DATED_TEXT)
    latest = as_json(as_sent(rendered, LATEST))["messages"]
    assert latest[1]["content"] == as_json(LINK)


async def test_downgraded_results_validate_in_every_revision() -> None:
    rendered = await render(make_prompt(every_block))
    for revision in HANDSHAKE_REVISIONS:
        validate_definition(as_json(as_sent(rendered, revision)), revision, "GetPromptResult")


async def test_a_returned_result_is_fitted_to_the_revision_too() -> None:
    async def custom() -> GetPromptResult:
        return GetPromptResult(messages=[user(AUDIO)])

    result = as_sent(await render(make_prompt(custom)), "2024-11-05")
    assert isinstance(result.messages[0].content, TextContent)


# ------------------------------------------------------------------ registration


def test_a_server_keeps_prompts_in_registration_order_and_refuses_duplicates() -> None:
    server = mcptrio.Server("prompts")

    def first() -> str:
        return "1"

    def second() -> str:
        return "2"

    server.add_prompt(second)
    server.add_prompt(first)
    assert list(server.prompts) == ["second", "first"]
    with pytest.raises(ValueError, match="A prompt named 'first' is already registered"):
        server.add_prompt(first)
    assert server.remove_prompt("first") is True
    assert server.remove_prompt("first") is False
    assert list(server.prompts) == ["second"]


# ------------------------------------------------------------------ on the wire


@asynccontextmanager
async def open_prompt_client(revision: str) -> AsyncIterator[tuple[mcptrio.Client, Any]]:
    server = mcptrio.Server("prompt-test")
    server.add_prompt(code_review, title="Request Code Review")
    server.add_prompt(every_block, name="media")
    async with open_recorded_client(server, revisions=only(revision)) as (client, wire, _):
        assert client.protocol_version == revision
        yield client, wire


def last_answer(wire: Any) -> dict[str, Any]:
    answer: dict[str, Any] = wire.server_to_client[-1]
    return answer


@pytest.mark.parametrize("revision", HANDSHAKE_REVISIONS)
async def test_prompts_list_on_the_wire(revision: str) -> None:
    with trio.fail_after(5):
        async with open_prompt_client(revision) as (client, wire):
            await client.request(ListPromptsRequest())
    answer = last_answer(wire)
    validate_message(answer, revision, "ListPromptsResult")
    review = answer["result"]["prompts"][0]
    assert review["name"] == "code_review"
    assert ("title" in review) == (revision >= "2025-06-18")
    assert review["arguments"][0]["name"] == "code"
    assert review["arguments"][0]["required"] is True
    assert ("title" in review["arguments"][0]) == (revision >= "2025-06-18")
    assert [p["name"] for p in answer["result"]["prompts"]] == ["code_review", "media"]


@pytest.mark.parametrize("revision", HANDSHAKE_REVISIONS)
async def test_prompts_get_on_the_wire(revision: str) -> None:
    with trio.fail_after(5):
        async with open_prompt_client(revision) as (client, wire):
            result = await client.request(
                GetPromptRequest(name="code_review", arguments={"code": "print(1)"})
            )
            request = wire.client_to_server[-1]
            answer = last_answer(wire)
            await client.request(GetPromptRequest(name="media"))
            media = last_answer(wire)
    assert request["params"] == {"name": "code_review", "arguments": {"code": "print(1)"}}
    assert answer["result"]["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Review this python code:\nprint(1)"}}
    ]
    assert result.description == make_prompt(code_review).description
    validate_message(answer, revision, "GetPromptResult")
    validate_message(media, revision, "GetPromptResult")
    kinds = [m["content"]["type"] for m in media["result"]["messages"]]
    assert (
        kinds
        == {
            "2024-11-05": ["text", "text", "text", "resource"],
            "2025-03-26": ["audio", "text", "text", "resource"],
            "2025-06-18": ["audio", "resource_link", "text", "resource"],
            "2025-11-25": ["audio", "resource_link", "text", "resource"],
        }[revision]
    )


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        ({"name": "nope"}, "Unknown prompt"),
        ({"name": "code_review", "arguments": {}}, "Missing required argument 'code'"),
        ({"name": "code_review", "arguments": {"code": "x", "extra": "y"}}, "'extra'"),
    ],
)
async def test_bad_prompts_get_gets_invalid_params_on_the_wire(
    params: dict[str, Any], fragment: str
) -> None:
    with trio.fail_after(5):
        async with open_prompt_client(LATEST) as (client, wire):
            with pytest.raises(McpError) as info:
                await client.request(msgspec.convert(params, GetPromptRequest))
            # The session carries on after the error.
            await client.request(ListPromptsRequest())
            error = wire.server_to_client[-2]
    assert info.value.code == -32602
    assert error["error"]["code"] == -32602
    assert fragment in error["error"]["message"]
    validate_message(error, LATEST)
