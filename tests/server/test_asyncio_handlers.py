"""Handlers written against asyncio (``@mcptrio.asyncio_handler``) on a Trio server: they run
on the server's asyncio loop with real asyncio-only libraries (aiohttp against a local aiohttp
server, aiosqlite on a file), are cancelled by ``notifications/cancelled``, request timeouts and
server shutdown (the asyncio side sees ``CancelledError``), reach the client through the context
(progress, logging, elicitation, sampling), and fail as a Trio handler does. Threads are real
here, so the clocks are too (an autojump clock would jump while the asyncio thread works)."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import aiohttp
import aiosqlite
import pytest
import sniffio
import trio
from aiohttp import web
from eras import HANDSHAKE_ERA, only
from programs import ROOT

import mcptrio
from mcptrio.client import Handlers, NotificationCallbacks, Revisions
from mcptrio.protocol.errors import RequestTimeout
from mcptrio.protocol.types import (
    CreateMessageRequest,
    CreateMessageResult,
    ElicitRequest,
    ElicitResult,
    LoggingMessageNotification,
    PromptReference,
    TextContent,
)
from mcptrio.runtime.context import RequestContext
from mcptrio.server.context import Context

PEERS = Path(__file__).parent / "asyncio_peers"


class AsyncioWaiter:
    """An asyncio handler's wait that only cancellation ends: ``entered`` is set (in Trio) when
    the asyncio side starts waiting, ``cancelled`` when it sees ``asyncio.CancelledError``."""

    def __init__(self) -> None:
        self.token = trio.lowlevel.current_trio_token()
        self.entered = trio.Event()
        self.cancelled = trio.Event()

    def enter(self) -> None:
        """Called on the asyncio side."""
        self.token.run_sync_soon(self.entered.set)

    def saw_cancellation(self) -> None:
        """Called on the asyncio side."""
        self.token.run_sync_soon(self.cancelled.set)

    async def wait_until_cancelled(self) -> None:
        """Awaited on the asyncio side."""
        self.enter()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.saw_cancellation()
            raise


async def serve_aiohttp(
    routes: Callable[[web.Application], None], *, task_status: trio.TaskStatus[str]
) -> None:
    """An aiohttp server on 127.0.0.1, port 0, on an asyncio loop in a thread of its own (not
    the server's), until cancelled; reports its URL."""
    token = trio.lowlevel.current_trio_token()
    started = trio.Event()
    url: list[str] = []
    stop: list[Callable[[], object]] = []

    async def main() -> None:
        app = web.Application()
        routes(app)
        # A handler still running when its client goes away is cancelled, so that cleanup
        # never waits for one (aiohttp's default is to let it finish).
        runner = web.AppRunner(app, handler_cancellation=True)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        done = asyncio.Event()
        loop = asyncio.get_running_loop()
        stop.append(lambda: loop.call_soon_threadsafe(done.set))
        url.append(f"http://127.0.0.1:{runner.addresses[0][1]}/")
        token.run_sync_soon(started.set)
        await done.wait()
        await runner.cleanup()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.to_thread.run_sync, asyncio.run, main())
        await started.wait()
        task_status.started(url[0])
        try:
            await trio.sleep_forever()
        finally:
            stop[0]()


def hello_routes(app: web.Application) -> None:
    async def hello(request: web.Request) -> web.Response:
        return web.Response(text=f"hello {request.query.get('name', 'world')}")

    app.router.add_get("/hello", hello)


def make_pets(path: Path) -> Path:
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE pets (name TEXT, species TEXT)")
        db.executemany(
            "INSERT INTO pets VALUES (?, ?)", [("Tom", "cat"), ("Rex", "dog"), ("Ada", "cat")]
        )
    return path


def text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


# ---------------------------------------------------------------------- running on asyncio


