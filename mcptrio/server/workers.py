"""The supervisor of ``run --workers N``: N worker processes serving one port.

:func:`serve_workers` binds the listening socket itself and starts each worker (:mod:`.worker`)
with a copy of it: no port per worker, and port 0 works (the supervisor knows the port before
any worker starts). The workers accept from that socket, or each from its own socket on the
same address (``SO_REUSEPORT``, the default on Linux), see :mod:`.worker_sockets`. The workers
are the command given (the same program, as a rule), told by their environment which socket to
serve and who they are.

Theory of operation
-------------------
One task per worker *slot* (``w0``, ``w1``...), all in the supervisor's nursery. A slot starts
its worker, waits for it to report ``ready`` (within ``start_timeout``), then for it to exit.
A worker that exits while the supervisor runs has crashed, whatever its exit code; the slot
starts it again after a pause that doubles with each crash in a row, from
``first_backoff`` to ``max_backoff``. A worker that ran ``stable_after`` seconds before it
crashed starts a new series. When one slot has crashed ``max_crashes`` times in a row the
supervisor gives up: :class:`WorkersFailed` leaves :func:`serve_workers`, which stops the other
workers on its way out. A worker that does not start at all (it cannot be executed) fails the
same way at once.

:func:`serve_workers` reports the URL through ``task_status`` once every worker has reported
ready; a failure before that leaves through ``nursery.start``, so a caller knows it could not
start.

Stopping is cancelling: each worker is sent SIGTERM and given ``grace`` seconds (and a
moment to exit) to answer the requests it is serving; a worker still running then is killed.
Setting ``hurry`` meanwhile sends each worker a second SIGTERM, which stops it at once.
Signals are the caller's business (``Server.run`` turns SIGTERM and SIGINT into that
cancellation, and a second one into ``hurry``). Everything the supervisor starts is a child of
the nursery inside :func:`serve_workers`; when it returns, no worker is left.

POSIX only: the socket travels to the workers as an inherited file descriptor.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Final

import trio

from .worker import (
    GRACE_ENV,
    LISTEN_FD_ENV,
    READY,
    REDIS_URL_ENV,
    REUSE_PORT_ENV,
    SUPERVISOR_FD_ENV,
    WORKER_ID_ENV,
)
from .worker_sockets import REUSE_PORT_BY_DEFAULT, bind_listening_socket, url_of

__all__ = ["WorkerPolicy", "WorkersFailed", "serve_workers"]

logger = logging.getLogger("mcptrio.server.workers")

#: Seconds a stopping worker has past ``grace`` to exit (its interpreter shutting down).
EXIT_MARGIN: Final = 2.0


class WorkersFailed(Exception):
    """The workers could not be kept running: one crashed too often in a row, or could not be
    started. The message says which, and how it last ended."""


@dataclass(frozen=True)
class WorkerPolicy:
    """How a supervisor restarts its workers (see :mod:`.workers`)."""

    #: Crashes in a row of one worker after which the supervisor gives up.
    max_crashes: int = 5
    #: Seconds a worker must run before a crash counts as the first of a new series.
    stable_after: float = 10.0
    #: Pause before the first restart, doubled after each crash in a row.
    first_backoff: float = 0.1
    #: Longest pause before a restart.
    max_backoff: float = 5.0
    #: Seconds a worker has to report that it serves; past it, it is killed (a crash).
    start_timeout: float = 30.0

    def backoff(self, crashes: int) -> float:
        """The pause before restarting a worker that has crashed ``crashes`` times in a row."""
        pause: float = self.first_backoff * 2.0 ** max(crashes - 1, 0)
        return min(pause, self.max_backoff)


async def serve_workers(
    command: Sequence[str],
    workers: int,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    grace: float = 10.0,
    redis_url: str | None = None,
    policy: WorkerPolicy | None = None,
    env: Mapping[str, str] | None = None,
    reuse_port: bool = REUSE_PORT_BY_DEFAULT,
    hurry: trio.Event | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Run ``workers`` processes of ``command`` serving HTTP on ``host:port`` until cancelled;
    reports the base URL once they all serve. See the module docstring.

    ``env`` is the workers' environment (default: this process's), to which their own
    variables are added (:mod:`.worker`). ``reuse_port``: a queue of connections per worker
    rather than one they share (see :mod:`.worker_sockets`). Raises :class:`WorkersFailed` when
    they cannot be kept running, and ``OSError`` when the address cannot be bound.
    """
    if workers < 1:
        raise ValueError("workers must be at least 1")
    listening = bind_listening_socket(host, port, reuse_port=reuse_port)
    with listening:
        supervisor = _Supervisor(
            list(command),
            listening,
            grace,
            redis_url,
            policy or WorkerPolicy(),
            {**(os.environ if env is None else env), REUSE_PORT_ENV: "1" if reuse_port else ""},
            workers,
            trio.Event() if hurry is None else hurry,
        )
        try:
            async with trio.open_nursery() as nursery:
                for index in range(workers):
                    nursery.start_soon(supervisor.keep_running, f"w{index}")
                await supervisor.all_ready.wait()
                task_status.started(url_of(listening))
        except BaseExceptionGroup as group:
            # Several slots may give up at once: one error says it (the first).
            failed, rest = group.split(WorkersFailed)
            if failed is None or rest is not None:
                raise
            raise _leaves(failed)[0] from None


