"""Sync handlers: a plain ``def`` runs on the run's pool of worker threads, off the event loop,
with the caller's context variables; ``blocking=False`` runs it in the request's task."""

from __future__ import annotations

import contextvars
import threading
from typing import Any

import pytest
import trio

import mcptrio
from mcptrio.server.sync_calls import SyncWorkers, open_sync_workers, run_sync_call

WORKER_NAME = "mcptrio sync"


def worker_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == WORKER_NAME]


def text_of(result: Any) -> str:
    text: str = result.content[0].text
    return text


async def test_a_blocking_sync_tool_does_not_stop_another_request_from_being_answered() -> None:
    server = mcptrio.Server("sync")
    release = threading.Event()

    @server.tool
    def wait_for_release() -> str:
        release.wait(10)
        return "released"

    @server.tool
    async def ping() -> str:
        return "pong"

    with trio.fail_after(10):
        async with mcptrio.open_client(server) as client, trio.open_nursery() as nursery:
            answers: list[str] = []

            async def call_blocking() -> None:
                answers.append(text_of(await client.call_tool("wait_for_release", {})))

            nursery.start_soon(call_blocking)
            assert text_of(await client.call_tool("ping", {})) == "pong"
            assert answers == []
            release.set()
        assert answers == ["released"]


async def test_a_sync_tool_runs_in_a_worker_thread_and_sees_the_callers_context() -> None:
    where: list[threading.Thread] = []
    server = mcptrio.Server("sync")
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")

    @server.tool
    def look() -> str:
        where.append(threading.current_thread())
        return var.get()

    with trio.fail_after(10):
        async with mcptrio.open_client(server) as client:
            assert text_of(await client.call_tool("look", {})) == "unset"
    assert where[0] is not threading.current_thread()

    with trio.fail_after(10):
        async with open_sync_workers() as workers:
            var.set("the caller's")
            assert await workers.run(var.get) == "the caller's"
            # What the function sets stays in its copy.
            await workers.run(lambda: var.set("the thread's"))
            assert var.get() == "the caller's"


async def test_blocking_false_runs_a_sync_tool_in_the_request_task() -> None:
    where: list[threading.Thread] = []
    server = mcptrio.Server("inline")

    @server.tool(blocking=False)
    def add(a: int, b: int) -> int:
        where.append(threading.current_thread())
        trio.lowlevel.current_task()  # raises outside a Trio task
        return a + b

    @server.tool(blocking=False)
    def count(n: int) -> Any:
        where.append(threading.current_thread())
        yield from range(n)

    with trio.fail_after(10):
        async with mcptrio.open_client(server) as client:
            result = await client.call_tool("add", {"a": 1, "b": 2})
            assert not result.is_error and text_of(result) == "3"
            assert not (await client.call_tool("count", {"n": 3})).is_error
    assert where == [threading.current_thread()] * 2


async def test_a_sync_tools_exception_reaches_the_caller() -> None:
    server = mcptrio.Server("raising")

    @server.tool
    def fail() -> str:
        raise ValueError("the disk is full")

    with trio.fail_after(10):
        async with mcptrio.open_client(server) as client:
            result = await client.call_tool("fail", {})
    assert result.is_error and "the disk is full" in text_of(result)

    def raise_key_error() -> None:
        raise KeyError("missing")

    with trio.fail_after(10):
        async with open_sync_workers():
            with pytest.raises(KeyError, match="missing"):
                await run_sync_call(raise_key_error)


async def test_cancel_waits_for_a_running_call_and_drops_its_result() -> None:
    started, release = threading.Event(), threading.Event()
    finished: list[str] = []

    def slow() -> str:
        started.set()
        release.wait(10)
        finished.append("slow")
        return "result"

    got: list[str] = []
    scope = trio.CancelScope()

    async def call() -> None:
        with scope:
            got.append(await workers.run(slow))
            await trio.lowlevel.checkpoint()
            got.append("after the checkpoint")

    with trio.fail_after(10):
        async with open_sync_workers(1) as workers, trio.open_nursery() as nursery:
            nursery.start_soon(call)
            await trio.to_thread.run_sync(started.wait, 10)
            scope.cancel()
            await trio.sleep(0.05)
            assert finished == []  # the request still waits for its thread
            assert got == []
            release.set()
    assert scope.cancelled_caught
    assert finished == ["slow"]
    assert got == ["result"]  # the value came back; the next checkpoint raised Cancelled


async def test_a_cancelled_call_still_queued_never_runs() -> None:
    started, release = threading.Event(), threading.Event()
    ran: list[str] = []

    def hold_the_thread() -> None:
        started.set()
        release.wait(10)

    with trio.fail_after(10):
        async with open_sync_workers(1) as workers, trio.open_nursery() as nursery:
            nursery.start_soon(workers.run, hold_the_thread)
            await trio.to_thread.run_sync(started.wait, 10)
            with trio.move_on_after(0.05) as scope:
                await workers.run(lambda: ran.append("queued"))
            assert scope.cancelled_caught
            release.set()
        # The pool has closed: its one thread took every call queued before it ended.
    assert ran == []


async def test_the_pool_never_runs_more_threads_than_its_bound() -> None:
    lock = threading.Lock()
    running, most = [0], [0]
    idents: set[int] = set()

    def work() -> None:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
            idents.add(threading.get_ident())
        threading.Event().wait(0.02)
        with lock:
            running[0] -= 1

    with trio.fail_after(10):
        async with open_sync_workers(2) as workers, trio.open_nursery() as nursery:
            for _ in range(12):
                nursery.start_soon(workers.run, work)
    assert most[0] == 2
    assert len(idents) == 2


async def test_leaving_the_server_leaves_no_worker_thread_running() -> None:
    server = mcptrio.Server("sync")
    names: list[str] = []

    @server.tool
    def where() -> str:
        return threading.current_thread().name

    async def call() -> None:
        names.append(text_of(await client.call_tool("where", {})))

    with trio.fail_after(10):
        async with mcptrio.open_client(server) as client, trio.open_nursery() as nursery:
            for _ in range(8):
                nursery.start_soon(call)
    assert names == [WORKER_NAME] * 8
    assert worker_threads() == []
    # Outside a serving lifetime a sync call falls back to trio.to_thread.run_sync.
    assert await run_sync_call(lambda: threading.current_thread().name) != WORKER_NAME


async def test_a_sync_tool_reaches_trio_through_from_thread_without_a_token() -> None:
    server = mcptrio.Server("sync")

    @server.tool
    def back_to_trio() -> str:
        return str(trio.from_thread.run_sync(lambda: trio.lowlevel.in_trio_run()))

    with trio.fail_after(10):
        async with mcptrio.open_client(server) as client:
            assert text_of(await client.call_tool("back_to_trio", {})) == "True"


async def test_a_pool_needs_at_least_one_thread() -> None:
    async with trio.open_nursery() as nursery:
        with pytest.raises(ValueError, match="at least 1 thread"):
            SyncWorkers(0, nursery)


async def test_a_nested_open_shares_the_outer_pool() -> None:
    with trio.fail_after(10):
        async with open_sync_workers(3) as outer, open_sync_workers(5) as inner:
            assert inner is outer and outer.threads == 3
