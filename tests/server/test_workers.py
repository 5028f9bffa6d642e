"""The supervisor of ``run --workers N`` in process: its restart policy, and what makes it fail
at once. (Real workers are driven through the command line in tests/cli/test_run_workers.py.)"""

from __future__ import annotations

import socket

import pytest
import trio

from mcptrio.server.workers import WorkerPolicy, WorkersFailed, serve_workers


def test_the_pause_before_a_restart_doubles_up_to_its_cap() -> None:
    policy = WorkerPolicy(first_backoff=0.1, max_backoff=1.0)
    assert [policy.backoff(n) for n in range(1, 7)] == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]


async def test_a_worker_command_that_cannot_run_fails_the_start() -> None:
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            with pytest.raises(WorkersFailed, match=r"worker w[01] could not be started"):
                await nursery.start(serve_workers, ["/nonexistent/python"], 2)


async def test_workers_that_exit_at_once_make_it_give_up_after_max_crashes() -> None:
    policy = WorkerPolicy(max_crashes=3, first_backoff=0.01)
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            with pytest.raises(WorkersFailed, match="exited with code 7 before serving 3 times"):
                await nursery.start(
                    lambda task_status: serve_workers(
                        ["/bin/sh", "-c", "exit 7"], 1, policy=policy, task_status=task_status
                    )
                )


async def test_a_port_in_use_is_an_oserror_before_any_worker_starts() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with trio.fail_after(10):
            async with trio.open_nursery() as nursery:
                with pytest.raises(OSError):
                    await nursery.start(
                        lambda task_status: serve_workers(
                            ["/bin/true"], 1, port=port, task_status=task_status
                        )
                    )
