"""The MCP Inspector CLI (a real, independent client) drives the everything server over stdio.

The Inspector comes from ``interop/`` (``npm install --prefix interop``, which ``.ci/run`` does).
Without it the tests skip, unless ``MCPTRIO_REQUIRE_INTEROP=1`` (set by ``.ci/run``) makes its
absence a failure.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from client.real_servers import require_interop

ROOT = Path(__file__).resolve().parents[2]
INSPECTOR = ROOT / "interop" / "node_modules" / ".bin" / "mcp-inspector"
SERVER = [sys.executable, str(ROOT / "examples" / "everything_server.py")]

require_interop(INSPECTOR)


def inspect(*args: str) -> Any:
    completed = subprocess.run(
        [str(INSPECTOR), "--cli", *SERVER, *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert completed.returncode == 0, completed.stderr + completed.stdout
    return json.loads(completed.stdout)


def test_inspector_lists_the_tools() -> None:
    names = [tool["name"] for tool in inspect("--method", "tools/list")["tools"]]
    assert {"test_simple_text", "test_tool_with_progress", "describe"} <= set(names)


def test_inspector_calls_tools_with_arguments() -> None:
    result = inspect("--method", "tools/call", "--tool-name", "test_simple_text")
    assert result["content"] == [
        {"type": "text", "text": "This is a simple text response for testing."}
    ]
    result = inspect(
        "--method", "tools/call", "--tool-name", "add_note", "--tool-arg", "name=x", "text=hello"
    )
    assert result["content"][0]["text"] == "Saved note 'x'"


def test_inspector_lists_and_reads_resources() -> None:
    uris = [r["uri"] for r in inspect("--method", "resources/list")["resources"]]
    assert {"test://static-text", "test://static-binary", "test://watched-resource"} <= set(uris)
    templates = inspect("--method", "resources/templates/list")["resourceTemplates"]
    assert "test://template/{id}/data" in [t["uriTemplate"] for t in templates]
    read = inspect("--method", "resources/read", "--uri", "test://static-text")
    assert read["contents"][0]["text"] == "This is the content of the static text resource."
    read = inspect("--method", "resources/read", "--uri", "test://template/123/data")
    assert "123" in read["contents"][0]["text"]


def test_inspector_lists_and_gets_prompts() -> None:
    names = [p["name"] for p in inspect("--method", "prompts/list")["prompts"]]
    assert {"test_simple_prompt", "test_prompt_with_arguments"} <= set(names)
    prompt = inspect(
        "--method",
        "prompts/get",
        "--prompt-name",
        "test_prompt_with_arguments",
        "--prompt-args",
        "arg1=first",
        "arg2=second",
    )
    text = prompt["messages"][0]["content"]["text"]
    assert "first" in text and "second" in text


def test_inspector_sets_the_log_level() -> None:
    assert inspect("--method", "logging/setLevel", "--log-level", "debug") == {}
