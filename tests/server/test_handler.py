"""The handler-signature reader: one set of rules for tools, resources, templates, prompts,
completers and the completion handler (injection, calling, generators, signature errors)."""

from __future__ import annotations

import inspect
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Annotated, Any

import pytest
import trio

import mcptrio
from mcptrio.protocol.types import PromptReference, TextContent
from mcptrio.runtime.context import RequestContext
from mcptrio.server.context import Context
from mcptrio.server.handler import Mode, read_handler

KINDS = ["tool", "resource", "template", "prompt", "completer", "completion handler"]


def register(server: mcptrio.Server, kind: str, fn: Callable[..., Any]) -> None:
    """Register ``fn`` as ``kind`` on ``server``, under the names :func:`invoke` uses."""
    if kind == "tool":
        server.add_tool(fn, name="t")
    elif kind == "resource":
        server.add_resource(fn, "test://r")
    elif kind == "template":
        # The template's variable is ``a``; ``b`` and ``c`` are optional query variables.
        server.add_resource(fn, "test://t/{a}{?b,c}")
    elif kind == "prompt":
        server.add_prompt(fn, name="p")
    elif kind == "completer":
        server.add_prompt(lambda topic: topic, name="p", completions={"topic": fn})
    else:
        server.add_prompt(lambda topic: topic, name="p")
        server.completion(fn)


async def invoke(client: mcptrio.Client, kind: str) -> Any:
    """What ``kind``'s function answered, in the shape the client sees."""
    if kind == "tool":
        return [block.text for block in (await client.call_tool("t")).content]  # type: ignore[union-attr]
    if kind in ("resource", "template"):
        uri = "test://r" if kind == "resource" else "test://t/1"
        return [c.text for c in (await client.read_resource(uri)).contents]
    if kind == "prompt":
        messages = (await client.get_prompt("p")).messages
        return [m.content.text for m in messages]  # type: ignore[union-attr]
    completion = await client.complete(PromptReference(name="p"), "topic", "")
    return completion.completion.values


#: What each kind's answer is when its function returns (or yields) the one value "ok".
OK = {
    "tool": ["ok"],
    "resource": ['["ok"]'],
    "template": ['["ok"]'],
    "prompt": ["ok"],
    "completer": ["ok"],
    "completion handler": ["ok"],
}


async def run(kind: str, fn: Callable[..., Any]) -> Any:
    server = mcptrio.Server("reader")
    register(server, kind, fn)
    with trio.fail_after(10):
        async with mcptrio.open_client(server) as client:
            return await invoke(client, kind)


# Every test function takes the values of every kind: up to three, each optional (a template's
# variable ``a`` and its query variables, a completer's value and arguments, the completion
# handler's ref, argument and context), plus the context.


@pytest.mark.parametrize("kind", KINDS)
async def test_every_kind_gets_the_context_by_annotation_in_any_position(kind: str) -> None:
    seen: list[Any] = []

    async def handler(
        first: Context,
        a: Any = None,
        b: Any = None,
        c: Any = None,
        *,
        maybe: Context | None = None,
        annotated: Annotated[Context, "the context"],
    ) -> list[str]:
        seen.extend([first, maybe, annotated])
        return ["ok"]

    assert await run(kind, handler) == OK[kind]
    assert len(seen) == 3 and all(isinstance(ctx, Context) for ctx in seen)
    assert seen[0] is seen[1] is seen[2]


@pytest.mark.parametrize("kind", KINDS)
async def test_every_kind_runs_sync_functions_in_a_worker_thread(kind: str) -> None:
    threads: list[threading.Thread] = []

    def handler(a: Any = None, b: Any = None, c: Any = None) -> list[str]:
        threads.append(threading.current_thread())
        return ["ok"]

    assert await run(kind, handler) == OK[kind]
    assert threads and threads[0] is not threading.current_thread()


@pytest.mark.parametrize("kind", KINDS)
async def test_every_kind_runs_async_functions_in_the_request_task(kind: str) -> None:
    threads: list[threading.Thread] = []

    async def handler(a: Any = None, b: Any = None, c: Any = None) -> list[str]:
        await trio.lowlevel.checkpoint()
        threads.append(threading.current_thread())
        return ["ok"]

    assert await run(kind, handler) == OK[kind]
    assert threads == [threading.current_thread()]


@pytest.mark.parametrize("kind", KINDS)
async def test_every_kind_collects_a_generator_in_a_worker_thread(kind: str) -> None:
    threads: list[threading.Thread] = []

    def handler(a: Any = None, b: Any = None, c: Any = None) -> Iterator[str]:
        threads.append(threading.current_thread())
        yield "ok"

    assert await run(kind, handler) == OK[kind]
    assert threads and threads[0] is not threading.current_thread()


