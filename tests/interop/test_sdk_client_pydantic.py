"""The official Python SDK's ``Client`` (mcp 2.3.0) against an mcptrio server mixing pydantic
models, msgspec Structs, dataclasses and TypedDicts, in both eras, over stdio: the schemas carry
the ``Field`` constraints, the results validate against their ``outputSchema`` on the SDK's
side, and bad arguments come back as tool errors the model can read."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from jsonschema import Draft202012Validator
from programs import ROOT

PEERS = Path(__file__).parent / "peers"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


async def sdk_sees(mode: str) -> dict[str, Any]:
    command = [sys.executable, str(PEERS / "sdk_models_client.py"), mode]
    command += [sys.executable, str(PEERS / "mixed_models_server.py")]
    result = await trio.run_process(command, capture_stdout=True, capture_stderr=True, env=ENV)
    seen: dict[str, Any] = json.loads(result.stdout.decode().strip().splitlines()[-1])
    return seen


@pytest.mark.parametrize(("mode", "revision"), [("legacy", "2025-11-25"), ("2026-07-28", None)])
async def test_the_sdk_client_uses_a_server_mixing_pydantic_and_msgspec_types(
    mode: str, revision: str | None
) -> None:
    with trio.fail_after(60):
        seen = await sdk_sees(mode)
    assert seen["protocol_version"] == (revision or mode)
    admit = seen["tools"]["admit"]
    for schema in (admit["input"], admit["output"]):
        Draft202012Validator.check_schema(schema)
    assert admit["input"]["properties"]["rooms"] == {
        "default": 1,
        "description": "rooms to book",
        "exclusiveMinimum": 0,
        "maximum": 9,
        "title": "Rooms",
        "type": "integer",
    }
    assert admit["input"]["$defs"]["Pet"]["properties"]["age"] == {
        "maximum": 40,
        "minimum": 0,
        "title": "Age",
        "type": "integer",
    }
    assert {"Pet", "Point", "Label", "Extra", "Species"} <= set(admit["input"]["$defs"])
    assert admit["output"]["title"] == "Receipt"
    pet = {"name": "Rex", "age": 3, "species": "cat", "tags": []}
    receipt = {
        "pet": pet,
        "where": [1, 2],
        "label": "front",
        "note": "calm",
        "kind": "stray",
        "rooms": 2,
    }
    assert seen["admit"]["structured"] == receipt
    assert json.loads(seen["admit"]["text"]) == receipt
    assert seen["refused"] == {
        "is_error": True,
        "text": "Invalid arguments for tool 'admit': Input should be less than or equal to 40"
        " - at `$.pet.age`",
    }
    assert seen["rooms"] == {
        "is_error": True,
        "text": "Invalid arguments for tool 'admit': Input should be greater than 0 - at `$.rooms`",
    }
    assert seen["ages"] == {"result": [1]}
    assert seen["spot"] == {"x": 4, "y": 5}
