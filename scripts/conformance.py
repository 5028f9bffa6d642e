"""Run the official MCP conformance suite against mcptrio's everything server and client.

What it does, in order:

1. Finds the suite: the version pinned in ``interop/package.json`` lives in ``interop/``
   (``npm ci --prefix interop`` when it is missing); any other ``--suite-version`` is installed
   into ``.conformance-next/<version>/``. Both folders are git-ignored and both bring a Node 22
   (the ``node`` npm package), which the suite needs; the system Node may be older.
2. Starts ``examples/everything_server.py`` over Streamable HTTP on a free loopback port (the
   server binds port 0 and prints its URL) and waits, with a deadline, until it listens.
3. Runs ``conformance server --suite all`` against it (or the chosen scenarios, one at a time),
   then stops the server.
4. Runs every client scenario (``conformance list --client``) one at a time against
   ``examples/everything_client.py``: run together, the timing checks of ``sse-retry`` fail
   from CPU contention alone on a small machine.
5. Runs the authorization-server scenarios (``conformance authorization``, from 0.2.0-alpha.12)
   against mcptrio's development authorization server, playing the browser headlessly (see
   ``conformance_authorization.py``); a full run does, and so does naming one of them.
6. Reads every scenario's ``checks.json`` (kept under ``conformance-results/<version>/``),
   prints a summary, and exits 1 on any FAILURE or WARNING in a scenario that is not listed in
   the expected-failures file, on a listed scenario that passes (stale entry), on a suite run
   that exits non-zero, and on a client that exits non-zero or times out.

The expected-failures file (``conformance/expected-failures.yml``) is also handed to the suite
(``--expected-failures``), whose own verdict must agree. Every process started here runs in its
own process group and is killed on every way out (normal end, error, Ctrl-C, SIGTERM).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
INTEROP = ROOT / "interop"
NEXT = ROOT / ".conformance-next"
LOCALHOST_ONLY = INTEROP / "localhost-only.cjs"
SERVER = Path("examples") / "everything_server.py"
CLIENT = Path("examples") / "everything_client.py"
DEFAULT_EXPECTED = ROOT / "conformance" / "expected-failures.yml"
DEFAULT_RESULTS = ROOT / "conformance-results"
PACKAGE = "@modelcontextprotocol/conformance"
#: The revisions negotiated by ``initialize``; ``--handshake-era`` keeps scenarios tagged with one.
HANDSHAKE_REVISIONS = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})
SERVER_START_DEADLINE = 30.0
#: The whole server suite takes seconds; this bounds a hung run.
SERVER_SUITE_DEADLINE = 600.0
#: The suite's client results directories end in an ISO timestamp with ``:`` and ``.`` as ``-``.
TIMESTAMP_SUFFIX = re.compile(r"-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$")
LISTED_SCENARIO = re.compile(r"^\s+-\s+(\S+)(?:\s+\[([^\]]*)\])?\s*$")


class ConformanceError(Exception):
    """The run could not be carried out (install, start-up, a hung process)."""


# ---------------------------------------------------------------------------- processes


class Processes:
    """Every process this script starts, each in its own process group, killed on exit."""

    def __init__(self) -> None:
        self._running: list[subprocess.Popen[bytes]] = []

    def start(
        self, command: Sequence[str], *, env: dict[str, str], output: IO[bytes]
    ) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            list(command),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=ROOT,
            start_new_session=True,
        )
        self._running.append(process)
        return process

    def run(
        self, command: Sequence[str], *, env: dict[str, str], log: Path, deadline: float
    ) -> int:
        """Run ``command`` to its end (output into ``log``); kill its whole group on timeout."""
        with log.open("ab") as output:
            process = self.start(command, env=env, output=output)
            try:
                return process.wait(timeout=deadline)
            except subprocess.TimeoutExpired:
                raise ConformanceError(
                    f"{' '.join(command[:3])} ... did not finish within {deadline:.0f} s "
                    f"(output in {log})"
                ) from None
            finally:
                self.stop(process)

    def stop(self, process: subprocess.Popen[bytes]) -> None:
        """Terminate ``process`` and everything it started (its process group)."""
        if process in self._running:
            self._running.remove(process)
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        with suppress(subprocess.TimeoutExpired):
            process.wait(timeout=5)
        # Whatever is left of the group (a child that ignored SIGTERM, or a hung leader).
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=5)

    def stop_all(self) -> None:
        for process in list(self._running):
            self.stop(process)


def raise_on_signal(signum: int, _frame: FrameType | None) -> None:
    # SystemExit unwinds through every ``finally``, so the process groups are killed.
    raise SystemExit(128 + signum)


# ---------------------------------------------------------------------------- the suite


@dataclass(frozen=True)
class Suite:
    version: str
    folder: Path

    @property
    def bin(self) -> Path:
        return self.folder / "node_modules" / ".bin"

    def env(self) -> dict[str, str]:
        python_path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
        return {
            **os.environ,
            "PATH": f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}",
            "NODE_OPTIONS": f"--require {LOCALHOST_ONLY}",
            # The server and client under test are this checkout's, installed or not.
            "PYTHONPATH": python_path,
        }

    def command(self, *args: str) -> list[str]:
        return [str(self.bin / "conformance"), *args]


def pinned_versions() -> tuple[str, str]:
    """The suite's and Node's versions pinned in ``interop/package.json``."""
    dependencies = json.loads((INTEROP / "package.json").read_text())["dependencies"]
    return dependencies[PACKAGE], dependencies["node"]


def install_suite(version: str | None) -> Suite:
    pinned, node_version = pinned_versions()
    if version is None or version == pinned:
        suite = Suite(pinned, INTEROP)
        if not (suite.bin / "conformance").exists():
            print(f"== installing the pinned suite into {INTEROP} (npm ci)", flush=True)
            npm("ci", "--prefix", str(INTEROP))
    else:
        suite = Suite(version, NEXT / version)
        if not (suite.bin / "conformance").exists():
            print(f"== installing {PACKAGE}@{version} into {suite.folder}", flush=True)
            suite.folder.mkdir(parents=True, exist_ok=True)
            manifest = {
                "name": "mcptrio-conformance-next",
                "private": True,
                "dependencies": {PACKAGE: version, "node": node_version},
            }
            (suite.folder / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
            npm("install", "--prefix", str(suite.folder))
    node = subprocess.run(
        [str(suite.bin / "node"), "--version"], capture_output=True, text=True, check=False
    )
    major = node.stdout.strip().lstrip("v").split(".")[0]
    if node.returncode != 0 or not major.isdigit() or int(major) < 22:
        raise ConformanceError(f"{suite.bin / 'node'} is not Node >= 22: {node.stdout.strip()}")
    return suite


def npm(*args: str) -> None:
    npm_path = shutil.which("npm")
    if npm_path is None:
        raise ConformanceError("npm is not on PATH (Node 20 or later with npm is needed)")
    completed = subprocess.run(
        [npm_path, *args, "--no-audit", "--no-fund", "--loglevel=error"], check=False
    )
    if completed.returncode != 0:
        raise ConformanceError(f"npm {' '.join(args)} failed ({completed.returncode})")


def list_scenarios(
    suite: Suite, mode: str, requirements: str | None = None
) -> dict[str, frozenset[str]]:
    """``conformance list --<mode>``: every scenario's name and the spec versions it tags (with
    ``requirements``, those the requirement set of that revision holds)."""
    extra = () if requirements is None else ("--requirements", requirements)
    completed = subprocess.run(
        suite.command("list", f"--{mode}", *extra),
        capture_output=True,
        text=True,
        env=suite.env(),
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    if completed.returncode != 0:
        raise ConformanceError(f"conformance list --{mode} failed: {completed.stderr}")
    scenarios: dict[str, frozenset[str]] = {}
    for line in completed.stdout.splitlines():
        match = LISTED_SCENARIO.match(line)
        if match:
            tags = match.group(2) or ""
            scenarios[match.group(1)] = frozenset(t.strip() for t in tags.split(",") if t)
    if not scenarios:
        raise ConformanceError(f"conformance list --{mode} listed nothing:\n{completed.stdout}")
    return scenarios


# ---------------------------------------------------------------------------- expected failures


def read_expected_failures(path: Path) -> dict[str, list[str]]:
    """The ``server:`` and ``client:`` lists of the baseline file the suite also reads.

    The file stays in the small YAML subset the suite documents (two keys, each a list of
    scenario names, ``#`` comments), read here without a YAML library.
    """
    lists: dict[str, list[str]] = {"server": [], "client": []}
    current: str | None = None
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        key = re.fullmatch(r"(server|client):\s*(\[\s*\])?", line)
        item = re.fullmatch(r"\s+-\s+['\"]?([^'\"\s]+)['\"]?", line)
        if key:
            current = key.group(1)
        elif item and current is not None:
            lists[current].append(item.group(1))
        else:
            raise ConformanceError(f"{path}:{number}: not a `server:`/`client:` list: {raw!r}")
    return lists


# ---------------------------------------------------------------------------- results


@dataclass
class Outcome:
    mode: str
    scenario: str
    expected_failure: bool = False
    counts: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    failing_checks: list[str] = field(default_factory=list)

    def count(self, status: str) -> int:
        return self.counts.get(status, 0)

    @property
    def failed(self) -> bool:
        """What the suite's baseline check calls failing: any FAILURE or WARNING."""
        return self.count("FAILURE") > 0 or self.count("WARNING") > 0 or bool(self.problems)

    @property
    def verdict(self) -> str:
        if self.expected_failure:
            return "expected failure" if self.failed else "STALE: listed, but passes"
        return "FAIL" if self.failed else "pass"

    @property
    def ok(self) -> bool:
        return self.failed == self.expected_failure


def read_checks(outcome: Outcome, paths: Iterable[Path]) -> None:
    found = False
    for path in paths:
        found = True
        for check in json.loads(path.read_text()):
            status = str(check.get("status"))
            outcome.counts[status] = outcome.counts.get(status, 0) + 1
            if status in ("FAILURE", "WARNING"):
                message = check.get("errorMessage") or check.get("description") or ""
                outcome.failing_checks.append(f"{status} {check.get('name')}: {message}")
    if not found:
        outcome.problems.append("no checks.json was written")


def scenario_of(directory: str, names: Iterable[str], mode: str) -> str | None:
    """The scenario a results directory belongs to (``[<mode>-]<scenario>-<timestamp>``)."""
    stem = TIMESTAMP_SUFFIX.sub("", directory)
    for name in sorted(names, key=len, reverse=True):
        if stem in (name, f"{mode}-{name}"):
            return name
    return None


# ---------------------------------------------------------------------------- the runs


@contextmanager
def everything_server(
    processes: Processes, suite: Suite, results: Path, parser: str, front_end: str
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The everything server on a free loopback port, for the block; yields its MCP URL."""
    log = results / "server.log"
    command = [
        sys.executable,
        str(SERVER),
        "--transport",
        "http",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--parser",
        parser,
        "--front-end",
        front_end,
    ]
    with log.open("wb") as output:
        process = processes.start(command, env=suite.env(), output=output)
    try:
        deadline = time.monotonic() + SERVER_START_DEADLINE
        while True:
            match = re.search(r"at (http://\S+/mcp)", log.read_text(errors="replace"))
            if match:
                break
            if process.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-2000:]
                raise ConformanceError(f"the everything server did not start:\n{tail}")
            time.sleep(0.05)
        yield match.group(1), process
    finally:
        processes.stop(process)


def run_server(
    processes: Processes,
    suite: Suite,
    args: argparse.Namespace,
    scenarios: list[str],
    expected: list[str],
    run_whole_suite: bool,
) -> list[Outcome]:
    results = args.results / "server"
    results.mkdir(parents=True)
    log = results / "harness.log"
    harness_codes: list[int] = []
    with everything_server(processes, suite, results, args.parser, args.front_end) as (url, proc):
        print(f"== server: {url} ({args.front_end} front end, {args.parser} parser)", flush=True)
        common = ["--url", url, "-o", str(results), "--expected-failures", str(args.expected)]
        if args.requirements is not None:
            # The requirement set fixes the scenarios and the wire of each: one run.
            code = processes.run(
                suite.command("server", "--requirements", args.requirements, *common),
                env=suite.env(),
                log=log,
                deadline=SERVER_SUITE_DEADLINE,
            )
            harness_codes.append(code)
        elif run_whole_suite:
            code = processes.run(
                suite.command("server", "--suite", "all", *common),
                env=suite.env(),
                log=log,
                deadline=SERVER_SUITE_DEADLINE,
            )
            harness_codes.append(code)
        else:
            for scenario in scenarios:
                code = processes.run(
                    suite.command("server", "--scenario", scenario, *common),
                    env=suite.env(),
                    log=log,
                    deadline=SERVER_SUITE_DEADLINE,
                )
                harness_codes.append(code)
        server_died = proc.poll() is not None
    outcomes = {
        name: Outcome("server", name, expected_failure=name in expected) for name in scenarios
    }
    found: dict[str, list[Path]] = {}
    for path in results.glob("*/checks.json"):
        name = scenario_of(path.parent.name, outcomes, "server")
        if name is not None:
            found.setdefault(name, []).append(path)
    for name, outcome in outcomes.items():
        read_checks(outcome, found.get(name, []))
        if server_died:
            outcome.problems.append("the everything server exited during the run")
    if any(harness_codes) and all(outcome.ok for outcome in outcomes.values()):
        # The suite saw something these checks.json files do not show: never pass over it.
        for outcome in outcomes.values():
            outcome.problems.append(f"the suite exited {max(harness_codes)} (see {log})")
    return list(outcomes.values())


def run_authorization(
    processes: Processes, suite: Suite, args: argparse.Namespace
) -> list[Outcome]:
    """The authorization-server scenarios against mcptrio's development authorization server
    (see ``conformance_authorization.py``); none of them is ever an expected failure."""
    from conformance_authorization import SCENARIOS, run_authorization_suite

    results = args.results / "authorization"
    results.mkdir(parents=True)
    try:
        code = run_authorization_suite(processes, suite.command, suite.env(), results)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        raise ConformanceError(f"the authorization-server run failed: {exc}") from None
    outcomes = {name: Outcome("authz", name) for name in SCENARIOS}
    found: dict[str, list[Path]] = {}
    for path in results.glob("*/checks.json"):
        name = scenario_of(path.parent.name, outcomes, "authorization-server")
        if name is not None:
            found.setdefault(name, []).append(path)
    for name, outcome in outcomes.items():
        read_checks(outcome, found.get(name, []))
        if code != 0 and outcome.ok:
            outcome.problems.append(f"the suite exited {code} (see {results / 'harness.log'})")
    return list(outcomes.values())


def has_authorization_command(suite: Suite) -> bool:
    """Whether the suite tests authorization servers (0.2.0-alpha.12 on; 0.1.16 does not)."""
    completed = subprocess.run(
        suite.command("--help"), capture_output=True, text=True, env=suite.env(), timeout=60
    )
    return re.search(r"^\s+authorization\b", completed.stdout, re.MULTILINE) is not None


def run_client(
    processes: Processes, suite: Suite, args: argparse.Namespace, scenario: str, expected: bool
) -> Outcome:
    results = args.results / "client" / scenario.replace("/", "__")
    results.mkdir(parents=True)
    log = results / "harness.log"
    command = suite.command(
        "client",
        "--command",
        f"{sys.executable} {CLIENT}",
        "--scenario",
        scenario,
        "--timeout",
        str(args.timeout_ms),
        "-o",
        str(results),
        "--expected-failures",
        str(args.expected),
        # As the suite's own --requirements run does, a scenario off the revision's timeline
        # (an extension's) is run at that revision anyway (--force), not skipped.
        *(() if args.requirements is None else ("--spec-version", args.requirements, "--force")),
    )
    code = processes.run(command, env=suite.env(), log=log, deadline=args.timeout_ms / 1000 + 60)
    outcome = Outcome("client", scenario, expected_failure=expected)
    read_checks(outcome, results.glob("**/checks.json"))
    harness_output = log.read_text(errors="replace")
    # The suite's own verdict also counts the client's exit status and a timeout, except in
    # the scenarios where a refusing client is the right one (it says PASSED then).
    if not expected and "OVERALL: PASSED" not in harness_output:
        exited = re.search(r"Client exited with code (-?\d+)", harness_output)
        if exited:
            outcome.problems.append(f"the client exited {exited.group(1)} (see {log})")
        elif "Client timed out" in harness_output:
            outcome.problems.append(f"the client timed out (see {log})")
        else:
            outcome.problems.append(f"the suite did not report OVERALL: PASSED (see {log})")
    if code != 0 and outcome.ok:
        outcome.problems.append(f"the suite exited {code} (see {log})")
    return outcome


# ---------------------------------------------------------------------------- report


def print_summary(suite: Suite, outcomes: list[Outcome], results: Path) -> None:
    print(f"\n== conformance {suite.version}: results in {results}")
    width = max([len(o.scenario) for o in outcomes] + [8])
    header = f"  {'mode':6}  {'scenario':{width}}  passed  failed  warnings  outcome"
    print(header)
    for o in outcomes:
        print(
            f"  {o.mode:6}  {o.scenario:{width}}  {o.count('SUCCESS'):6}  "
            f"{o.count('FAILURE'):6}  {o.count('WARNING'):8}  {o.verdict}"
        )
        if not o.ok or (o.failed and not o.expected_failure):
            for line in [*o.problems, *o.failing_checks]:
                print(f"  {'':6}  {'':{width}}  - {line}")
    for mode in ("server", "client", "authz"):
        chosen = [o for o in outcomes if o.mode == mode]
        if chosen:
            passed = sum(1 for o in chosen if not o.failed)
            print(
                f"  {mode}: {len(chosen)} scenarios, {passed} passing, "
                f"{sum(o.expected_failure and o.failed for o in chosen)} expected failures; "
                f"checks {sum(o.count('SUCCESS') for o in chosen)} passed, "
                f"{sum(o.count('FAILURE') for o in chosen)} failed, "
                f"{sum(o.count('WARNING') for o in chosen)} warnings"
            )
    summary = [
        {
            "mode": o.mode,
            "scenario": o.scenario,
            "counts": o.counts,
            "expected_failure": o.expected_failure,
            "verdict": o.verdict,
            "problems": o.problems,
            "failing_checks": o.failing_checks,
        }
        for o in outcomes
    ]
    (results / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")


# ---------------------------------------------------------------------------- main


def scenarios_of(suite: Suite, mode: str, args: argparse.Namespace) -> dict[str, frozenset[str]]:
    """The ``mode`` scenarios to choose from: all, or those of ``--requirements`` (whose list
    names both modes' scenarios together, so it is kept to this mode's)."""
    every = list_scenarios(suite, mode)
    if args.requirements is None:
        return every
    required = list_scenarios(suite, mode, args.requirements)
    return {name: tags for name, tags in required.items() if name in every}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="scripts/conformance",
        description=(
            "Run the official MCP conformance suite (server suite, then every client scenario "
            "one at a time) against examples/everything_server.py and "
            "examples/everything_client.py. Exits 1 on any failure or warning outside the "
            "expected-failures file, and on a listed scenario that passes."
        ),
    )
    parser.add_argument(
        "--suite-version",
        help="the @modelcontextprotocol/conformance version (default: the one pinned in "
        "interop/package.json); another one is installed into .conformance-next/<version>/",
    )
    parser.add_argument(
        "--scenario",
        action="append",
        default=[],
        metavar="NAME",
        help="run only this scenario (server or client; repeat for several)",
    )
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--server-only", action="store_true", help="skip the client scenarios")
    only.add_argument("--client-only", action="store_true", help="skip the server scenarios")
    parser.add_argument(
        "--handshake-era",
        action="store_true",
        help="only scenarios tagged with a revision negotiated by initialize "
        "(2024-11-05 .. 2025-11-25), run one at a time",
    )
    parser.add_argument(
        "--requirements",
        metavar="REVISION",
        help="score against the suite's requirement set of REVISION (e.g. 2026-07-28): the "
        "server suite runs with --requirements, each client scenario with --spec-version",
    )
    parser.add_argument(
        "--parser", choices=("auto", "h11", "httptools"), default="auto", help="HTTP parser"
    )
    parser.add_argument(
        "--front-end", choices=("builtin", "hypercorn"), default="builtin", help="HTTP front end"
    )
    parser.add_argument(
        "--expected-failures",
        dest="expected",
        type=Path,
        default=DEFAULT_EXPECTED,
        help="baseline of scenarios that cannot pass yet (default: %(default)s)",
    )
    parser.add_argument(
        "--results",
        type=Path,
        help="where checks.json files go (default: conformance-results/<version>/, emptied first)",
    )
    parser.add_argument(
        "--timeout-ms", type=int, default=30000, help="per client scenario (default: 30000)"
    )
    return parser.parse_args(argv)


def wants_authorization(args: argparse.Namespace) -> bool:
    """Whether this run includes the authorization-server scenarios: a full run does (not
    --client-only, --requirements or --handshake-era), and so does naming one of them."""
    from conformance_authorization import SCENARIOS

    if args.scenario:
        return bool(set(args.scenario) & set(SCENARIOS))
    return not (args.client_only or args.requirements or args.handshake_era)


def select(
    scenarios: dict[str, frozenset[str]], args: argparse.Namespace
) -> tuple[list[str], bool]:
    """The scenarios to run, and whether that is the whole list (one ``--suite all`` run)."""
    chosen = list(scenarios)
    if args.handshake_era:
        chosen = [name for name in chosen if scenarios[name] & HANDSHAKE_REVISIONS]
    if args.scenario:
        chosen = [name for name in chosen if name in args.scenario]
    return chosen, chosen == list(scenarios)


def main(argv: Sequence[str] | None = None) -> int:
    from conformance_authorization import SCENARIOS as AUTHZ

    args = parse_args(argv)
    args.expected = args.expected.resolve()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, raise_on_signal)
    processes = Processes()
    try:
        expected = read_expected_failures(args.expected)
        suite = install_suite(args.suite_version)
        args.results = (args.results or DEFAULT_RESULTS / suite.version).resolve()
        shutil.rmtree(args.results, ignore_errors=True)
        args.results.mkdir(parents=True)
        server_scenarios = {} if args.client_only else scenarios_of(suite, "server", args)
        client_scenarios = {} if args.server_only else scenarios_of(suite, "client", args)
        server_chosen, whole_suite = select(server_scenarios, args)
        client_chosen, _ = select(client_scenarios, args)
        unknown = set(args.scenario) - set(server_chosen) - set(client_chosen) - set(AUTHZ)
        if unknown:
            raise ConformanceError(
                f"no such scenario in {suite.version} (or filtered out): {sorted(unknown)}"
            )
        outcomes: list[Outcome] = []
        if server_chosen:
            outcomes += run_server(
                processes, suite, args, server_chosen, expected["server"], whole_suite
            )
        for scenario in client_chosen:
            print(f"== client: {scenario}", flush=True)
            outcomes.append(
                run_client(processes, suite, args, scenario, scenario in expected["client"])
            )
        if wants_authorization(args) and has_authorization_command(suite):
            print("== authorization server: the development server (mcptrio.auth)", flush=True)
            outcomes += run_authorization(processes, suite, args)
        print_summary(suite, outcomes, args.results)
    except ConformanceError as exc:
        print(f"conformance: {exc}", file=sys.stderr)
        return 2
    finally:
        processes.stop_all()
    if not outcomes:
        print("conformance: no scenario ran", file=sys.stderr)
        return 1
    if all(outcome.ok for outcome in outcomes):
        print("== conformance: every scenario as expected, no unexpected failure or warning")
        return 0
    print("== conformance: FAILED (see above)", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
