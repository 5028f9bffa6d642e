"""Server memory per Streamable HTTP session, and where it goes: one command, KiB per session.

::

    python -m benchmarks.session_memory [--libs mcptrio sdk] [--sessions 1000] [--no-trace]
                                        [--top 25] [--out FILE.md]

For each library and each of two cases, **idle** (``initialize`` + ``notifications/
initialized``, then nothing) and **GET stream** (the same, then the session's standalone GET SSE
stream held open), it starts the library's benchmark server
(``benchmarks/servers/<lib>_server.py``, JSON answers, as :mod:`benchmarks.capacity.server`
serves it) in a process of its own, so the client's memory never counts, and opens the sessions
with the raw-socket client of :mod:`benchmarks.capacity.http_client`:

- **RSS**: a fresh server gets one session and settles, its resident set is read; ``--sessions``
  more are opened and kept, the resident set is read again once it settles; the growth over
  ``--sessions``, in KiB. (The capacity benchmark's figure, taken the same way.)
- **traced** (unless ``--no-trace``): another fresh server runs with ``tracemalloc`` on
  (``FRAMES`` frames). On ``SIGUSR1`` it collects garbage and dumps a snapshot; one is taken
  after the first session and one after the others, and their difference over ``--sessions`` is
  the traced figure. Python allocations only, without the allocator's overhead or kernel socket
  buffers, so it is close to, not the same as, the RSS figure. The report breaks it down by the
  innermost frame of the library on the allocating stack (``mcptrio/...``, or the SDK's ``mcp/``
  ...) and by the allocating line itself.

It prints one summary line per library and case (``KiB/session``), then the breakdowns as
Markdown (also written to ``--out``).
"""

from __future__ import annotations

import argparse
import gc
import linecache
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import FrameType

from benchmarks.capacity.http_client import Connection, OpenedSession, open_get_stream
from benchmarks.capacity.server_process import (
    REPO_ROOT,
    ServerProcess,
    environment,
    free_port,
    listening,
)
from benchmarks.capacity.sessions import memory_per_session

__all__ = ["Case", "main", "measure_rss", "measure_traced"]

LIBS = ("mcptrio", "sdk")
#: Frames kept per traced allocation: enough to reach the library's frame under trio's or
#: asyncio's own.
FRAMES = 25
START_TIMEOUT_S = 180.0
SNAPSHOT_TIMEOUT_S = 300.0
#: Where each library's own code lives, as it appears in a traced file name.
_MARKERS = {"mcptrio": "/mcptrio/", "sdk": "/site-packages/mcp/"}


@dataclass(frozen=True, slots=True)
class Case:
    lib: str
    get_stream: bool

    @property
    def label(self) -> str:
        return f"{self.lib} {'GET stream' if self.get_stream else 'idle'}"


@dataclass(frozen=True, slots=True)
class Traced:
    kib_per_session: float
    blocks_per_session: float
    by_owner: list[tuple[str, int, int]]
    by_line: list[tuple[str, int, int]]


# ------------------------------------------------------------------ the server process


def _dump_snapshot(directory: Path, _signum: int, _frame: FrameType | None) -> None:
    """SIGUSR1 in the server: dump a snapshot as ``<n>.snap`` (written aside, then renamed)."""
    gc.collect()
    snapshot = tracemalloc.take_snapshot()
    index = len(list(directory.glob("*.snap")))
    partial_path = directory / f"{index}.part"
    snapshot.dump(str(partial_path))
    partial_path.rename(directory / f"{index}.snap")


def serve(lib: str, port: int, max_connections: int, trace_dir: Path | None) -> None:
    """Run ``lib``'s capacity server; with ``trace_dir``, traced and dumping on SIGUSR1."""
    from benchmarks.capacity import server

    if trace_dir is not None:
        # Imported before tracing starts: under tracemalloc an import takes many times longer.
        if lib == "mcptrio":
            import benchmarks.servers.mcptrio_server
            import mcptrio.transports.http.engine.builtin_server  # noqa: F401
        else:
            import uvicorn  # noqa: F401

            import benchmarks.servers.sdk_server  # noqa: F401
        tracemalloc.start(FRAMES)
        signal.signal(signal.SIGUSR1, partial(_dump_snapshot, trace_dir))
    if lib == "mcptrio":
        server.serve_mcptrio(port, max_connections)
    else:
        server.serve_sdk(port)