@dataclass(slots=True, eq=False)
class _Supervisor:
    """What the slots of one :func:`serve_workers` call share."""

    command: list[str]
    listening: socket.socket
    grace: float
    redis_url: str | None
    policy: WorkerPolicy
    env: dict[str, str]
    #: The slots whose worker has not yet reported ready once (all of them, at first).
    waiting_for: int
    #: Set when the workers being stopped are to stop at once (see the module docstring).
    hurry: trio.Event
    #: Set once every slot's worker has reported ready once.
    all_ready: trio.Event = field(init=False, default_factory=trio.Event)

    async def keep_running(self, worker_id: str) -> None:
        """Run slot ``worker_id``'s worker again and again (see the module docstring)."""
        crashes = 0
        counted = False

        def count_ready() -> None:
            nonlocal counted
            if not counted:
                counted = True
                self.waiting_for -= 1
                if self.waiting_for == 0:
                    self.all_ready.set()

        while True:
            started = trio.current_time()
            ended = await self.run_once(worker_id, count_ready)
            if trio.current_time() - started >= self.policy.stable_after:
                crashes = 0
            crashes += 1
            if crashes >= self.policy.max_crashes:
                raise WorkersFailed(
                    f"worker {worker_id} {ended} {crashes} times in a row; giving up"
                )
            pause = self.policy.backoff(crashes)
            logger.warning("worker %s %s; restarting it in %.1f s", worker_id, ended, pause)
            await trio.sleep(pause)

    async def run_once(self, worker_id: str, on_ready: Callable[[], None]) -> str:
        """Start the worker of slot ``worker_id`` and wait for it to end (``on_ready()`` once it
        reports ready); how it ended, in words for a log line."""
        ours, theirs = socket.socketpair()
        env = {
            **self.env,
            WORKER_ID_ENV: worker_id,
            LISTEN_FD_ENV: str(self.listening.fileno()),
            SUPERVISOR_FD_ENV: str(theirs.fileno()),
            GRACE_ENV: repr(self.grace),
        }
        if self.redis_url is not None:
            env[REDIS_URL_ENV] = self.redis_url
        link = trio.SocketStream(trio.socket.from_stdlib_socket(ours))
        # The link stays open while the worker lives: its end closing stops the worker.
        async with link, trio.open_nursery() as nursery:
            try:
                with theirs:
                    process: trio.Process = await nursery.start(
                        partial(
                            trio.run_process,
                            self.command,
                            check=False,
                            stdin=subprocess.DEVNULL,
                            env=env,
                            pass_fds=(self.listening.fileno(), theirs.fileno()),
                            deliver_cancel=self.stop,
                            # A session of its own: the terminal's Ctrl-C (or a signal to the
                            # whole group) reaches the supervisor alone, which stops its workers
                            # once, then hurries them only on a second signal.
                            start_new_session=True,
                        )
                    )
            except OSError as error:
                raise WorkersFailed(f"worker {worker_id} could not be started: {error}") from None
            ready = False
            with trio.move_on_after(self.policy.start_timeout) as waiting:
                ready = await _ready(link)
            if not ready and not waiting.cancelled_caught:
                # Its end of the link closed: the worker is exiting (it failed to start); let
                # it be reaped, so that its exit code is what is reported.
                with trio.move_on_after(EXIT_MARGIN):
                    await process.wait()
            if ready:
                on_ready()
            elif process.returncode is None:
                logger.warning(
                    "worker %s did not report ready within %.0f s: killing it",
                    worker_id,
                    self.policy.start_timeout,
                )
                process.kill()
        return _ending(process.returncode, ready)

    async def stop(self, process: trio.Process) -> None:
        """Stop a worker gracefully, then for sure (``deliver_cancel`` of its process)."""
        process.send_signal(signal.SIGTERM)
        with trio.move_on_after(self.grace):
            await self.hurry.wait()
            # Its second signal: the worker stops at once.
            process.send_signal(signal.SIGTERM)
        await trio.sleep(EXIT_MARGIN)
        waited = self.grace + EXIT_MARGIN
        logger.warning("worker pid %d still ran %.1f s after SIGTERM: killed", process.pid, waited)
        process.kill()


def _leaves(group: BaseExceptionGroup[WorkersFailed]) -> list[WorkersFailed]:
    leaves: list[WorkersFailed] = []
    for error in group.exceptions:
        leaves.extend(_leaves(error) if isinstance(error, BaseExceptionGroup) else [error])
    return leaves


async def _ready(link: trio.SocketStream) -> bool:
    """Whether the worker writes ``ready`` before closing its end (it exited, as a rule)."""
    received = b""
    while len(received) < len(READY):
        try:
            data = await link.receive_some(len(READY) - len(received))
        except trio.BrokenResourceError:
            return False
        if not data:
            return False
        received += data
    return received == READY


def _ending(code: int | None, ready: bool) -> str:
    """How a worker ended, in words: ``exited with code 1 before serving``."""
    if code is None or code == 0:
        words = "exited"
    elif code < 0:
        try:
            words = f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            words = f"was killed by signal {-code}"
    else:
        words = f"exited with code {code}"
    return words if ready else f"{words} before serving"