async def test_a_marked_tool_resource_template_and_prompt_run_on_the_asyncio_loop() -> None:
    server = mcptrio.Server("asyncio")
    loops: list[asyncio.AbstractEventLoop] = []

    async def on_asyncio() -> str:
        await asyncio.sleep(0)
        loops.append(asyncio.get_running_loop())
        return sniffio.current_async_library()

    @server.tool
    @mcptrio.asyncio_handler
    async def where() -> str:
        return await on_asyncio()

    @server.resource("where://fixed")
    @mcptrio.asyncio_handler
    async def fixed() -> str:
        return await on_asyncio()

    @server.resource("where://{name}")
    @mcptrio.asyncio_handler
    async def named(name: str) -> str:
        return name + " " + await on_asyncio()

    @mcptrio.asyncio_handler
    async def topics(value: str, arguments: Mapping[str, str]) -> list[str]:
        return [f"{value}-{await on_asyncio()}"]

    @server.prompt(completions={"topic": topics})
    @mcptrio.asyncio_handler
    async def ask(topic: str) -> str:
        return f"{topic} {await on_asyncio()}"

    @server.tool
    async def on_trio() -> str:
        await trio.lowlevel.checkpoint()
        return sniffio.current_async_library()

    with trio.fail_after(10):
        async with mcptrio.open_client(server) as client:
            tool = await client.call_tool("where")
            resource = await client.read_resource("where://fixed")
            template = await client.read_resource("where://x")
            prompt = await client.get_prompt("ask", {"topic": "t"})
            completed = await client.complete(PromptReference(name="ask"), "topic", "t")
            trio_tool = await client.call_tool("on_trio")
    assert text(tool) == "asyncio"
    assert [getattr(c, "text", None) for c in resource.contents] == ["asyncio"]
    assert [getattr(c, "text", None) for c in template.contents] == ["x asyncio"]
    content = prompt.messages[0].content
    assert isinstance(content, TextContent) and content.text == "t asyncio"
    assert completed.completion.values == ["t-asyncio"]
    assert text(trio_tool) == "trio"
    # One loop per server: every call ran on it, and it was stopped with the server.
    assert len(set(map(id, loops))) == 1
    assert loops[0].is_closed()


async def test_a_mounted_server_and_a_task_run_marked_handlers_on_their_loops() -> None:
    loops: list[asyncio.AbstractEventLoop] = []
    child = mcptrio.Server("child")
    parent = mcptrio.Server("parent")
    parent.mount(child, "child")

    @child.tool
    @mcptrio.asyncio_handler
    async def where() -> str:
        await asyncio.sleep(0)
        loops.append(asyncio.get_running_loop())
        return "child"

    @parent.tool(task="optional")
    @mcptrio.asyncio_handler
    async def render(ctx: Context) -> str:
        await asyncio.sleep(0)
        loops.append(asyncio.get_running_loop())
        await ctx.report_progress(1, 1)
        return "rendered"

    with trio.fail_after(10):
        async with mcptrio.open_client(parent, revisions=only("2025-11-25")) as client:
            mounted = await client.call_tool("child_where")
            task = await client.call_tool("render", as_task=True)
            rendered = await task.result()
    assert (text(mounted), text(rendered)) == ("child", "rendered")
    # The child's loop and the parent's (the task ran on it), both stopped with the server.
    assert len({id(loop) for loop in loops}) == 2
    assert all(loop.is_closed() for loop in loops)


async def test_an_aiohttp_tool_fetches_from_a_local_aiohttp_server() -> None:
    server = mcptrio.Server("aiohttp")

    @server.tool
    @mcptrio.asyncio_handler
    async def fetch(url: str) -> str:
        async with aiohttp.ClientSession() as http, http.get(url) as response:
            response.raise_for_status()
            return await response.text()

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve_aiohttp, hello_routes)
            async with mcptrio.open_client(server) as client:
                hello = await client.call_tool("fetch", {"url": url + "hello?name=trio"})
                missing = await client.call_tool("fetch", {"url": url + "missing"})
            nursery.cancel_scope.cancel()
    assert text(hello) == "hello trio"
    # The library's exception is a tool error the model can read, as a Trio handler's is.
    assert missing.is_error
    assert text(missing).startswith("Error executing tool fetch: 404, message='Not Found'")