@pytest.mark.parametrize("kind", KINDS)
async def test_every_kind_collects_an_async_generator_in_the_request_task(kind: str) -> None:
    async def handler(
        a: Any = None, b: Any = None, c: Any = None, ctx: Context | None = None
    ) -> AsyncIterator[str]:
        assert isinstance(ctx, Context)
        await trio.lowlevel.checkpoint()
        yield "ok"

    assert await run(kind, handler) == OK[kind]


# ------------------------------------------------------------------ errors at registration


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_refuses_a_request_context_parameter(kind: str) -> None:
    def handler(ctx: RequestContext, a: Any = None, b: Any = None, c: Any = None) -> str:
        return "never"

    with pytest.raises(ValueError, match=r"annotated RequestContext; annotate it mcptrio\.Context"):
        register(mcptrio.Server("reader"), kind, handler)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("star", ["args", "kwargs"])
def test_every_kind_refuses_star_parameters(kind: str, star: str) -> None:
    def with_args(a: Any = None, b: Any = None, c: Any = None, *rest: Any) -> str:
        return ""

    def with_kwargs(a: Any = None, b: Any = None, c: Any = None, **rest: Any) -> str:
        return ""

    with pytest.raises(ValueError, match=r"\*args and \*\*kwargs are not supported"):
        register(mcptrio.Server("reader"), kind, with_args if star == "args" else with_kwargs)


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_names_an_unresolvable_hint_at_registration(kind: str) -> None:
    def handler(a: Undefined = None, b: Any = None, c: Any = None) -> str:  # type: ignore[name-defined]  # noqa: F821
        return ""

    with pytest.raises(ValueError, match=r"cannot resolve a type hint \(name 'Undefined'"):
        register(mcptrio.Server("reader"), kind, handler)


def test_hints_naming_classes_local_to_the_registering_code_resolve() -> None:
    class Local:
        pass

    def handler(ctx: Context, a: Local | None = None) -> str:
        return ""

    handler_read = read_handler(handler, "Test")
    assert handler_read.context_names == ("ctx",)
    assert handler_read.parameters[0].annotation == Local | None


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (lambda value: [], r"called with 2 values \(value, arguments\), but .* takes 1"),
        (lambda value, arguments, more: [], r"also requires 'more'"),
    ],
)
def test_a_completer_that_cannot_take_its_values_is_refused(
    fn: Callable[..., Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        register(mcptrio.Server("reader"), "completer", fn)


def test_a_completion_handler_that_cannot_take_its_values_is_refused() -> None:
    with pytest.raises(ValueError, match=r"called with 3 values \(ref, argument, context\)"):
        mcptrio.Server("reader").completion(lambda ref, argument: None)


# ------------------------------------------------------------------ the reader itself


def test_the_reader_sees_how_a_function_runs() -> None:
    def plain() -> None:
        pass

    async def coroutine() -> None:
        pass

    def generator() -> Iterator[int]:
        yield 1

    async def async_generator() -> AsyncIterator[int]:
        yield 1

    class Callable_:
        async def __call__(self) -> None:
            pass

    modes = [
        read_handler(fn, "Test").mode
        for fn in (plain, coroutine, generator, async_generator, Callable_())
    ]
    assert modes == [Mode.SYNC, Mode.ASYNC, Mode.GENERATOR, Mode.ASYNC_GENERATOR, Mode.ASYNC]


def test_a_generator_return_annotation_reads_as_a_list() -> None:
    def numbers() -> Iterator[int]:
        yield 1

    async def words() -> AsyncIterator[str]:
        yield ""

    def bare():  # type: ignore[no-untyped-def]
        yield 1

    assert read_handler(numbers, "Test").returns == list[int]
    assert read_handler(words, "Test").returns == list[str]
    assert read_handler(bare, "Test").returns is inspect.Parameter.empty


async def test_an_async_function_is_awaited_with_its_values_and_its_value_returned() -> None:
    async def add(a: int, b: int) -> int:
        await trio.lowlevel.checkpoint()
        return a + b

    handler = read_handler(add, "Test")
    assert await handler.call(None, {"a": 1, "b": 2}) == 3  # type: ignore[arg-type]


async def test_positional_only_parameters_are_passed_positionally() -> None:
    def pair(a: int, ctx: Context, /, b: int) -> str:
        return f"{a} {type(ctx).__name__} {b}"

    server = mcptrio.Server("reader")
    server.add_tool(pair)
    with trio.fail_after(10):
        async with mcptrio.open_client(server) as client:
            result = await client.call_tool("pair", {"a": 1, "b": 2})
    assert result.content == [TextContent(text="1 Context 2")]
