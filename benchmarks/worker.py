"""One long-lived benchmark process per (library, transport): ``python -m benchmarks.worker``.

    python -m benchmarks.worker <lib> <transport>   # transport: in-memory, stdio or websocket

It imports only its own library, opens one client session of the bench server (starting the
server process for stdio and WebSocket), checks one answer of every workload, and prints a
*ready* line. Then it reads commands, one JSON object a line, on stdin, and answers each with
one JSON line on stdout:

- ``{"op": "run", "workload": "call", "load": "x32", "duration": 0.5, "warmup": 0.2}`` ->
  a ``matrix.RunRecord`` (``error`` set, never a crash, when the run failed);
- ``{"op": "exit"}`` (or the end of stdin) -> closes the session and exits 0.

The ready line is ``{"ready": true, "lib", "transport", "backend", "versions": {...},
"protocol_version"}`` (the revision the client settled on, when its client tells), or
``{"ready": false, "error": "..."}`` followed by exit status 1. The ``xN`` loads all use the
session opened at start (it stays open between cells; after a failed run it is reopened);
``s100x20`` opens its own sessions. CPU time: in memory this process's (client and server);
over stdio and WebSocket the server process's, read from ``/proc``.

Anything the libraries print goes to stderr: the answers have stdout to themselves.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from functools import partial
from types import ModuleType
from typing import IO, Any

from .harness import (
    CpuClock,
    OpenSession,
    measure_callers,
    measure_sessions,
    record,
    server_child_pid,
)
from .matrix import LIBS, SESSION_LOAD, WORKLOADS, RunRecord, cells_for, lib_has_transport

#: Transports served by a worker (HTTP is driven by wrk: see benchmarks.http).
WORKER_TRANSPORTS = ("in-memory", "stdio", "websocket")

DRIVERS = {
    "mcptrio": "benchmarks.drive_mcptrio",
    "sdk": "benchmarks.drive_sdk",
    "sdk-legacy": "benchmarks.drive_sdk",
    "fastmcp": "benchmarks.drive_fastmcp",
    "mcptrio-stateless": "benchmarks.drive_mcptrio",
    "sdk-stateless": "benchmarks.drive_sdk",
    "floor": "benchmarks.drive_floor",
}


def describe(error: BaseException) -> str:
    """One line naming what failed, looking inside exception groups for the first cause."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


class Worker:
    def __init__(self, driver: ModuleType, lib: str, transport: str, out: IO[str]) -> None:
        self.driver = driver
        self.backend = driver.BACKEND
        self.lib = lib
        self.transport = transport
        self.out = out
        self.cells = set(cells_for(lib, transport))

    def send(self, message: dict[str, Any] | RunRecord) -> None:
        self.out.write(json.dumps(message) + "\n")
        self.out.flush()

    async def serve(self) -> None:
        ready = False
        try:
            async with self.driver.open_target(self.lib, self.transport) as open_session:
                while True:
                    async with open_session() as session:
                        for workload in WORKLOADS:
                            await session.caller(workload)()
                        # After a call of each workload, not before: a client that opens
                        # without a request (the SDK pinned to the stateless era) may not
                        # have started its stdio server yet.
                        clock = self.clock()
                        if not ready:
                            ready = True
                            self.send(
                                {
                                    "ready": True,
                                    "lib": self.lib,
                                    "transport": self.transport,
                                    "backend": self.backend.name,
                                    "versions": self.driver.versions(),
                                    # The revision the client settled on: which era the
                                    # cells measure (mcptrio 2025-11-25, the stateless
                                    # libraries 2026-07-28, the SDK's auto whatever it
                                    # negotiated).
                                    "protocol_version": getattr(
                                        getattr(session, "client", None), "protocol_version", None
                                    ),
                                }
                            )
                        if not await self.run_commands(session, open_session, clock):
                            return
        except Exception as error:
            if ready:
                raise
            self.send({"ready": False, "error": describe(error)})
            raise SystemExit(1) from error

    def clock(self) -> CpuClock:
        if self.transport == "in-memory":
            return CpuClock("client+server")
        return CpuClock("server", server_child_pid())

    async def run_commands(self, session: Any, open_session: OpenSession, clock: CpuClock) -> bool:
        """Answer commands; False at the end, True when the session must be reopened."""
        while True:
            line = await self.backend.read_line()
            if not line.strip():
                return False
            command = json.loads(line)
            if command.get("op") != "run":
                return False
            result = await self.run_cell(session, open_session, clock, command)
            self.send(result)
            if "error" in result and command["load"] != SESSION_LOAD:
                return True

    async def run_cell(
        self, session: Any, open_session: OpenSession, clock: CpuClock, command: dict[str, Any]
    ) -> RunRecord:
        workload, load = command["workload"], command["load"]
        duration, warmup = float(command["duration"]), float(command["warmup"])
        base: RunRecord = {
            "lib": self.lib,
            "transport": self.transport,
            "workload": workload,
            "load": load,
        }
        if (workload, load) not in self.cells:
            return {**base, "error": f"{load} {workload} is not a cell of {self.transport}"}
        try:
            if load == SESSION_LOAD:
                window = await measure_sessions(
                    self.backend, open_session, workload, warmup, duration, clock
                )
            else:
                call = session.caller(workload)
                window = await measure_callers(self.backend, call, load, warmup, duration, clock)
        except Exception as error:
            return {**base, "error": describe(error)}
        return record(self.lib, self.transport, workload, load, window)


def protocol_stdout() -> IO[str]:
    """A private copy of stdout for the answers; fd 1 then points at stderr for everyone else."""
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] not in LIBS or args[1] not in WORKER_TRANSPORTS:
        print(__doc__, file=sys.stderr)
        return 2
    lib, transport = args
    if not lib_has_transport(lib, transport):
        print(f"{lib} is not measured over {transport}", file=sys.stderr)
        return 2
    out = protocol_stdout()
    try:
        driver = importlib.import_module(DRIVERS[lib])
    except ImportError as error:
        out.write(json.dumps({"ready": False, "error": describe(error)}) + "\n")
        return 1
    worker = Worker(driver, lib, transport, out)
    driver.run(partial(worker.serve))
    return 0


if __name__ == "__main__":
    sys.exit(main())
