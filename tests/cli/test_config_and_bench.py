"""``mcptrio config``, ``mcptrio bench``, help, and the console script's declaration."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest
from cli_runner import EVERYTHING, ROOT, mcptrio

from mcptrio.cli import server_commands


async def test_config_prints_an_mcp_servers_entry_that_starts_the_server() -> None:
    shown = await mcptrio("config", EVERYTHING)
    assert shown.code == 0, shown.stderr
    entry = shown.json()["mcpServers"]["mcptrio-everything"]
    assert entry == {
        "command": sys.executable,
        "args": ["-m", "mcptrio", "run", str(EVERYTHING)],
    }
    # The entry, run as the MCP client would run it, serves the server.
    called = await mcptrio("call", "--", entry["command"], *entry["args"], "test_simple_text")
    assert called.code == 0, called.stderr


async def test_config_of_a_local_module_says_where_it_is(tmp_path: Path) -> None:
    (tmp_path / "weather.py").write_text("import mcptrio\nserver = mcptrio.Server('w')\n")
    shown = await mcptrio("config", "weather:server", "--name", "forecast", cwd=tmp_path)
    assert shown.code == 0, shown.stderr
    assert shown.json() == {
        "mcpServers": {
            "forecast": {
                "command": sys.executable,
                "args": ["-m", "mcptrio", "run", "weather:server"],
                "env": {"PYTHONPATH": str(tmp_path)},
            }
        }
    }


async def test_bench_forwards_its_arguments_to_the_benchmarks() -> None:
    helped = await mcptrio("bench", "--help")
    assert helped.code == 0, helped.stderr
    assert helped.stdout.startswith("usage: python -m benchmarks")
    wrong = await mcptrio("bench", "--no-such-flag")
    assert wrong.code == 2


def test_bench_without_a_checkout_fails_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from mcptrio.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(server_commands, "PACKAGE_ROOT", tmp_path)
    assert main(["bench", "--quick"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert error.startswith("mcptrio: error: mcptrio bench needs a checkout")


@pytest.mark.parametrize("command", ["run", "list", "call", "read", "prompt", "config"])
async def test_every_command_has_help(command: str) -> None:
    helped = await mcptrio(command, "--help")
    assert helped.code == 0
    assert helped.stdout.startswith(f"usage: mcptrio {command}")


async def test_no_command_prints_the_help_and_exits_2() -> None:
    ran = await mcptrio()
    assert ran.code == 2
    assert "Exit codes:" in ran.stderr


async def test_version() -> None:
    import mcptrio as library

    ran = await mcptrio("--version")
    assert (ran.code, ran.stdout) == (0, f"mcptrio {library.__version__}\n")


def test_the_console_script_is_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["scripts"] == {"mcptrio": "mcptrio.cli:main"}
    from mcptrio.cli import main

    assert callable(main)
