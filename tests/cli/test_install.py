"""``mcptrio install CLIENT TARGET``: each client's real configuration file, in a temporary
home (``HOME``, ``APPDATA``, ``XDG_CONFIG_HOME`` and ``CLAUDE_CONFIG_DIR`` point into it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_runner import mcptrio

from mcptrio.cli import main
from mcptrio.cli.client_configs import CLIENTS, client_config

SERVER = "import mcptrio\nserver = mcptrio.Server('notes')\n"

#: Where each client's file is under the home, and the member that holds its servers.
FILES = {
    "claude-desktop": (".config/Claude/claude_desktop_config.json", "mcpServers"),
    "claude-code": (".claude.json", "mcpServers"),
    "cursor": (".cursor/mcp.json", "mcpServers"),
    "vscode": (".config/Code/User/mcp.json", "servers"),
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("APPDATA", str(home / "AppData" / "Roaming"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    # Loading a TARGET puts its folder first on sys.path.
    monkeypatch.setattr(sys, "path", list(sys.path))
    return home


@pytest.fixture
def target(tmp_path: Path) -> Path:
    path = tmp_path / "notes.py"
    path.write_text(SERVER)
    return path


def the_entry(client: str, target: Path, **env: str) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "command": sys.executable,
        "args": ["-m", "mcptrio", "run", str(target)],
    }
    if env:
        entry["env"] = env
    return {"type": "stdio", **entry} if client in ("claude-code", "vscode") else entry


def config_file(home: Path, client: str) -> tuple[Path, str]:
    relative, key = FILES[client]
    return home / relative, key


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.bak-*"))


def install(*args: str | Path) -> int:
    return main(["install", *map(str, args)])


@pytest.mark.parametrize("client", CLIENTS)
def test_install_creates_the_clients_file_from_nothing(
    client: str, home: Path, target: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, key = config_file(home, client)
    assert install(client, target) == 0
    assert json.loads(path.read_text()) == {key: {"notes": the_entry(client, target)}}
    assert backups(path) == []
    said = capsys.readouterr().out
    assert said.startswith(f"Installed 'notes' in {path}; restart ")


@pytest.mark.parametrize("client", CLIENTS)
def test_install_keeps_every_other_key_and_backs_the_file_up_first(
    client: str, home: Path, target: Path
) -> None:
    path, key = config_file(home, client)
    path.parent.mkdir(parents=True, exist_ok=True)
    before = {
        "theme": "dark",
        key: {"weather": {"command": "weather-server", "args": ["--metric"]}},
        "projects": {"/x": {"allowedTools": ["a"]}},
    }
    original = json.dumps(before)
    path.write_text(original)
    assert install(client, target, "--env", "NOTES_DIR=/tmp/notes", "--env", "A=b=c") == 0
    after = json.loads(path.read_text())
    assert after == {
        **before,
        key: {
            "weather": before[key]["weather"],  # type: ignore[index]
            "notes": the_entry(client, target, NOTES_DIR="/tmp/notes", A="b=c"),
        },
    }
    assert list(after) == ["theme", key, "projects"]
    (backup,) = backups(path)
    assert backup.read_text() == original


@pytest.mark.parametrize("client", CLIENTS)
def test_install_refuses_a_file_that_is_not_json_and_leaves_it_as_it_is(
    client: str, home: Path, target: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = config_file(home, client)
    path.parent.mkdir(parents=True, exist_ok=True)
    broken = '{\n  // my servers\n  "servers": {},\n}\n'
    path.write_text(broken)
    assert install(client, target) == 2
    assert capsys.readouterr().err == (
        f"mcptrio: error: {path} is not valid JSON (line 2, column 3: Expecting property name"
        " enclosed in double quotes); mcptrio install does not overwrite it: fix it, or add the"
        " entry by hand (mcptrio config prints it)\n"
    )
    assert path.read_text() == broken
    assert backups(path) == []


@pytest.mark.parametrize("client", CLIENTS)
def test_install_replaces_a_server_of_the_same_name_only_with_force(
    client: str, home: Path, target: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, key = config_file(home, client)
    path.parent.mkdir(parents=True, exist_ok=True)
    mine = {key: {"notes": {"command": "my-own-notes"}}}
    path.write_text(json.dumps(mine))
    assert install(client, target) == 2
    assert capsys.readouterr().err == (
        f"mcptrio: error: {path} already has a server named 'notes': add --force to replace"
        " it, or --name to install under another name\n"
    )
    assert json.loads(path.read_text()) == mine
    assert backups(path) == []
    assert install(client, target, "--force") == 0
    assert json.loads(path.read_text()) == {key: {"notes": the_entry(client, target)}}
    (backup,) = backups(path)
    assert json.loads(backup.read_text()) == mine


@pytest.mark.parametrize("client", CLIENTS)
def test_install_dry_run_prints_the_file_and_where_and_writes_nothing(
    client: str, home: Path, target: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, key = config_file(home, client)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"other": 1}')
    assert install(client, target, "--dry-run", "--name", "jotter") == 0
    shown = capsys.readouterr()
    assert json.loads(shown.out) == {"other": 1, key: {"jotter": the_entry(client, target)}}
    assert shown.err == f"mcptrio install: would write {path} (nothing written)\n"
    assert path.read_text() == '{"other": 1}'
    assert backups(path) == []
    # And with no file at all, nothing is created.
    path.unlink()
    assert install(client, target, "--dry-run") == 0
    assert not path.exists()


def test_installing_the_same_entry_again_changes_nothing(
    home: Path, target: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = config_file(home, "cursor")
    assert install("cursor", target) == 0
    written = path.read_text()
    capsys.readouterr()
    assert install("cursor", target) == 0
    assert capsys.readouterr().out == (
        f"Cursor already has 'notes' as written, in {path}: nothing changed\n"
    )
    assert path.read_text() == written
    assert backups(path) == []


def test_install_keeps_the_permissions_of_a_private_file(home: Path, target: Path) -> None:
    path, _ = config_file(home, "claude-code")
    path.write_text('{"userID": "secret"}')
    path.chmod(0o600)
    assert install("claude-code", target) == 0
    assert path.stat().st_mode & 0o777 == 0o600


def test_install_refuses_servers_that_are_not_an_object(
    home: Path, target: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = config_file(home, "cursor")
    path.parent.mkdir(parents=True)
    path.write_text('{"mcpServers": []}')
    assert install("cursor", target) == 2
    error = capsys.readouterr().err
    assert error == (
        f'mcptrio: error: {path}: "mcpServers" is not a JSON object; mcptrio install leaves'
        " the file as it is\n"
    )


def test_install_refuses_an_env_without_a_value(
    home: Path, target: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert install("cursor", target, "--env", "TOKEN") == 2
    assert capsys.readouterr().err == "mcptrio: error: --env 'TOKEN': give KEY=VALUE\n"
    assert not config_file(home, "cursor")[0].exists()


def test_install_of_a_target_that_does_not_load_writes_nothing(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert install("cursor", tmp_path / "missing.py") == 2
    assert capsys.readouterr().err == f"mcptrio: error: no such file: {tmp_path / 'missing.py'}\n"
    assert not (home / ".cursor").exists()


MACOS = "Library/Application Support"


@pytest.mark.parametrize(
    ("client", "platform", "expected"),
    [
        ("claude-desktop", "darwin", f"H/{MACOS}/Claude/claude_desktop_config.json"),
        ("claude-desktop", "win32", "A/Claude/claude_desktop_config.json"),
        ("claude-desktop", "linux", "X/Claude/claude_desktop_config.json"),
        ("claude-code", "darwin", "H/.claude.json"),
        ("claude-code", "win32", "H/.claude.json"),
        ("cursor", "win32", "H/.cursor/mcp.json"),
        ("cursor", "linux", "H/.cursor/mcp.json"),
        ("vscode", "darwin", f"H/{MACOS}/Code/User/mcp.json"),
        ("vscode", "win32", "A/Code/User/mcp.json"),
        ("vscode", "linux", "X/Code/User/mcp.json"),
    ],
)
def test_each_clients_file_is_where_the_client_reads_it(
    client: str, platform: str, expected: str
) -> None:
    environ = {"APPDATA": "/A", "XDG_CONFIG_HOME": "/X"}
    found = client_config(client, platform=platform, environ=environ, home=Path("/H"))
    assert found.path == Path("/" + expected)


def test_the_clients_files_move_with_their_variables_and_fall_back_without_them() -> None:
    home = Path("/H")
    assert client_config("vscode", platform="linux", environ={}, home=home).path == Path(
        "/H/.config/Code/User/mcp.json"
    )
    # A relative XDG_CONFIG_HOME is ignored, as the XDG spec says.
    relative = {"XDG_CONFIG_HOME": "conf"}
    assert client_config("claude-desktop", platform="linux", environ=relative, home=home).path == (
        Path("/H/.config/Claude/claude_desktop_config.json")
    )
    assert client_config("vscode", platform="win32", environ={}, home=home).path == Path(
        "/H/AppData/Roaming/Code/User/mcp.json"
    )
    moved = {"CLAUDE_CONFIG_DIR": "/C"}
    assert client_config("claude-code", environ=moved, home=home).path == Path("/C/.claude.json")


async def test_the_installed_entry_starts_the_server(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    target = tmp_path / "notes.py"
    target.write_text(SERVER + "@server.tool()\ndef ping() -> str:\n    return 'pong'\n")
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    installed = await mcptrio("install", "claude-desktop", target, env=env)
    assert installed.code == 0, installed.stderr
    written = json.loads((tmp_path / "xdg/Claude/claude_desktop_config.json").read_text())
    entry = written["mcpServers"]["notes"]
    called = await mcptrio("call", "--", entry["command"], *entry["args"], "ping")
    assert (called.code, called.stdout) == (0, "pong\n"), called.stderr


def test_install_help_names_the_clients(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["install", "--help"]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("usage: mcptrio install")
    assert "claude-desktop | claude-code | cursor | vscode" in shown
