"""``python -m benchmarks --scale-out``: one mcptrio server run with 1 worker, then with 2.

The ``call`` workload at ``x32`` over HTTP (JSON answers), measured with wrk against
``mcptrio run benchmarks.servers.mcptrio_server --transport http --workers N``, N = 1 and 2,
the two interleaved (their order alternates from repeat to repeat); reported: calls/s, p50 and
p99 per worker count (medians over the repeats), and the ratio 2 workers / 1 worker.

Two eras (``--scale-out-eras``):

- ``stateless`` (the default): every call a 2026-07-28 POST standing alone (``stateless.lua``),
  so any worker answers any call: the figure of scale-out itself.
- ``handshake``: 32 sessions opened from Python, each on a connection of its own (so the kernel
  spreads them, and their owners, over the workers), then one wrk connection (and thread) per
  session (``calls.lua``). The kernel hands each wrk connection to a worker too, so with 2
  workers about half the calls reach a worker that does not own their session: with the Redis
  stores they are forwarded to the owner (the session relay); with the in-memory ones they are
  answered 404, and the run reports them as bad answers, with the first one, next to the calls
  that did succeed. Nothing is hidden: a run with bad answers says so in its row.

Two kinds of stores (``--scale-out-stores``): ``memory`` (each worker its own, the default of
``mcptrio run``) and ``redis`` (``--redis URL`` given to every worker: the Redis stores and the
session directory; the URL of ``--redis``, else a ``redis-server`` the benchmark starts). The
section ends with what an SSE event costs in the Redis event store against the in-memory one
(:mod:`.event_store_cost`).

Each measured window follows a warm-up of the same wrk run (so every worker is warm, not only the
one a Python client would reach). wrk runs on the same machine: on a small one it takes a share
of the cores the workers would use, which the report's header says, and the report gives the
CPU the serving processes used (``server cores busy``) beside the calls per CPU-second, so that
a ratio held down by a busy machine can be told from one held down by the workers.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import Any

import trio

from . import REPO_ROOT
from .capacity.server_process import free_port, listening
from .event_store_cost import format_markdown as event_store_markdown
from .event_store_cost import measure_both as measure_event_stores
from .http import wrk
from .http.client import Session, SessionError, StatelessCaller
from .http.runner import process_cpu_seconds
from .redis_server import RedisMissing, own_redis

#: The bench server, as a module (it imports its package's fixtures), run from the repository.
SERVER = "benchmarks.servers.mcptrio_server:build_server"
WORKLOAD = "call"
CONNECTIONS = 32
WORKER_COUNTS = (1, 2)
ERAS = ("stateless", "handshake")
STORES = ("memory", "redis")
JSON = "application/json"
#: Seconds a server has to print its ``Serving`` line, and to stop after SIGTERM.
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 15.0
#: Seconds stopping workers give their requests (the server's ``--grace``).
GRACE_S = 2.0


class ServerFailed(Exception):
    """The server did not start, or stopped too early."""


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@contextmanager
def running_server(
    workers: int, redis_url: str | None, log_dir: Path
) -> Iterator[tuple[int, list[int]]]:
    """``mcptrio run`` of the bench server with ``workers`` workers; yields its port and the pids
    of the processes serving (the workers, or the one process) once it has printed its
    ``Serving`` line (every worker serving), and stops it with SIGTERM."""
    port = free_port()
    command = [sys.executable, "-m", "mcptrio", "run", SERVER, "--transport", "http"]
    command += ["--port", str(port), "--workers", str(workers), "--grace", str(GRACE_S)]
    if redis_url is not None:
        command += ["--redis", redis_url]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
    }
    output = log_dir / f"server-{workers}w.log"
    with output.open("wb") as out:
        process = subprocess.Popen(
            command, cwd=REPO_ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while "\nServing " not in "\n" + output.read_text(errors="replace"):
            if process.poll() is not None:
                raise ServerFailed(f"the server exited ({process.returncode}): {_tail(output)}")
            if time.monotonic() > deadline:
                raise ServerFailed(f"the server did not serve within {START_TIMEOUT_S:g} s")
            time.sleep(0.05)
        if not listening(port):
            raise ServerFailed(f"the server printed its line but does not listen on {port}")
        yield port, (_children(process.pid) if workers > 1 else [process.pid])
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _children(pid: int) -> list[int]:
    """The child processes of ``pid`` (Linux ``/proc``: the processes whose parent it is)."""
    children = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_bytes()
            except OSError:
                continue
            # After "pid (comm)": state, then the parent's pid.
            if int(stat.rpartition(b")")[2].split()[1]) == pid:
                children.append(int(entry.name))
    return children


def _cpu_seconds(pids: list[int]) -> float:
    return sum(process_cpu_seconds(pid) for pid in pids)


def _tail(path: Path) -> str:
    text = path.read_text(errors="replace").strip()
    return text[-600:] if text else "(no output)"


def measure(port: int, pids: list[int], era: str, duration: float, warmup: float) -> dict[str, Any]:
    """One window of ``era`` against the server on ``port`` (served by ``pids``): the run's
    figures, bad answers and errors included (see the module docstring), and the CPU time the
    serving processes used in the window."""
    if era == "stateless":
        caller = StatelessCaller(port)
        try:
            caller.call(WORKLOAD)
        finally:
            caller.close()

        def run(window: float) -> wrk.WrkResult:
            return wrk.run_stateless(
                port, CONNECTIONS, window, workload=WORKLOAD, content_types=JSON
            )

        if warmup > 0:
            run(warmup)
        before = _cpu_seconds(pids)
        summary = run(duration).summary
        return _figures(summary, _cpu_seconds(pids) - before)
    sessions = [Session(port) for _ in range(CONNECTIONS)]
    try:
        for session in sessions:
            session.open()
            session.call(WORKLOAD)
            # wrk's connections go wherever the kernel sends them, not where this one went.
            session.connection.close()

        def run_calls(window: float) -> wrk.WrkResult:
            return wrk.run_calls(
                port,
                CONNECTIONS,
                window,
                session_id=",".join(session.session_id for session in sessions),
                protocol_version=sessions[0].protocol_version,
                workload=WORKLOAD,
                content_type=JSON,
                threads=CONNECTIONS,
            )

        if warmup > 0:
            run_calls(warmup)
        before = _cpu_seconds(pids)
        summary = run_calls(duration).summary
        figures = _figures(summary, _cpu_seconds(pids) - before)
        figures["session_owners"] = len({_owner(session.session_id) for session in sessions})
    finally:
        for session in sessions:
            with suppress(SessionError):
                session.delete()
            session.close()
    return figures


def _owner(session_id: str) -> str:
    """The worker a session id names (the part before its first dot; see the session relay)."""
    return session_id.partition(".")[0] if "." in session_id else ""


def _figures(summary: dict[str, Any], cpu_s: float) -> dict[str, Any]:
    elapsed = summary["duration_us"] / 1e6
    return {
        "server_cpu_s": cpu_s,
        "server_cores": cpu_s / elapsed if elapsed else 0.0,
        "calls": summary["ok"],
        "calls_per_s": summary["ok"] / elapsed if elapsed else 0.0,
        "bad": summary["bad"],
        "socket_errors": summary["socket_errors"],
        "timeouts": summary["timeouts"],
        "first_bad": summary.get("first_bad") or "",
        "p50_us": float(summary["p50_us"]),
        "p99_us": float(summary["p99_us"]),
    }


def run_scale_out(
    *,
    repeat: int,
    duration: float,
    warmup: float,
    eras: list[str],
    stores: list[str] = ["memory"],  # noqa: B006 (never mutated)
    redis_url: str | None = None,
) -> dict[str, Any]:
    """Every (stores, era, worker count) ``repeat`` times, worker counts interleaved; the runs
    and their medians. ``redis_url`` is the Redis of the ``redis`` stores."""
    if "redis" in stores and redis_url is None:
        raise ValueError("the redis stores need a Redis URL")
    runs: list[dict[str, Any]] = []
    total = repeat * len(WORKER_COUNTS) * len(eras) * len(stores)
    with tempfile.TemporaryDirectory(prefix="scale-out-") as tmp:
        for kind in stores:
            url = redis_url if kind == "redis" else None
            for round_index in range(repeat):
                order = WORKER_COUNTS if round_index % 2 == 0 else WORKER_COUNTS[::-1]
                for workers in order:
                    for record in _runs_of_one_server(
                        kind, url, workers, eras, duration, warmup, Path(tmp)
                    ):
                        runs.append(record)
                        log(f"[{len(runs):>2}/{total}] {_progress(record)}")
    return {
        "meta": {
            "workload": WORKLOAD,
            "connections": CONNECTIONS,
            "repeat": repeat,
            "duration_s": duration,
            "warmup_s": warmup,
            "cpus": os.cpu_count(),
            "stores": stores,
        },
        "runs": runs,
        "summary": summarize(runs, eras, stores),
    }


def _runs_of_one_server(
    stores: str,
    redis_url: str | None,
    workers: int,
    eras: list[str],
    duration: float,
    warmup: float,
    log_dir: Path,
) -> Iterator[dict[str, Any]]:
    try:
        with running_server(workers, redis_url, log_dir) as (port, pids):
            for era in eras:
                record: dict[str, Any] = {"stores": stores, "era": era, "workers": workers}
                try:
                    record.update(measure(port, pids, era, duration, warmup))
                except (SessionError, wrk.WrkError, OSError) as error:
                    record["error"] = f"{type(error).__name__}: {error}"
                yield record
    except ServerFailed as error:
        for era in eras:
            yield {"stores": stores, "era": era, "workers": workers, "error": str(error)}


def _progress(record: dict[str, Any]) -> str:
    head = f"{record.get('stores', 'memory'):<6} {record['era']:<9} {record['workers']}w"
    if "error" in record:
        return f"{head}  error: {record['error']}"
    text = f"{head}  {record['calls_per_s']:>8,.0f} calls/s  p99 {record['p99_us'] / 1000:.1f} ms"
    text += f"  server {record['server_cores']:.2f} cores"
    if record["bad"] or record["socket_errors"] or record["timeouts"]:
        text += (
            f"  bad {record['bad']}, socket errors {record['socket_errors']}, "
            f"timeouts {record['timeouts']}; first bad: {record['first_bad'][:120]}"
        )
    return text


def summarize(
    runs: list[dict[str, Any]],
    eras: list[str],
    stores: list[str] = ["memory"],  # noqa: B006 (never mutated)
) -> list[dict[str, Any]]:
    """Per stores, era and worker count: medians of the runs that produced figures, the errors
    counted; the ratio is to one worker with the same stores and era."""
    return [row for kind in stores for era in eras for row in _rows(runs, kind, era)]


def _rows(runs: list[dict[str, Any]], stores: str, era: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    base: float | None = None
    for workers in WORKER_COUNTS:
        mine = [
            r
            for r in runs
            if r.get("stores", "memory") == stores and r["era"] == era and r["workers"] == workers
        ]
        measured = [r for r in mine if "error" not in r]
        row: dict[str, Any] = {"stores": stores, "era": era, "workers": workers, "runs": len(mine)}
        row["failed_runs"] = len(mine) - len(measured)
        if measured:
            row["calls_per_s"] = statistics.median(r["calls_per_s"] for r in measured)
            row["p50_us"] = statistics.median(r["p50_us"] for r in measured)
            row["p99_us"] = statistics.median(r["p99_us"] for r in measured)
            row["server_cores"] = statistics.median(r["server_cores"] for r in measured)
            row["calls_per_cpu_s"] = (
                statistics.median(
                    r["calls"] / r["server_cpu_s"] for r in measured if r["server_cpu_s"]
                )
                if any(r["server_cpu_s"] for r in measured)
                else 0.0
            )
            row["bad"] = sum(r["bad"] for r in measured)
            row["errors"] = sum(r["socket_errors"] + r["timeouts"] for r in measured)
            row["first_bad"] = next((r["first_bad"] for r in measured if r["first_bad"]), "")
            if workers == WORKER_COUNTS[0]:
                base = row["calls_per_s"]
            elif base:
                row["ratio"] = row["calls_per_s"] / base
        rows.append(row)
    return rows


def format_markdown(results: dict[str, Any]) -> str:
    meta = results["meta"]
    lines = [
        f"# Scale-out: `{meta['workload']}` x{meta['connections']} over HTTP, 1 and 2 workers",
        "",
        f"{meta['cpus']} CPUs (wrk runs on the same machine); {meta['repeat']} repeat(s) of "
        f"{meta['duration_s']:g} s after {meta['warmup_s']:g} s of warm-up; medians. "
        "Stores: `memory` each worker its own; `redis` shared through Redis (the session relay "
        "forwards a handshake-era call to its session's worker).",
        "",
        "| stores | era | workers | calls/s | 2w / 1w | p50 ms | p99 ms | server cores busy "
        "| calls per server CPU-second | bad answers | socket errors + timeouts | failed runs |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in results["summary"]:
        head = f"| {row.get('stores', 'memory')} | {row['era']} | {row['workers']} |"
        if "calls_per_s" not in row:
            lines.append(f"{head}{' - |' * 8} {row['failed_runs']} |")
            continue
        ratio = f"{row['ratio']:.2f}x" if "ratio" in row else ""
        lines.append(
            f"{head} {row['calls_per_s']:,.0f} | {ratio} | "
            f"{row['p50_us'] / 1000:.2f} | {row['p99_us'] / 1000:.2f} | "
            f"{row['server_cores']:.2f} | {row['calls_per_cpu_s']:,.0f} | {row['bad']} | "
            f"{row['errors']} | {row['failed_runs']} |"
        )
    firsts = [row for row in results["summary"] if row.get("first_bad")]
    if firsts:
        lines += ["", "First bad answer of each row that had any:", ""]
        lines += [
            f"- {row.get('stores', 'memory')} {row['era']} {row['workers']}w: "
            f"`{row['first_bad'][:200]}`"
            for row in firsts
        ]
    if "event_store" in results:
        lines += ["", event_store_markdown(results["event_store"]).rstrip("\n")]
    return "\n".join(lines) + "\n"


def main(
    *,
    repeat: int,
    duration: float,
    warmup: float,
    eras: list[str],
    stores: list[str],
    redis_url: str | None,
    out_dir: Path,
) -> int:
    """Run, write ``results.json`` and ``results.md`` to ``out_dir``, print the table; 1 if a
    run produced no figure. The ``redis`` stores use ``redis_url``, else a redis-server of the
    benchmark's own (none on the machine: said, and only the ``memory`` rows run)."""
    log(
        f"scale-out: {', '.join(eras)}; stores {', '.join(stores)}; 1 and 2 workers; "
        f"{repeat} repeat(s) of {warmup:g} s warm-up + {duration:g} s"
    )
    with ExitStack() as stack:
        if "redis" in stores and redis_url is None:
            try:
                redis_url = stack.enter_context(own_redis())
            except RedisMissing as error:
                log(f"scale-out: {error}; the memory stores only")
                stores = [kind for kind in stores if kind != "redis"]
        results = run_scale_out(
            repeat=repeat,
            duration=duration,
            warmup=warmup,
            eras=eras,
            stores=stores,
            redis_url=redis_url,
        )
        if redis_url is not None:
            log("scale-out: the SSE event store's cost per event")
            results["event_store"] = trio.run(measure_event_stores, redis_url)
    out_dir.mkdir(parents=True, exist_ok=True)
    table = format_markdown(results)
    (out_dir / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    (out_dir / "results.md").write_text(table, encoding="utf-8")
    print(table, end="")
    log(f"wrote results.json, results.md to {out_dir}/")
    return 1 if any("error" in run for run in results["runs"]) else 0
