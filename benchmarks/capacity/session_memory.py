"""Where mcptrio's memory per Streamable HTTP session goes: a tracemalloc diagnostic.

::

    python -m benchmarks.capacity.session_memory [--sessions 1000] [--out FILE.md]

Runs the benchmark's mcptrio server in this process (``serve_http(json_response=True)`` under
``trio.run``) with tracemalloc on, and drives it from a worker thread with the raw-socket client
of :mod:`benchmarks.capacity.http_client`. For idle sessions, then (on a fresh server) sessions
each holding a GET SSE stream, it snapshots after the first session and after ``--sessions``
more, and writes a Markdown report: the traced growth per session grouped by the allocating
line, by the innermost mcptrio line (and three mcptrio frames) on the allocation's stack, and
the tasks alive per session.
The client thread's allocations are filtered out (every trace through trio's thread cache).
tracemalloc's own overhead inflates RSS, so only traced sizes are reported.
"""

from __future__ import annotations

import argparse
import gc
import linecache
import socket
import sys
import tracemalloc
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import trio

from .http_client import Connection, OpenedSession, open_get_stream

__all__ = ["Breakdown", "breakdown", "format_report", "main"]

FRAMES = 30
TOP = 30
_MCPTRIO_DIR = "/mcptrio/"
_THREAD_CACHE = "/trio/_core/_thread_cache.py"


@dataclass(frozen=True, slots=True)
class Breakdown:
    sessions: int
    get_stream: bool
    total_bytes: int
    blocks: int
    by_line: list[tuple[str, int, int]]
    by_mcptrio_line: list[tuple[str, int, int]]
    by_mcptrio_chain: list[tuple[str, int, int]]
    tasks_per_session: list[tuple[str, float]]


def _task_names() -> Counter[str]:
    """The live trio tasks, counted by name."""
    names: Counter[str] = Counter()
    pending = [trio.lowlevel.current_root_task()]
    while pending:
        task = pending.pop()
        if task is None:
            continue
        names[task.name] += 1
        for nursery in task.child_nurseries:
            pending.extend(nursery.child_tasks)
    return names


def _snapshot() -> tracemalloc.Snapshot:
    gc.collect()
    return tracemalloc.take_snapshot()


def _from_client_thread(frames: list[tracemalloc.Frame]) -> bool:
    # Everything the client thread allocates goes through trio's thread cache. (Checked here
    # rather than with tracemalloc.Filter, whose fnmatch over every trace takes minutes.)
    return any(_THREAD_CACHE in frame.filename for frame in frames)


def _short(filename: str) -> str:
    for marker in (_MCPTRIO_DIR, "/site-packages/", "/lib/python3"):
        if marker in filename:
            return (
                filename.split(marker, 1)[1]
                if marker != _MCPTRIO_DIR
                else "mcptrio/" + (filename.split(marker, 1)[1])
            )
    return filename


def _where(frame: tracemalloc.Frame) -> str:
    return f"{_short(frame.filename)}:{frame.lineno}"


def _source(where: str) -> str:
    path, _, lineno = where.rpartition(":")
    if not path.startswith("mcptrio/"):
        return ""
    full = str(Path(__file__).resolve().parent.parent.parent / path)
    return linecache.getline(full, int(lineno)).strip().replace("|", "\\|")


Rows = list[tuple[str, int, int]]


def _diff(
    before: tracemalloc.Snapshot, after: tracemalloc.Snapshot
) -> tuple[int, int, Rows, Rows, Rows]:
    """Total bytes and blocks grown, then rows (where, bytes, blocks) grouped three ways."""
    sizes: dict[str, Counter[str]] = {"line": Counter(), "owner": Counter(), "chain": Counter()}
    counts: dict[str, Counter[str]] = {"line": Counter(), "owner": Counter(), "chain": Counter()}
    total = blocks = 0
    for stat in after.compare_to(before, "traceback"):
        if not stat.size_diff and not stat.count_diff:
            continue
        frames = list(stat.traceback)  # oldest first
        if _from_client_thread(frames):
            continue
        ours = [f for f in frames if _MCPTRIO_DIR in f.filename]
        keys = {
            "line": _where(frames[-1]),
            "owner": _where(ours[-1]) if ours else "(no mcptrio frame)",
            "chain": " > ".join(_where(f) for f in ours[-3:]) or "(no mcptrio frame)",
        }
        for grouping, key in keys.items():
            sizes[grouping][key] += stat.size_diff
            counts[grouping][key] += stat.count_diff
        total += stat.size_diff
        blocks += stat.count_diff

    def rows(grouping: str) -> Rows:
        size, count = sizes[grouping], counts[grouping]
        ordered = sorted(size, key=lambda k: -abs(size[k]))[:TOP]
        return [(k, size[k], count[k]) for k in ordered]

    return total, blocks, rows("line"), rows("owner"), rows("chain")


