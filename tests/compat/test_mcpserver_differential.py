"""Servers written for the official SDK give the SDK's client the same answers run under the SDK
and under ``mcptrio.compat.mcpserver``, in both eras.

Each server in ``servers/`` imports either ``mcp.server.mcpserver`` or
``mcptrio.compat.mcpserver`` (the one line that differs) and is run as a stdio subprocess; the
SDK's own client (``mcp.client.Client``) runs the same requests against both and the transcripts
(every list, result and error) must be equal. ``mode="legacy"`` is the handshake era
(2025-11-25); ``mode="auto"`` probes ``server/discover`` first and lands in the stateless era
(2026-07-28) with both servers.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio

pytest.importorskip("mcp")
pytest.importorskip("pydantic")

from sdk_transcripts import (
    SCENARIOS,
    Client,
    Recorder,
    Transcript,
    answering_clients,
    answering_elicitations,
    elicit_scenario,
    resolve_scenario,
    server_parameters,
    transcript,
)

ERAS = {"legacy": "2025-11-25", "auto": "2026-07-28"}


def sdk_error_quirks(entries: Transcript, mode: str) -> Transcript:
    """The SDK's answers with its two departures from JSON-RPC put right, the ones
    ``docs/how-to/migrate-from-the-official-sdk.md`` lists: in the handshake era a handler's
    ``ValueError`` (an unknown or failing prompt) is answered with code 0, where mcptrio says
    -32603 with the same message; in the stateless era the SDK hides that message behind
    "Internal server error", and mcptrio does not (its text is compared in the handshake era)."""
    fixed: Transcript = []
    for label, value in entries:
        if isinstance(value, dict) and value.get("error") == 0:
            value = {**value, "error": -32603}
        if mode == "auto" and value == {"error": -32603, "message": "Internal server error"}:
            value = {"error": -32603}
        fixed.append((label, value))
    return fixed


def without_hidden_messages(sdk: Transcript, ours: Transcript) -> Transcript:
    """``ours`` without the messages of the errors whose message the SDK hid."""
    return [
        (label, {"error": value["error"]} if sdk_value == {"error": -32603} else value)
        for (label, value), (_, sdk_value) in zip(ours, sdk, strict=True)
    ]


@pytest.mark.parametrize("mode", list(ERAS))
@pytest.mark.parametrize("server", list(SCENARIOS))
async def test_server_answers_the_sdk_client_as_the_sdk_does(server: str, mode: str) -> None:
    with trio.fail_after(60):
        sdk = sdk_error_quirks(await transcript(server, "sdk", mode), mode)
        ours = await transcript(server, "mcptrio", mode)
    assert ours[0] == ("protocol_version", ERAS[mode])
    ours = without_hidden_messages(sdk, ours)
    for (label, expected), (_, got) in zip(sdk, ours, strict=True):
        assert got == expected, label


async def elicitations(under: str, mode: str) -> tuple[Transcript, list[Any]]:
    on_elicit, asked = answering_elicitations()
    parameters = server_parameters("elicit_server.py", under)
    async with Client(parameters, mode=mode, elicitation_callback=on_elicit) as client:
        record = Recorder(client)
        await elicit_scenario(record)
    return record.transcript, asked


async def test_elicitation_asks_and_answers_as_the_sdk_does_in_the_handshake_era() -> None:
    with trio.fail_after(60):
        sdk = await elicitations("sdk", "legacy")
        ours = await elicitations("mcptrio", "legacy")
    assert ours == sdk
    transcript_, asked = ours
    assert [entry[1]["content"][0]["text"] for entry in transcript_] == [
        "booked 2026-12-24 for 4",
        "decline",
        "accept",
    ]
    assert [question["mode"] for question in asked] == ["form", "form", "url"]


async def test_elicitation_works_in_the_stateless_era_where_the_sdk_refuses_it() -> None:
    with trio.fail_after(60):
        sdk, _ = await elicitations("sdk", "auto")
        ours, asked = await elicitations("mcptrio", "auto")
        handshake, handshake_asked = await elicitations("mcptrio", "legacy")
    assert all(value["error"] == -32600 for _, value in sdk)
    texts = [value["content"] for _, value in ours]
    assert texts == [value["content"] for _, value in handshake]
    # The same questions (2026-07-28 input requests carry no elicitationId).
    assert asked[:2] == handshake_asked[:2]
    assert [question["mode"] for question in asked] == ["form", "form", "url"]


@pytest.mark.parametrize("mode", list(ERAS))
async def test_resolvers_ask_through_the_client_as_the_sdk_does(mode: str) -> None:
    """``Resolve`` with ``Elicit``, ``Sample`` and ``ListRoots``: in the handshake era as
    requests in the middle of the call, in the stateless era as input-required rounds; the same
    questions reach the client's callbacks and the same results come back."""
    answers = []
    with trio.fail_after(60):
        for under in ("sdk", "mcptrio"):
            callbacks, asked = answering_clients()
            parameters = server_parameters("resolve_server.py", under)
            async with Client(parameters, mode=mode, **callbacks) as client:
                record = Recorder(client)
                await resolve_scenario(record)
            answers.append((record.transcript, asked))
    (sdk, sdk_asked), (ours, ours_asked) = answers
    assert ours == sdk
    assert ours_asked == sdk_asked
    assert [value["content"][0]["text"] for _, value in ours] == [
        "3 seats at Opera, ok=True",
        "not confirmed (cancel)",
        "Error executing tool reserve: Resolver for parameter 'seats' could not resolve:"
        " elicitation was decline",
        "Opera: a fine place",
        "file:///tmp/a",
    ]