async def test_an_aiosqlite_tool_queries_a_sqlite_file(tmp_path: Path) -> None:
    database = make_pets(tmp_path / "pets.db")
    server = mcptrio.Server("aiosqlite")

    @server.tool
    @mcptrio.asyncio_handler
    async def pets(species: str) -> list[str]:
        async with aiosqlite.connect(database) as db:
            query = "SELECT name FROM pets WHERE species = ? ORDER BY name"
            async with db.execute(query, (species,)) as cursor:
                return [row[0] async for row in cursor]

    with trio.fail_after(10):
        async with mcptrio.open_client(server) as client:
            cats = await client.call_tool("pets", {"species": "cat"})
    assert [getattr(block, "text", None) for block in cats.content] == ["Ada", "Tom"]


async def test_an_unmarked_async_def_runs_in_trio_and_never_imports_asyncio() -> None:
    program = (
        "import sys, trio, mcptrio\n"
        "server = mcptrio.Server('plain')\n"
        "@server.tool\n"
        "async def add(a: int, b: int) -> int:\n"
        "    await trio.sleep(0)\n"
        "    return a + b\n"
        "async def main():\n"
        "    async with mcptrio.open_client(server) as client:\n"
        "        print((await client.call_tool('add', {'a': 1, 'b': 2})).content[0].text)\n"
        "trio.run(main)\n"
        "print('asyncio' in sys.modules, 'mcptrio.server.asyncio_bridge' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with trio.fail_after(30):
        done = await trio.run_process(
            [sys.executable, "-c", program], capture_stdout=True, env=env, cwd=ROOT
        )
    assert done.stdout.decode().split() == ["3", "False", "False"]


def test_marking_a_plain_def_is_refused_naming_it() -> None:
    def blocking() -> str:
        return ""

    with pytest.raises(TypeError, match=r"marks an async def function; <function .*blocking"):
        mcptrio.asyncio_handler(blocking)


async def test_the_asyncio_side_keeps_the_requests_context_variables() -> None:
    server = mcptrio.Server("contextvars")

    @server.tool
    @mcptrio.asyncio_handler
    async def who(ctx: Context) -> str:
        await asyncio.sleep(0)
        principal = ctx.principal
        return f"{ctx.request_id} {ctx.method} {principal}"

    with trio.fail_after(10):
        async with mcptrio.open_client(server) as client:
            answer = await client.call_tool("who")
    request_id, method, principal = text(answer).split()
    assert request_id.isdigit() and (method, principal) == ("tools/call", "None")


# ---------------------------------------------------------------------- cancellation


async def test_notifications_cancelled_cancels_an_aiohttp_fetch_mid_await() -> None:
    waiter = AsyncioWaiter()
    server = mcptrio.Server("cancel-aiohttp")

    def slow_routes(app: web.Application) -> None:
        async def slow(request: web.Request) -> web.Response:
            await asyncio.sleep(3600)
            return web.Response(text="too late")

        app.router.add_get("/slow", slow)

    @server.tool
    @mcptrio.asyncio_handler
    async def fetch(url: str) -> str:
        async with aiohttp.ClientSession() as http:
            waiter.enter()
            try:
                async with http.get(url) as response:
                    return await response.text()
            except asyncio.CancelledError:
                waiter.saw_cancellation()
                raise

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve_aiohttp, slow_routes)
            async with mcptrio.open_client(server) as client:
                async with trio.open_nursery() as calls:
                    calls.start_soon(client.call_tool, "fetch", {"url": url + "slow"})
                    await waiter.entered.wait()
                    calls.cancel_scope.cancel()  # the client sends notifications/cancelled
                await waiter.cancelled.wait()
                # The session carries on: the next call is answered.
                hello = await client.call_tool("fetch", {"url": url + "missing"})
            nursery.cancel_scope.cancel()
    assert text(hello) == "404: Not Found"


