"""The orchestrator's side of a worker (:mod:`benchmarks.worker`): start it, send it cells.

``WorkerRunner(lib, transport)`` has the same shape as ``benchmarks.http.runner.HttpRunner``:
a context manager whose ``run(workload, load, duration, warmup)`` returns a ``RunRecord`` and
never raises for a failed measurement. Entering starts the worker process without waiting for
it (several start side by side); the first ``run`` (or ``wait_ready``) waits for its ready line.
A worker that dies or stops answering is killed, with its server processes (it runs in a
process group of its own), the run reports why, and the next run starts a fresh worker.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from types import TracebackType
from typing import IO, Any

from . import REPO_ROOT
from .matrix import RunRecord

#: Seconds a worker gets to import its library, open its session and say it is ready.
START_TIMEOUT = 120.0
#: Seconds past a run's warm-up and duration before a silent worker is given up on (an
#: ``s100x20`` run may wait for 100 sessions to open before its window, and drain after it).
RUN_GRACE = 90.0
#: Seconds a worker gets to close its sessions and exit when asked to.
STOP_TIMEOUT = 15.0


class WorkerFailed(Exception):
    """The worker could not start, died, or did not answer in time."""


def child_env() -> dict[str, str]:
    """This environment with the repository root on PYTHONPATH (workers import benchmarks)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    return env


class WorkerRunner:
    """One long-lived worker process for (``lib``, ``transport``) and the runs of its cells."""

    def __init__(self, lib: str, transport: str) -> None:
        self.lib = lib
        self.transport = transport
        self.process: subprocess.Popen[bytes] | None = None
        self.ready: dict[str, Any] | None = None
        self._stderr: IO[bytes] | None = None
        self._buffer = b""
        self._start_error = ""

    def __enter__(self) -> WorkerRunner:
        self._start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop()

    # ------------------------------------------------------------------ the process

    def _start(self) -> None:
        if self._stderr is not None:
            self._stderr.close()
        self._buffer = b""
        self.ready = None
        # The worker's stderr (and its servers') goes to a file: a pipe nobody reads would fill
        # up and block them, and the terminal is for the orchestrator's progress.
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by _stop)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.worker", self.lib, self.transport],
            cwd=REPO_ROOT,
            env=child_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            start_new_session=True,
        )

    def wait_ready(self) -> dict[str, Any]:
        """The worker's ready line (versions, backend); raises WorkerFailed if it has none."""
        if self.ready is not None:
            return self.ready
        if self._start_error:
            raise WorkerFailed(self._start_error)
        try:
            message: dict[str, Any] = json.loads(self._read_line(time.monotonic() + START_TIMEOUT))
            if not message.get("ready"):
                raise WorkerFailed(message.get("error", "the worker did not start"))
        except WorkerFailed as error:
            self._start_error = f"{self.lib} {self.transport} worker: {error}"
            self._kill()
            raise WorkerFailed(self._start_error) from None
        self.ready = message
        return message

    def _stop(self) -> None:
        process = self.process
        if process is not None and process.poll() is None and process.stdin is not None:
            try:
                process.stdin.write(b'{"op": "exit"}\n')
                process.stdin.close()
                process.wait(STOP_TIMEOUT)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._kill()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def _kill(self) -> None:
        """Kill the worker and every process it started (its process group), if still there."""
        process, self.process = self.process, None
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()

    def stderr_tail(self, limit: int = 1200) -> str:
        """The end of what the worker and its servers printed (a traceback, if it failed)."""
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        text = self._stderr.read().decode(errors="replace").strip()
        self._stderr.seek(0, os.SEEK_END)
        return text[-limit:]

    def _read_line(self, deadline: float) -> str:
        process = self.process
        if process is None or process.stdout is None:
            raise WorkerFailed("the worker is not running")
        fd = process.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WorkerFailed("no answer in time")
            readable, _, _ = select.select([fd], [], [], remaining)
            if readable:
                chunk = os.read(fd, 65536)
                if not chunk:
                    process.wait()
                    raise WorkerFailed(
                        f"the worker exited with status {process.returncode}: {self.stderr_tail()}"
                    )
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode()

    # ------------------------------------------------------------------ a run

    def run(self, workload: str, load: str, duration: float, warmup: float) -> RunRecord:
        """One measurement of the cell (``workload``, ``load``); ``error`` set if it failed."""
        base: RunRecord = {
            "lib": self.lib,
            "transport": self.transport,
            "workload": workload,
            "load": load,
        }
        try:
            if self.process is None and not self._start_error:
                self._start()
            self.wait_ready()
            assert self.process is not None and self.process.stdin is not None
            command = {
                "op": "run",
                "workload": workload,
                "load": load,
                "duration": duration,
                "warmup": warmup,
            }
            self.process.stdin.write((json.dumps(command) + "\n").encode())
            self.process.stdin.flush()
            answer: RunRecord = json.loads(
                self._read_line(time.monotonic() + warmup + duration + RUN_GRACE)
            )
        except (WorkerFailed, OSError, ValueError) as error:
            self._kill()
            return {**base, "error": f"{type(error).__name__}: {error}"}
        return answer
