"""Concurrent reads of large resources take turns within the server's read budget, one larger
than the whole budget is refused, and large contents are encoded away from the event loop
(issue 38, item 8)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.lowlevel

import mcptrio
from mcptrio.client import ClientIdentity
from mcptrio.client.skills import declare_skills
from mcptrio.protocol.errors import McpError
from mcptrio.server import resources as resources_module
from mcptrio.server import skills as skills_module
from mcptrio.server.read_budget import DEFAULT_MAX_READ_BYTES, ReadBudget
from mcptrio.testing import open_test_client

READS = 6


class Concurrency:
    """How many handlers run at once, at most."""

    def __init__(self) -> None:
        self.now = self.most = 0

    async def enter_and_wait(self) -> None:
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            await trio.sleep(1)
        finally:
            self.now -= 1


async def read_all(server: mcptrio.Server, uris: list[str]) -> list[Any]:
    answers: list[Any] = [None] * len(uris)
    async with open_test_client(server) as client:

        async def read(n: int) -> None:
            answers[n] = await client.read_resource(uris[n])

        async with trio.open_nursery() as nursery:
            for n in range(len(uris)):
                nursery.start_soon(read, n)
    return answers


async def test_concurrent_reads_of_a_large_resource_take_turns_within_the_budget(
    autojump_clock: trio.abc.Clock,
) -> None:
    server = mcptrio.Server("big")
    running = Concurrency()
    # Each read declares more than half the default budget: two never fit at once.
    size = DEFAULT_MAX_READ_BYTES // 2 + 1

    @server.resource("big://file", size=size)
    async def big() -> str:
        await running.enter_and_wait()
        return "x" * 10

    with trio.fail_after(60):
        answers = await read_all(server, ["big://file"] * READS)
    assert running.most == 1
    assert [answer.contents[0].text for answer in answers] == ["x" * 10] * READS
    assert server.read_budget.held == 0


async def test_template_reads_of_large_contents_hold_their_bytes_one_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = mcptrio.Server("big", max_read_bytes=3000)
    held_while_made: list[int] = []
    convert = resources_module.to_resource_contents

    def recording(*args: Any) -> Any:
        held_while_made.append(server.read_budget.held)
        return convert(*args)

    monkeypatch.setattr(resources_module, "to_resource_contents", recording)

    @server.resource("blob://{n}")
    async def blob(n: str) -> bytes:
        await trio.lowlevel.checkpoint()
        return b"b" * 1500  # 2,000 bytes of base64: two never fit in 3,000

    with trio.fail_after(10):
        answers = await read_all(server, [f"blob://{n}" for n in range(READS)])
    assert held_while_made == [2000] * READS
    assert all(len(answer.contents[0].blob) == 2000 for answer in answers)
    assert server.read_budget.held == 0


async def test_a_read_larger_than_the_whole_budget_is_refused_with_the_setting_named() -> None:
    server = mcptrio.Server("big", max_read_bytes=1000)

    @server.resource("big://{n}")
    async def big(n: str) -> str:
        return "x" * 1001

    with trio.fail_after(10), pytest.raises(McpError) as raised:
        await read_all(server, ["big://1"])
    assert raised.value.code == -32603
    assert "max_read_bytes=1000" in raised.value.message
    assert raised.value.data == {"uri": "big://1", "size": 1001, "maxReadBytes": 1000}
    assert server.read_budget.held == 0


async def test_a_read_cancelled_while_waiting_takes_nothing_and_others_go_on() -> None:
    budget = ReadBudget(100)
    with trio.fail_after(10):
        async with budget.reserve(80, "a://1"):
            with trio.move_on_after(0.05):
                async with budget.reserve(50, "a://2"):
                    raise AssertionError("it cannot fit while the first holds 80")
            assert budget.waiting == 0
            async with budget.reserve(20, "a://3"):
                assert budget.held == 100
    assert budget.held == 0


async def test_new_reads_take_their_turn_behind_a_waiting_one() -> None:
    # A large read waiting is not overtaken by a read that comes after it (which cannot run
    # beside it: 90 + 20 is over the budget), and each is granted once the bytes are free.
    budget = ReadBudget(100)
    order: list[str] = []

    async def read(uri: str, nbytes: int) -> None:
        async with budget.reserve(nbytes, uri):
            order.append(uri)
            await trio.sleep(0.01)

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery, budget.reserve(60, "a://first"):
            nursery.start_soon(read, "a://large", 90)
            await trio.sleep(0.01)
            nursery.start_soon(read, "a://small", 20)
            await trio.sleep(0.01)
            assert order == [] and budget.waiting == 2
    assert order == ["a://large", "a://small"]
    assert budget.held == 0


async def test_large_binary_contents_are_encoded_off_the_event_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    threads: list[bool] = []
    encode = resources_module._binary

    def recording(*args: Any) -> Any:
        threads.append(threading.current_thread() is threading.main_thread())
        return encode(*args)

    monkeypatch.setattr(resources_module, "_binary", recording)
    server = mcptrio.Server("big")

    @server.resource("blob://{n}")
    async def blob(n: str) -> bytes:
        return b"\x00" * (1 << 20)

    with trio.fail_after(10):
        [answer] = await read_all(server, ["blob://1"])
    assert len(answer.contents[0].blob) == (1 << 20) // 3 * 4 + 4
    assert threads == [False]


async def test_a_large_skill_file_is_hashed_and_encoded_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[bool] = []
    digest = skills_module._digest

    def recording(data: bytes) -> str:
        threads.append(threading.current_thread() is threading.main_thread())
        return digest(data)

    skill = tmp_path / "big-skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: big-skill\ndescription: Big\n---\n")
    (skill / "data.bin").write_bytes(bytes(range(256)) * 4096)
    server = mcptrio.Server("skills")
    server.add_skills(tmp_path)
    monkeypatch.setattr(skills_module, "_digest", recording)
    with trio.fail_after(10):
        async with open_test_client(
            server, identity=ClientIdentity(capabilities=declare_skills())
        ) as client:
            answer = await client.read_resource("skill://big-skill/data.bin")
    assert answer.contents[0].blob
    assert threads and not any(threads)