async def test_notifications_cancelled_cancels_an_aiosqlite_query_mid_await(
    tmp_path: Path,
) -> None:
    database = make_pets(tmp_path / "pets.db")
    waiter = AsyncioWaiter()
    ended: list[str] = []
    server = mcptrio.Server("cancel-aiosqlite")
    forever = (
        "WITH RECURSIVE n(x) AS (SELECT started() UNION ALL SELECT x + 1 FROM n)"
        " SELECT count(*) FROM n"
    )

    def started() -> int:  # in aiosqlite's thread, once the query runs
        waiter.enter()
        return 1

    @server.tool
    @mcptrio.asyncio_handler
    async def count_forever() -> int:
        async with aiosqlite.connect(database) as db:
            await db.create_function("started", 0, started)
            try:
                async with db.execute(forever) as cursor:
                    row = await cursor.fetchone()
            except asyncio.CancelledError:
                waiter.saw_cancellation()
                await db.interrupt()  # the query itself runs on in aiosqlite's thread until told
                raise
            finally:
                ended.append("left the query")
        return int(row[0]) if row else 0

    with trio.fail_after(20):
        async with mcptrio.open_client(server) as client:
            async with trio.open_nursery() as calls:
                calls.start_soon(client.call_tool, "count_forever")
                await waiter.entered.wait()
                calls.cancel_scope.cancel()
            await waiter.cancelled.wait()
            await client.ping()
    assert ended == ["left the query"]


async def test_a_request_timeout_cancels_the_asyncio_side() -> None:
    waiter = AsyncioWaiter()
    server = mcptrio.Server("timeout")

    @server.tool
    @mcptrio.asyncio_handler
    async def wait() -> str:
        await waiter.wait_until_cancelled()
        return "never"

    with trio.fail_after(10):
        async with mcptrio.open_client(server) as client:
            with pytest.raises(RequestTimeout):
                await client.call_tool("wait", timeout=0.5)
            await waiter.cancelled.wait()
    assert waiter.entered.is_set()


async def test_server_shutdown_cancels_the_asyncio_side_and_stops_the_loop() -> None:
    waiter = AsyncioWaiter()
    loops: list[asyncio.AbstractEventLoop] = []
    server = mcptrio.Server("shutdown")

    @server.tool
    @mcptrio.asyncio_handler
    async def wait() -> str:
        loops.append(asyncio.get_running_loop())
        await waiter.wait_until_cancelled()
        return "never"

    with trio.fail_after(10):
        with trio.CancelScope() as serving:
            async with mcptrio.open_client(server) as client, trio.open_nursery() as calls:
                calls.start_soon(client.call_tool, "wait")
                await waiter.entered.wait()
                serving.cancel()
        assert waiter.cancelled.is_set()
    assert loops[0].is_closed()


# ---------------------------------------------------------------------- the context