async def _measure(sessions: int, get_stream: bool) -> Breakdown:
    from benchmarks.servers.mcptrio_server import build_server
    from mcptrio.transports.http.engine.builtin_server import ServerLimits

    server = build_server()
    limits = ServerLimits(max_connections=max(1000, sessions + 16))
    streams: list[socket.socket] = []
    opened: list[OpenedSession] = []
    async with trio.open_nursery() as nursery:
        url = await nursery.start(
            lambda task_status: server.serve_http(
                "127.0.0.1", 0, json_response=True, limits=limits, task_status=task_status
            )
        )
        port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
        conn = Connection(port)

        def open_sessions(count: int) -> Callable[[], None]:
            def run() -> None:
                for _ in range(count):
                    session = conn.open_session()
                    opened.append(session)
                    if get_stream:
                        streams.append(open_get_stream(port, session))

            return run

        try:
            await trio.to_thread.run_sync(open_sessions(1))
            await trio.sleep(0.5)
            tasks_before = _task_names()
            before = _snapshot()
            await trio.to_thread.run_sync(open_sessions(sessions))
            await trio.sleep(0.5)
            tasks_after = _task_names()
            after = _snapshot()
        finally:
            conn.close()
            for sock in streams:
                sock.close()
        nursery.cancel_scope.cancel()
    total, blocks, by_line, by_mcptrio, by_chain = _diff(before, after)
    tasks_after.subtract(tasks_before)
    tasks = [(name, n / sessions) for name, n in tasks_after.most_common() if n]
    return Breakdown(sessions, get_stream, total, blocks, by_line, by_mcptrio, by_chain, tasks)


def breakdown(sessions: int, *, get_stream: bool) -> Breakdown:
    """Run the server in this process with tracemalloc and break down ``sessions`` sessions."""
    tracemalloc.start(FRAMES)
    try:
        return trio.run(_measure, sessions, get_stream)
    finally:
        tracemalloc.stop()


def _section(result: Breakdown) -> list[str]:
    n = result.sessions
    kind = "with an open GET SSE stream" if result.get_stream else "idle"
    lines = [
        f"## {n} sessions, {kind}",
        "",
        f"Traced growth: {result.total_bytes / 1024 / n:.2f} KiB per session "
        f"({result.blocks / n:.1f} blocks per session).",
        "",
        "### Live trio tasks added per session",
        "",
        "| task | per session |",
        "|---|---|",
        *(f"| `{name}` | {per:.2f} |" for name, per in result.tasks_per_session),
        "",
        "### By the innermost mcptrio line on the allocating stack",
        "",
        "| mcptrio line | bytes/session | blocks/session | source |",
        "|---|---|---|---|",
        *(
            f"| `{k}` | {size / n:.0f} | {count / n:.2f} | `{_source(k)}` |"
            for k, size, count in result.by_mcptrio_line
        ),
        "",
        "### By the innermost three mcptrio frames (outer > inner)",
        "",
        "| mcptrio frames | bytes/session | blocks/session |",
        "|---|---|---|",
        *(
            f"| `{k}` | {size / n:.0f} | {count / n:.2f} |"
            for k, size, count in result.by_mcptrio_chain
        ),
        "",
        "### By the allocating line",
        "",
        "| file:line | bytes/session | blocks/session |",
        "|---|---|---|",
        *(f"| `{k}` | {size / n:.0f} | {count / n:.2f} |" for k, size, count in result.by_line),
        "",
    ]
    return lines


def format_report(results: list[Breakdown]) -> str:
    """The breakdowns as one Markdown document."""
    head = [
        "# mcptrio: where the memory of a Streamable HTTP session goes",
        "",
        "Made by `python -m benchmarks.capacity.session_memory` (tracemalloc, "
        f"{FRAMES} frames, server in-process, client thread filtered out, `gc.collect()` before "
        "each snapshot). Sizes are Python allocations traced between a snapshot after the first "
        "session and one after all the others; RSS (what the benchmark reports) adds "
        "allocator overhead, kernel socket buffers are not in it. Targets: <= 4 KiB per idle "
        "session, <= 12 KiB with an open GET stream.",
        "",
    ]
    return "\n".join(head + [line for result in results for line in _section(result)])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.capacity.session_memory")
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=None, help="write the report here too")
    args = parser.parse_args(argv)
    results = [breakdown(args.sessions, get_stream=stream) for stream in (False, True)]
    report = format_report(results)
    if args.out is not None:
        args.out.write_text(report + "\n")
        print(f"wrote {args.out}", file=sys.stderr)
    print(report)


if __name__ == "__main__":
    main()
