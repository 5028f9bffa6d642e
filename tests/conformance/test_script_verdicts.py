"""scripts/conformance: its baseline file and how it judges the suite's results.

The script itself runs in CI (.ci/run); these tests hold the parts that decide pass or fail.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from programs import ROOT, import_program

script = import_program("conformance_script", ROOT / "scripts" / "conformance.py")


def test_expected_failures_list_no_scenario_and_no_auth_one_for_alpha_12() -> None:
    # Every OAuth (auth/*) client scenario passes since the authorization issue.
    path = ROOT / "conformance" / "expected-failures.yml"
    assert script.read_expected_failures(path) == {"server": [], "client": []}
    alpha = ROOT / "conformance" / "expected-failures-0.2.0-alpha.12.yml"
    lists = script.read_expected_failures(alpha)
    assert lists["client"] == []
    assert not any(name.startswith("auth/") for name in lists["server"])
    lines = path.read_text().splitlines()
    for number, line in enumerate(lines):
        if line.strip().startswith("- "):
            assert lines[number - 1].strip().startswith("#"), f"no reason above {line.strip()}"


def test_a_baseline_file_outside_the_documented_form_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "baseline.yml"
    path.write_text("server:\n  - ping\nclients: [initialize]\n")
    with pytest.raises(script.ConformanceError, match=r"baseline\.yml:3"):
        script.read_expected_failures(path)


def test_results_directories_map_to_their_scenario_in_both_suite_layouts() -> None:
    names = ["server-initialize", "ping", "tools-list"]
    stamp = "-2026-01-02T03-04-05-678Z"
    # 0.1.x names a server result directory <scenario>-<time>; 0.2 prefixes the mode.
    assert script.scenario_of(f"server-initialize{stamp}", names, "server") == "server-initialize"
    assert script.scenario_of(f"ping{stamp}", names, "server") == "ping"
    assert script.scenario_of(f"server-server-initialize{stamp}", names, "server") == (
        "server-initialize"
    )
    assert script.scenario_of(f"server-tools-list{stamp}", names, "server") == "tools-list"
    assert script.scenario_of(f"tools-call{stamp}", names, "server") is None


def outcome(expected: bool, **counts: int) -> Any:
    result = script.Outcome("client", "x", expected)
    result.counts.update(counts)
    return result


def test_a_warning_fails_a_scenario_like_a_failure() -> None:
    assert outcome(False, SUCCESS=3).ok
    assert not outcome(False, SUCCESS=3, WARNING=1).ok
    assert not outcome(False, SUCCESS=3, FAILURE=1).ok


def test_a_listed_scenario_must_fail_and_passing_makes_it_stale() -> None:
    assert outcome(True, FAILURE=2).ok
    stale = outcome(True, SUCCESS=2)
    assert not stale.ok
    assert stale.verdict.startswith("STALE")


def test_missing_results_fail_a_scenario(tmp_path: Path) -> None:
    result = script.Outcome("server", "ping")
    script.read_checks(result, tmp_path.glob("*/checks.json"))
    assert not result.ok
    assert result.problems == ["no checks.json was written"]


@pytest.mark.parametrize(
    ("argv", "wanted"),
    [
        ([], True),
        (["--client-only"], False),
        (["--requirements", "2026-07-28"], False),
        (["--handshake-era"], False),
        (["--scenario", "tools-list"], False),
        (["--scenario", "authorization-code-grant"], True),
    ],
)
def test_the_authorization_server_scenarios_run_in_a_full_run_or_by_name(
    argv: list[str], wanted: bool
) -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        assert script.wants_authorization(script.parse_args(argv)) is wanted
    finally:
        sys.path.remove(str(ROOT / "scripts"))