async def test_progress_and_log_messages_from_the_asyncio_side_reach_the_client() -> None:
    server = mcptrio.Server("talk")

    @server.tool
    @mcptrio.asyncio_handler
    async def work(ctx: Context, steps: int) -> str:
        for step in range(1, steps + 1):
            await asyncio.sleep(0)
            await ctx.report_progress(step, steps, f"step {step}")
        await ctx.info("done on asyncio")
        await ctx.notify(LoggingMessageNotification(level="warning", data="raw"))
        return "ok"

    progress: list[tuple[float, float | None, str | None]] = []
    logged: list[LoggingMessageNotification] = []
    with trio.fail_after(10):
        async with mcptrio.open_client(
            server,
            notifications=NotificationCallbacks(on_log=logged.append),
            revisions=HANDSHAKE_ERA,
        ) as client:
            result = await client.call_tool(
                "work", {"steps": 3}, on_progress=lambda *p: progress.append(p)
            )
    assert text(result) == "ok"
    assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    assert [(m.level, m.data) for m in logged] == [("info", "done on asyncio"), ("warning", "raw")]


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_elicit_and_sample_are_awaited_from_the_asyncio_side(era: str) -> None:
    # In the stateless era each ask ends the round with an input-required result, raised
    # through the asyncio side, and the client's next round runs the handler again.
    server = mcptrio.Server("ask")

    @server.tool
    @mcptrio.asyncio_handler
    async def ask(ctx: Context) -> str:
        schema = {"type": "object", "properties": {"name": {"type": "string"}}}
        answer, sampled = await asyncio.gather(
            ctx.elicit("Your name?", schema), ctx.sample("Say hi", max_tokens=5)
        )
        assert isinstance(sampled.content, TextContent)
        return f"{answer.action} {answer.content} {sampled.content.text}"

    async def elicit(ctx: RequestContext, request: ElicitRequest) -> ElicitResult:
        return ElicitResult(action="accept", content={"name": "Ada"})

    async def sample(ctx: RequestContext, request: CreateMessageRequest) -> CreateMessageResult:
        return CreateMessageResult(role="assistant", content=TextContent(text="hi"), model="m")

    with trio.fail_after(10):
        async with mcptrio.open_client(
            server,
            handlers=Handlers(elicitation=elicit, sampling=sample),
            revisions=HANDSHAKE_ERA if era == "handshake" else Revisions(),
        ) as client:
            result = await client.call_tool("ask")
    assert text(result) == "accept {'name': 'Ada'} hi"


async def test_cancelling_a_context_call_on_the_asyncio_side_cancels_it_in_trio() -> None:
    server = mcptrio.Server("give-up")
    asked = trio.Event()
    gave_up = trio.Event()

    @server.tool
    @mcptrio.asyncio_handler
    async def impatient(ctx: Context) -> str:
        schema = {"type": "object", "properties": {"name": {"type": "string"}}}
        try:
            await asyncio.wait_for(ctx.elicit("Your name?", schema), timeout=0.2)
        except TimeoutError:
            return "gave up"
        return "answered"

    async def elicit(ctx: RequestContext, request: ElicitRequest) -> ElicitResult:
        asked.set()
        try:
            await trio.sleep_forever()
        finally:
            gave_up.set()

    with trio.fail_after(10):
        async with mcptrio.open_client(
            server, handlers=Handlers(elicitation=elicit), revisions=HANDSHAKE_ERA
        ) as client:
            result = await client.call_tool("impatient")
            # The server sent notifications/cancelled for its elicitation.
            await gave_up.wait()
    assert asked.is_set()
    assert text(result) == "gave up"


async def test_a_context_call_of_a_cancelled_request_raises_cancelled_error_on_asyncio() -> None:
    waiter = AsyncioWaiter()
    server = mcptrio.Server("cancel-while-asking")

    @server.tool
    @mcptrio.asyncio_handler
    async def ask(ctx: Context) -> str:
        schema = {"type": "object", "properties": {"name": {"type": "string"}}}
        waiter.enter()
        try:
            await ctx.elicit("Your name?", schema)
        except asyncio.CancelledError:
            waiter.saw_cancellation()
            raise
        return "answered"

    async def elicit(ctx: RequestContext, request: ElicitRequest) -> ElicitResult:
        await trio.sleep_forever()

    with trio.fail_after(10):
        async with mcptrio.open_client(
            server, handlers=Handlers(elicitation=elicit), revisions=HANDSHAKE_ERA
        ) as client:
            async with trio.open_nursery() as calls:
                calls.start_soon(client.call_tool, "ask")
                await waiter.entered.wait()
                calls.cancel_scope.cancel()
            await waiter.cancelled.wait()