# ------------------------------------------------------------------ the measuring process

_HANDLER_LINES = frozenset(
    line for _, _, line in _dump_snapshot.__code__.co_lines() if line is not None
)


@dataclass(frozen=True, slots=True)
class _Server:
    pid: int
    port: int
    process: subprocess.Popen[bytes]
    trace_dir: Path | None


@contextmanager
def _running(lib: str, max_connections: int, *, traced: bool) -> Iterator[_Server]:
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="session-memory-") as tmp:
        trace_dir = Path(tmp) if traced else None
        args = [sys.executable, "-m", "benchmarks.session_memory", "serve", lib, str(port)]
        args.append(str(max_connections))
        if trace_dir is not None:
            args += ["--trace-dir", str(trace_dir)]
        log = Path(tmp) / "server.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                args,
                cwd=REPO_ROOT,
                env=environment(),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while not listening(port):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{lib} server did not start: {log.read_text()[-600:]}")
                time.sleep(0.05)
            yield _Server(process.pid, port, process, trace_dir)
        finally:
            process.terminate()
            try:
                process.wait(5.0)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _snapshot(server: _Server) -> tracemalloc.Snapshot:
    """Ask the server for a snapshot and load it once written."""
    assert server.trace_dir is not None
    index = len(list(server.trace_dir.glob("*.snap")))
    path = server.trace_dir / f"{index}.snap"
    os.kill(server.pid, signal.SIGUSR1)
    deadline = time.monotonic() + SNAPSHOT_TIMEOUT_S
    while not path.exists():
        if server.process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("the server wrote no snapshot")
        time.sleep(0.1)
    return tracemalloc.Snapshot.load(str(path))


def _max_connections(sessions: int) -> int:
    # Each GET stream holds a connection, plus the first session's and the POSTs'.
    return max(1000, sessions + 16)


def measure_rss(case: Case, sessions: int) -> float:
    """KiB of resident set per session (see the module docstring)."""
    with _running(case.lib, _max_connections(sessions), traced=False) as server:
        memory = memory_per_session(
            ServerProcess(server.pid, server.port, server.process),
            sessions,
            get_stream=case.get_stream,
            pause_s=0.3,
            max_wait_s=3.0,
        )
    if memory.lost:
        raise RuntimeError(f"{case.label}: {'; '.join(memory.lost)}")
    return memory.kib_per_session


def _open(port: int, conn: Connection, count: int, get_stream: bool, keep: list[object]) -> None:
    for _ in range(count):
        session: OpenedSession = conn.open_session()
        keep.append(session)
        if get_stream:
            keep.append(open_get_stream(port, session))


def _where(frame: tracemalloc.Frame) -> str:
    name = frame.filename
    for marker in ("/site-packages/", "/lib/python3.11/", str(REPO_ROOT) + "/"):
        if marker in name:
            name = name.split(marker, 1)[1]
            break
    return f"{name}:{frame.lineno}"


def measure_traced(case: Case, sessions: int, top: int) -> Traced:
    """The traced growth per session and its breakdown (see the module docstring)."""
    keep: list[object] = []
    with _running(case.lib, _max_connections(sessions), traced=True) as server:
        conn = Connection(server.port)
        try:
            _open(server.port, conn, 1, case.get_stream, keep)
            time.sleep(0.5)
            before = _snapshot(server)
            _open(server.port, conn, sessions, case.get_stream, keep)
            time.sleep(0.5)
            after = _snapshot(server)
        finally:
            conn.close()
            for item in keep:
                if isinstance(item, socket.socket):
                    item.close()
    marker = _MARKERS[case.lib]
    owners: Counter[str] = Counter()
    owner_blocks: Counter[str] = Counter()
    lines: Counter[str] = Counter()
    line_blocks: Counter[str] = Counter()
    total = blocks = 0
    for stat in after.compare_to(before, "traceback"):
        if not stat.size_diff and not stat.count_diff:
            continue
        frames = list(stat.traceback)  # oldest first
        # The snapshot itself (the signal handler's frames) is not the sessions' memory.
        if any(f.filename == __file__ and f.lineno in _HANDLER_LINES for f in frames):
            continue
        ours = [f for f in frames if marker in f.filename]
        owner = _where(ours[-1]) if ours else "(no frame of the library)"
        line = _where(frames[-1])
        owners[owner] += stat.size_diff
        owner_blocks[owner] += stat.count_diff
        lines[line] += stat.size_diff
        line_blocks[line] += stat.count_diff
        total += stat.size_diff
        blocks += stat.count_diff

    def rows(sizes: Counter[str], counts: Counter[str]) -> list[tuple[str, int, int]]:
        ordered = sorted(sizes, key=lambda key: -abs(sizes[key]))[:top]
        return [(key, sizes[key], counts[key]) for key in ordered]

    return Traced(
        total / 1024 / sessions,
        blocks / sessions,
        rows(owners, owner_blocks),
        rows(lines, line_blocks),
    )


