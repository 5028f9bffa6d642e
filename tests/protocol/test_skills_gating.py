"""The skills extension's methods in the one place revisions and extensions are ruled on: they
exist in every revision, need the server's declaration (and ``directoryRead`` for directory
reads), and, unlike the tasks extension's, no declaration on the request itself."""

from __future__ import annotations

import msgspec
import pytest

from mcptrio.protocol.errors import (
    CapabilityNotNegotiated,
    MethodNotFound,
    MissingRequiredClientCapability,
)
from mcptrio.protocol.fitting import fit_outgoing
from mcptrio.protocol.gating import check_outgoing, incoming_spec
from mcptrio.protocol.request_meta import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY
from mcptrio.protocol.revisions import SUPPORTED, revision_of
from mcptrio.protocol.skills_extension import EXTENSION_ID
from mcptrio.protocol.stateless import StatelessReader
from mcptrio.protocol.tasks_extension import EXTENSION_ID as TASKS_ID
from mcptrio.protocol.types import ClientCapabilities, ServerCapabilities

SKILLS = ServerCapabilities(extensions={EXTENSION_ID: {"directoryRead": True}})
NO_DIRECTORIES = ServerCapabilities(extensions={EXTENSION_ID: {}})
NOTHING = ServerCapabilities()
METHODS = ("skills/list", "skills/get", "resources/directory/read")


@pytest.mark.parametrize("revision", SUPPORTED)
@pytest.mark.parametrize("method", METHODS)
def test_a_declaring_server_handles_the_methods_in_every_revision(
    method: str, revision: str
) -> None:
    spec = incoming_spec(method, "request", role="server", revision=revision, capabilities=SKILLS)
    assert spec.extension == EXTENSION_ID
    check_outgoing(
        method,
        "request",
        role="client",
        revision=revision,
        capabilities=ClientCapabilities(),
        peer_capabilities=SKILLS,
    )


@pytest.mark.parametrize("method", METHODS)
def test_a_server_that_did_not_declare_the_extension_does_not_handle_them(method: str) -> None:
    with pytest.raises(MethodNotFound, match=EXTENSION_ID):
        incoming_spec(method, "request", role="server", revision="2025-11-25", capabilities=NOTHING)
    with pytest.raises(CapabilityNotNegotiated, match=EXTENSION_ID):
        check_outgoing(
            method,
            "request",
            role="client",
            revision="2025-11-25",
            capabilities=None,
            peer_capabilities=NOTHING,
        )


def test_directory_reads_need_the_directory_read_setting() -> None:
    for method in ("skills/list", "skills/get"):
        incoming_spec(
            method, "request", role="server", revision="2026-07-28", capabilities=NO_DIRECTORIES
        )
    with pytest.raises(MethodNotFound, match="directoryRead"):
        incoming_spec(
            "resources/directory/read",
            "request",
            role="server",
            revision="2026-07-28",
            capabilities=NO_DIRECTORIES,
        )


def _raw(method: str, client_capabilities: dict[str, object]) -> msgspec.Raw:
    meta = {PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: client_capabilities}
    params = {"_meta": meta, "uri": "skill://a/SKILL.md", "taskId": "t1"}
    return msgspec.Raw(msgspec.json.encode(params))


def test_a_stateless_request_need_not_declare_skills_but_must_declare_tasks() -> None:
    reader = StatelessReader(SUPPORTED)
    assert reader.read("skills/get", _raw("skills/get", {}), SKILLS) is not None
    tasks = ServerCapabilities(extensions={TASKS_ID: {}})
    with pytest.raises(MissingRequiredClientCapability, match=TASKS_ID):
        reader.read("tasks/get", _raw("tasks/get", {}), tasks)
    with pytest.raises(MethodNotFound):
        StatelessReader(SUPPORTED).read("skills/list", _raw("skills/list", {}), NOTHING)


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25"])
def test_handshake_capabilities_carry_the_skills_extension_and_no_other(version: str) -> None:
    both = ServerCapabilities(extensions={EXTENSION_ID: {"directoryRead": True}, TASKS_ID: {}})
    fitted = fit_outgoing(both, revision_of(version))
    assert fitted.extensions == {EXTENSION_ID: {"directoryRead": True}}
    only_tasks = ServerCapabilities(extensions={TASKS_ID: {}})
    assert fit_outgoing(only_tasks, revision_of(version)).extensions is None
    client = ClientCapabilities(extensions={EXTENSION_ID: {}, TASKS_ID: {}})
    assert fit_outgoing(client, revision_of(version)).extensions == {EXTENSION_ID: {}}
    assert fit_outgoing(both, revision_of("2026-07-28")).extensions == both.extensions