async def test_a_task_left_behind_cannot_use_the_context_of_an_ended_request() -> None:
    server = mcptrio.Server("left-behind")
    token = trio.lowlevel.current_trio_token()
    refused = trio.Event()
    reasons: list[str] = []
    later: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
    kept: list[asyncio.Task[None]] = []

    @server.tool
    @mcptrio.asyncio_handler
    async def leave(ctx: Context) -> str:
        go = asyncio.Event()

        async def late() -> None:
            await go.wait()
            try:
                await ctx.info("too late")
            except RuntimeError as exc:
                reasons.append(str(exc))
                token.run_sync_soon(refused.set)

        kept.append(asyncio.create_task(late()))
        later.append((asyncio.get_running_loop(), go))
        return "left"

    with trio.fail_after(10):
        async with mcptrio.open_client(server, revisions=HANDSHAKE_ERA) as client:
            assert text(await client.call_tool("leave")) == "left"
            loop, go = later[0]
            loop.call_soon_threadsafe(go.set)
            await refused.wait()
    assert reasons == ["the request this context belongs to has ended"]


async def test_errors_on_the_asyncio_side_are_tool_errors_as_on_trio() -> None:
    server = mcptrio.Server("errors")

    @server.tool
    @mcptrio.asyncio_handler
    async def divide(a: int, b: int) -> float:
        await asyncio.sleep(0)
        if b == 0:
            raise mcptrio.ToolError("Cannot divide by zero: pass a non-zero b")
        return a / b

    @server.tool
    @mcptrio.asyncio_handler
    async def report(ctx: Context) -> str:
        await ctx.info("about to fail")
        raise mcptrio.ToolError("The report is not ready")

    @server.tool
    @mcptrio.asyncio_handler
    async def refuse(ctx: Context) -> str:
        await ctx.elicit("never sent", {"type": "object", "properties": {}})
        return "asked"

    with trio.fail_after(10):
        async with mcptrio.open_client(server, revisions=HANDSHAKE_ERA) as client:
            zero = await client.call_tool("divide", {"a": 1, "b": 0})
            half = await client.call_tool("divide", {"a": 1, "b": 2})
            not_ready = await client.call_tool("report")
            with pytest.raises(mcptrio.McpError, match="did not declare form-mode elicitation"):
                await client.call_tool("refuse")
    assert zero.is_error and text(zero) == "Cannot divide by zero: pass a non-zero b"
    assert half.structured_content == {"result": 0.5}
    assert not_ready.is_error and text(not_ready) == "The report is not ready"


# ---------------------------------------------------------------------- the official SDK


@pytest.mark.parametrize(("mode", "revision"), [("legacy", "2025-11-25"), ("2026-07-28", None)])
async def test_the_official_sdk_client_calls_asyncio_handlers_over_stdio(
    mode: str, revision: str | None, tmp_path: Path
) -> None:
    database = make_pets(tmp_path / "pets.db")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve_aiohttp, hello_routes)
            command = [sys.executable, str(PEERS / "sdk_client.py"), mode, sys.executable]
            command += [str(PEERS / "asyncio_server.py"), url, str(database)]
            done = await trio.run_process(
                command, capture_stdout=True, capture_stderr=True, env=env
            )
            nursery.cancel_scope.cancel()
    seen = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert seen["protocol_version"] == (revision or mode)
    assert seen["fetch"] == {"is_error": False, "text": "hello world"}
    assert seen["pets"] == {"is_error": False, "texts": ["Ada", "Tom"]}
    assert seen["missing"]["is_error"] is True
    assert seen["missing"]["text"].startswith("Error executing tool fetch: 404")
    assert seen["resource"] == ["1 dogs"]
    assert seen["prompt"] == ["Hello Ada, from _UnixSelectorEventLoop"]
