"""Completion: per-argument completers, the global handler, validation, limits, and the wire."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
import trio
import trio.lowlevel
from contexts import LATEST, context_for
from eras import only

import mcptrio
from mcptrio.protocol.base import Request, Result
from mcptrio.protocol.codec import encode
from mcptrio.protocol.errors import InvalidParams, McpError
from mcptrio.protocol.types import (
    CompleteArgument,
    CompleteContext,
    CompleteRequest,
    CompleteResult,
    Completion,
    PromptReference,
    ResourceTemplateReference,
    ServerCapabilities,
)
from mcptrio.runtime.context import RequestContext
from mcptrio.server.completion import (
    ArgumentCompleter,
    Completer,
    CompletionEngine,
    read_completions,
)
from mcptrio.server.context import Context
from mcptrio.server.prompts import RegisteredPrompt, make_prompt
from mcptrio.server.registry import Registry

from conftest import as_received, open_recorded_client
from schema_validation import HANDSHAKE_REVISIONS, validate_message

LANGUAGES = ["python", "pytorch", "pyside", "Python2", "rust", "ruby"]


@dataclass
class Template:
    """What the engine needs of a resource template: its variables and their completers."""

    uri_template: str
    variables: tuple[str, ...]
    completions: dict[str, ArgumentCompleter] = field(default_factory=dict)


def code_review(language: str, framework: str = "", code: str = "") -> str:
    return f"{language} {framework} {code}"


def frameworks(value: str, arguments: Mapping[str, str]) -> list[str]:
    by_language = {"python": ["flask", "fastapi", "django"], "rust": ["axum", "actix"]}
    return [f for f in by_language.get(arguments.get("language", ""), []) if f.startswith(value)]


class Setup:
    def __init__(self, **completions: Completer | Sequence[str]) -> None:
        self.prompts: Registry[RegisteredPrompt] = Registry("A prompt named {key!r}")
        self.prompts.add("code_review", make_prompt(code_review, completions=completions))
        variables = ("owner", "name")
        owner_completer = {"owner": ["alice", "albert", "bob"]}
        self.templates = {
            "repo://{owner}/{name}": Template(
                "repo://{owner}/{name}",
                variables,
                read_completions(owner_completer, variables, "Template"),
            )
        }
        self.engine = CompletionEngine(self.prompts, self.templates)


def make_context(revision: str = LATEST) -> Context:
    request = CompleteRequest(
        ref=PromptReference(name="x"), argument=CompleteArgument(name="x", value="")
    )
    return context_for(request, revision)


def prompt_request(
    argument: str, value: str, context: dict[str, str] | None = None, name: str = "code_review"
) -> CompleteRequest:
    return CompleteRequest(
        ref=PromptReference(name=name),
        argument=CompleteArgument(name=argument, value=value),
        context=None if context is None else CompleteContext(arguments=context),
    )


def template_request(uri: str, argument: str, value: str) -> CompleteRequest:
    return CompleteRequest(
        ref=ResourceTemplateReference(uri=uri),
        argument=CompleteArgument(name=argument, value=value),
    )


async def complete(
    setup: Setup, request: CompleteRequest, revision: str = LATEST
) -> dict[str, Any]:
    received = as_received(request, revision)
    result = await setup.engine.complete(make_context(revision), received)
    completion: dict[str, Any] = msgspec.json.decode(encode(result))["completion"]
    return completion


# ------------------------------------------------------------------ completers


async def test_a_list_completes_by_case_sensitive_prefix_in_its_order() -> None:
    setup = Setup(language=LANGUAGES)
    assert await complete(setup, prompt_request("language", "py")) == {
        "values": ["python", "pytorch", "pyside"],
        "total": 3,
        "hasMore": False,
    }
    assert (await complete(setup, prompt_request("language", "")))["values"] == LANGUAGES


async def test_a_template_variable_completes_from_its_list() -> None:
    setup = Setup()
    completion = await complete(setup, template_request("repo://{owner}/{name}", "owner", "al"))
    assert completion["values"] == ["alice", "albert"]


async def test_a_callable_gets_the_other_resolved_arguments() -> None:
    seen: list[tuple[str, dict[str, str]]] = []

    def remember(value: str, arguments: Mapping[str, str]) -> list[str]:
        seen.append((value, dict(arguments)))
        return frameworks(value, arguments)

    setup = Setup(framework=remember)
    context = {"language": "python", "framework": "ignored", "unknown": "dropped"}
    completion = await complete(setup, prompt_request("framework", "f", context))
    assert completion == {"values": ["flask", "fastapi"], "total": 2, "hasMore": False}
    assert seen == [("f", {"language": "python"})]


async def test_before_2025_06_18_the_context_is_not_used() -> None:
    seen: list[dict[str, str]] = []

    def remember(value: str, arguments: Mapping[str, str]) -> list[str]:
        seen.append(dict(arguments))
        return []

    setup = Setup(framework=remember)
    await complete(setup, prompt_request("framework", "", {"language": "rust"}), "2025-03-26")
    assert seen == [{}]


async def test_async_completers_and_generators_work() -> None:
    async def slow(value: str, arguments: Mapping[str, str]) -> list[str]:
        await trio.lowlevel.checkpoint()
        return [value + "!"]

    def lazy(value: str, arguments: Mapping[str, str]) -> Any:
        return (word for word in ("go", "gleam") if word.startswith(value))

    setup = Setup(language=lazy, code=slow)
    assert (await complete(setup, prompt_request("language", "gl")))["values"] == ["gleam"]
    assert (await complete(setup, prompt_request("code", "x")))["values"] == ["x!"]


async def test_sync_completers_run_in_a_worker_thread() -> None:
    threads: list[threading.Thread] = []

    def record(value: str, arguments: Mapping[str, str]) -> list[str]:
        threads.append(threading.current_thread())
        return []

    await complete(Setup(language=record), prompt_request("language", ""))
    assert threads and threads[0] is not threading.main_thread()


async def test_a_completer_may_ask_for_the_context() -> None:
    revisions: list[str] = []

    async def by_revision(value: str, arguments: Mapping[str, str], ctx: Context) -> list[str]:
        revisions.append(ctx.revision)
        return [ctx.revision]

    setup = Setup(language=by_revision)
    completion = await complete(setup, prompt_request("language", ""), "2025-06-18")
    assert completion["values"] == ["2025-06-18"]
    assert revisions == ["2025-06-18"]


async def test_at_most_100_values_with_total_and_has_more() -> None:
    setup = Setup(language=[f"lang{i:03}" for i in range(250)])
    completion = await complete(setup, prompt_request("language", "lang"))
    assert completion["values"] == [f"lang{i:03}" for i in range(100)]
    assert completion["total"] == 250
    assert completion["hasMore"] is True
    exactly = await complete(setup, prompt_request("language", "lang1"))
    assert len(exactly["values"]) == 100 and exactly["hasMore"] is False


async def test_an_argument_without_completer_gets_no_values() -> None:
    assert await complete(Setup(), prompt_request("language", "py")) == {"values": []}
    name = await complete(Setup(), template_request("repo://{owner}/{name}", "name", "m"))
    assert name == {"values": []}


async def test_a_completer_giving_non_strings_is_an_error() -> None:
    def numbers(value: str, arguments: Mapping[str, str]) -> list[int]:
        return [1, 2]

    with pytest.raises(TypeError, match="not a string"):
        await complete(Setup(language=numbers), prompt_request("language", ""))


# ------------------------------------------------------------------ validation


async def test_an_unknown_prompt_gets_invalid_params() -> None:
    with pytest.raises(InvalidParams, match="Unknown prompt: 'nope'") as info:
        await complete(Setup(), prompt_request("language", "", name="nope"))
    assert info.value.code == -32602


async def test_an_unknown_template_gets_invalid_params() -> None:
    with pytest.raises(InvalidParams, match="Unknown resource template"):
        await complete(Setup(), template_request("file:///{path}", "path", ""))


async def test_an_argument_the_reference_lacks_gets_invalid_params() -> None:
    with pytest.raises(InvalidParams, match="has no argument 'colour'"):
        await complete(Setup(), prompt_request("colour", ""))
    with pytest.raises(InvalidParams, match="has no argument 'path'"):
        await complete(Setup(), template_request("repo://{owner}/{name}", "path", ""))


# ------------------------------------------------------------------ global handler


async def test_the_global_handler_answers_first_and_none_falls_through() -> None:
    calls: list[tuple[Any, ...]] = []

    async def handler(
        ref: PromptReference | ResourceTemplateReference,
        argument: CompleteArgument,
        context: CompleteContext | None,
    ) -> list[str] | None:
        calls.append((ref, argument.name, context))
        if argument.name == "code":
            return ["print()"]
        return None

    setup = Setup(language=LANGUAGES)
    setup.engine.set_handler(handler)
    assert (await complete(setup, prompt_request("code", "")))["values"] == ["print()"]
    assert (await complete(setup, prompt_request("language", "ru")))["values"] == ["rust", "ruby"]
    assert calls[0] == (PromptReference(name="code_review"), "code", None)


async def test_the_global_handler_gets_the_context_from_2025_06_18() -> None:
    contexts: list[CompleteContext | None] = []

    def handler(ref: Any, argument: CompleteArgument, context: CompleteContext | None) -> None:
        contexts.append(context)

    setup = Setup()
    setup.engine.set_handler(handler)
    request = prompt_request("framework", "", {"language": "python"})
    await complete(setup, request, "2025-06-18")
    await complete(setup, request, "2025-03-26")
    assert contexts == [CompleteContext(arguments={"language": "python"}), None]


async def test_a_handler_completion_is_capped_at_100() -> None:
    def handler(ref: Any, argument: Any, context: Any, ctx: Context) -> Completion:
        assert isinstance(ctx, Context)
        return Completion(values=[str(i) for i in range(150)], total=1000)

    setup = Setup()
    setup.engine.set_handler(handler)
    completion = await complete(setup, prompt_request("language", ""))
    assert len(completion["values"]) == 100
    assert completion["total"] == 1000 and completion["hasMore"] is True


async def test_unknown_references_are_refused_before_the_handler_runs() -> None:
    calls: list[Any] = []
    setup = Setup()
    setup.engine.set_handler(lambda ref, argument, context: calls.append(ref))
    with pytest.raises(InvalidParams):
        await complete(setup, prompt_request("language", "", name="nope"))
    assert calls == []


def test_a_second_handler_is_refused() -> None:
    engine = Setup().engine
    engine.set_handler(lambda ref, argument, context: None)
    with pytest.raises(ValueError, match="already set"):
        engine.set_handler(lambda ref, argument, context: None)
    engine.set_handler(None)
    assert engine.handler is None


def test_has_any_sees_completers_and_the_handler() -> None:
    empty = Setup()
    empty.templates.clear()
    assert empty.engine.has_any() is False
    assert Setup().engine.has_any() is True  # the template's owner completer
    empty.engine.set_handler(lambda ref, argument, context: None)
    assert empty.engine.has_any() is True
    prompts_only = Setup(language=LANGUAGES)
    prompts_only.templates.clear()
    assert prompts_only.engine.has_any() is True


# ------------------------------------------------------------------ on the wire


class CompletionServer(mcptrio.Server):
    """A server whose completion/complete goes to a CompletionEngine."""

    def __init__(self, engine: CompletionEngine) -> None:
        super().__init__("completion-test")
        self.completion_engine = engine

    def capabilities(self) -> ServerCapabilities:
        return msgspec.structs.replace(super().capabilities(), completions={})

    async def handle_request(self, ctx: RequestContext, request: Request[Any]) -> Result:
        if isinstance(request, CompleteRequest):
            return await self.completion_engine.complete(Context(ctx, self), request)
        return await super().handle_request(ctx, request)


@asynccontextmanager
async def open_completion_client(revision: str) -> AsyncIterator[tuple[mcptrio.Client, Any]]:
    setup = Setup(language=LANGUAGES, framework=frameworks)
    async with open_recorded_client(CompletionServer(setup.engine), revisions=only(revision)) as (
        client,
        wire,
        _,
    ):
        assert client.protocol_version == revision
        yield client, wire


@pytest.mark.parametrize("revision", HANDSHAKE_REVISIONS)
async def test_completion_on_the_wire(revision: str) -> None:
    with_context = revision >= "2025-06-18"
    with trio.fail_after(5):
        async with open_completion_client(revision) as (client, wire):
            result = await client.request(prompt_request("language", "py"))
            first = wire.server_to_client[-1]
            request = prompt_request(
                "framework", "fa", {"language": "python"} if with_context else None
            )
            await client.request(request)
            sent = wire.client_to_server[-1]
            second = wire.server_to_client[-1]
            await client.request(template_request("repo://{owner}/{name}", "owner", "b"))
            third = wire.server_to_client[-1]
    assert isinstance(result, CompleteResult)
    assert first["result"] == {
        "completion": {"values": ["python", "pytorch", "pyside"], "total": 3, "hasMore": False}
    }
    assert ("context" in sent["params"]) == with_context
    validate_message(sent, revision, "client")
    expected = ["fastapi"] if with_context else []
    assert second["result"]["completion"]["values"] == expected
    assert third["result"]["completion"]["values"] == ["bob"]
    for answer in (first, second, third):
        validate_message(answer, revision, "CompleteResult")


async def test_an_unknown_reference_gets_invalid_params_on_the_wire() -> None:
    with trio.fail_after(5):
        async with open_completion_client(LATEST) as (client, wire):
            with pytest.raises(McpError) as info:
                await client.request(prompt_request("language", "", name="nope"))
            error = wire.server_to_client[-1]
            # The session carries on after the error.
            await client.request(prompt_request("language", "r"))
    assert info.value.code == -32602
    assert error["error"]["code"] == -32602
    validate_message(error, LATEST)