def _source(where: str) -> str:
    path, _, lineno = where.rpartition(":")
    full = REPO_ROOT / path
    if not full.exists():
        for base in sys.path:
            if (Path(base) / path).exists():
                full = Path(base) / path
                break
    text = linecache.getline(str(full), int(lineno)) if lineno.isdigit() else ""
    return text.strip().replace("|", "\\|")


def _report(case: Case, sessions: int, rss: float | None, traced: Traced | None) -> list[str]:
    lines = [f"## {case.label}: {sessions} sessions", ""]
    if rss is not None:
        lines.append(f"- RSS growth: **{rss:.1f} KiB per session**")
    if traced is None:
        return [*lines, ""]
    lines += [
        f"- traced growth: {traced.kib_per_session:.1f} KiB per session "
        f"({traced.blocks_per_session:.1f} blocks)",
        "",
        f"By the innermost {case.lib} frame on the allocating stack:",
        "",
        "| frame | bytes/session | blocks/session | source |",
        "|---|---:|---:|---|",
        *(
            f"| `{k}` | {size / sessions:.0f} | {count / sessions:.2f} | `{_source(k)}` |"
            for k, size, count in traced.by_owner
        ),
        "",
        "By the allocating line:",
        "",
        "| line | bytes/session | blocks/session |",
        "|---|---:|---:|",
        *(
            f"| `{k}` | {size / sessions:.0f} | {count / sessions:.2f} |"
            for k, size, count in traced.by_line
        ),
        "",
    ]
    return lines


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["serve"]:
        served = argparse.ArgumentParser(prog="python -m benchmarks.session_memory serve")
        served.add_argument("lib", choices=LIBS)
        served.add_argument("port", type=int)
        served.add_argument("max_connections", type=int)
        served.add_argument("--trace-dir", type=Path, default=None)
        opts = served.parse_args(argv[1:])
        serve(opts.lib, opts.port, opts.max_connections, opts.trace_dir)
        return
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.session_memory",
        description="Server memory per Streamable HTTP session (KiB), and where it goes.",
    )
    parser.add_argument("--libs", nargs="+", choices=LIBS, default=["mcptrio"])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--no-trace", action="store_true", help="the RSS figures only")
    parser.add_argument("--no-rss", action="store_true", help="the traced figures only")
    parser.add_argument("--idle-only", action="store_true", help="skip the GET-stream case")
    parser.add_argument("--top", type=int, default=25, help="rows per breakdown")
    parser.add_argument("--out", type=Path, default=None, help="write the report here too")
    args = parser.parse_args(argv)
    report = [
        "# Server memory per Streamable HTTP session",
        "",
        "Made by `python -m benchmarks.session_memory` (see its docstring for the method).",
        "",
    ]
    summary: list[str] = []
    for lib in args.libs:
        for get_stream in (False,) if args.idle_only else (False, True):
            case = Case(lib, get_stream)
            print(f"session_memory: {case.label} ...", file=sys.stderr, flush=True)
            rss = None if args.no_rss else measure_rss(case, args.sessions)
            traced = None if args.no_trace else measure_traced(case, args.sessions, args.top)
            figures = []
            if rss is not None:
                figures.append(f"RSS {rss:.1f} KiB/session")
            if traced is not None:
                figures.append(f"traced {traced.kib_per_session:.1f} KiB/session")
            summary.append(f"{case.label:<20} {', '.join(figures)}")
            print(summary[-1], file=sys.stderr, flush=True)
            report += _report(case, args.sessions, rss, traced)
    text = "\n".join(report)
    if args.out is not None:
        args.out.write_text(text + "\n")
    print(text)
    print("\n".join(summary))


if __name__ == "__main__":
    main()
