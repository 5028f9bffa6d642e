"""Fitting messages to a revision: what each revision lacks is left out or stood in for, every
fitted message validates against that revision's schema, a message with nothing to fit is handed
back as it is (no copy)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from mcptrio.protocol import codec
from mcptrio.protocol import types as t
from mcptrio.protocol.connection import Connection
from mcptrio.protocol.errors import CapabilityNotNegotiated, InvalidParams
from mcptrio.protocol.events import Reply, RequestReceived
from mcptrio.protocol.fitting import (
    TYPES,
    check_incoming,
    fit_outgoing,
    members_of,
)
from mcptrio.protocol.methods import METHODS
from mcptrio.protocol.request_meta import RequestMeta
from mcptrio.protocol.revisions import (
    HANDSHAKE_SUPPORTED,
    REVISIONS,
    SUPPORTED,
    Revision,
    revision_of,
)
from mcptrio.protocol.stateless import answer_result

from schema_validation import validate_definition, validate_message

ICON = t.Icon(src="https://example.com/i.png", mime_type="image/png", sizes=["48x48"])
DATED = t.Annotations(audience=["user"], priority=0.5, last_modified="2025-01-12T15:00:58Z")
META = {"com.example/k": 1}


def every_block() -> list[Any]:
    """One content block of each kind, with every optional member set."""
    return [
        t.TextContent(text="hi", annotations=DATED, meta=META),
        t.ImageContent(data="iVBORw0=", mime_type="image/png", annotations=DATED, meta=META),
        t.AudioContent(data="UklGRg==", mime_type="audio/wav", annotations=DATED, meta=META),
        t.ResourceLink(
            uri="file:///notes.md",
            name="notes.md",
            title="Notes",
            description="What we noted.",
            mime_type="text/markdown",
            size=12,
            annotations=DATED,
            icons=[ICON],
            meta=META,
        ),
        t.EmbeddedResource(
            resource=t.TextResourceContents(uri="file:///x", text="x", meta=META),
            annotations=DATED,
            meta=META,
        ),
    ]


def full_tool() -> t.Tool:
    return t.Tool(
        name="add",
        title="Adder",
        description="Add two integers.",
        icons=[ICON],
        meta=META,
        input_schema={"type": "object", "properties": {"a": {"type": "integer"}}},
        output_schema={"type": "object", "properties": {"result": {"type": "integer"}}},
        annotations=t.ToolAnnotations(read_only_hint=True),
        execution=t.ToolExecution(task_support="optional"),
    )


def full_implementation() -> t.Implementation:
    return t.Implementation(
        name="srv",
        title="Server",
        version="1",
        description="A server.",
        icons=[ICON],
        website_url="https://example.com",
    )


#: Results a server sends, with every optional member set, by their schema type.
SERVER_RESULTS: dict[str, Any] = {
    "InitializeResult": t.InitializeResult(
        protocol_version="2025-11-25",
        capabilities=t.ServerCapabilities(
            experimental={"x": {}},
            logging={},
            completions={},
            prompts=t.PromptsCapability(list_changed=True),
            resources=t.ResourcesCapability(subscribe=True, list_changed=True),
            tools=t.ToolsCapability(list_changed=True),
            tasks=t.ServerTasksCapability(list={}, cancel={}),
        ),
        server_info=full_implementation(),
        instructions="Be kind.",
    ),
    "ListToolsResult": t.ListToolsResult(tools=[full_tool()], next_cursor="2"),
    "CallToolResult": t.CallToolResult(
        content=every_block(), structured_content={"result": 3}, is_error=False, meta=META
    ),
    "ListPromptsResult": t.ListPromptsResult(
        prompts=[
            t.Prompt(
                name="review",
                title="Review",
                description="Review code.",
                icons=[ICON],
                meta=META,
                arguments=[t.PromptArgument(name="code", title="Code", required=True)],
            )
        ]
    ),
    "GetPromptResult": t.GetPromptResult(
        messages=[t.PromptMessage(role="user", content=block) for block in every_block()],
        description="Review code.",
    ),
    "ListResourcesResult": t.ListResourcesResult(
        resources=[
            t.Resource(
                uri="file:///a",
                name="a",
                title="A",
                description="The a.",
                mime_type="text/plain",
                size=1,
                annotations=DATED,
                icons=[ICON],
                meta=META,
            )
        ]
    ),
    "ListResourceTemplatesResult": t.ListResourceTemplatesResult(
        resource_templates=[
            t.ResourceTemplate(
                uri_template="file:///{path}",
                name="files",
                title="Files",
                mime_type="text/plain",
                annotations=DATED,
                icons=[ICON],
                meta=META,
            )
        ]
    ),
    "ReadResourceResult": t.ReadResourceResult(
        contents=[
            t.TextResourceContents(uri="file:///a", text="a", meta=META),
            t.BlobResourceContents(uri="file:///b", blob="AAE=", meta=META),
        ]
    ),
}

#: Results a client sends, by their schema type.
CLIENT_RESULTS: dict[str, Any] = {
    "CreateMessageResult": t.CreateMessageResult(
        role="assistant", content=[t.TextContent(text="4", meta=META)], model="m"
    ),
    "ElicitResult": t.ElicitResult(action="accept", content={"name": "Ada", "age": 36}),
    "ListRootsResult": t.ListRootsResult(roots=[t.Root(uri="file:///w", name="w", meta=META)]),
}

#: Requests and notifications, with who sends them.
MESSAGES: list[tuple[str, Any]] = [
    (
        "client",
        t.InitializeRequest(
            protocol_version="2025-11-25",
            capabilities=t.ClientCapabilities(
                roots=t.RootsCapability(list_changed=True),
                sampling=t.SamplingCapability(tools={}, context={}),
                elicitation=t.ElicitationCapability(form={}, url={}),
                tasks=t.ClientTasksCapability(list={}),
            ),
            client_info=full_implementation(),
        ),
    ),
    ("client", t.CallToolRequest(name="add", arguments={"a": 1}, task=t.TaskMetadata(ttl=5))),
    (
        "client",
        t.CompleteRequest(
            ref=t.PromptReference(name="review", title="Review"),
            argument=t.CompleteArgument(name="code", value="x"),
            context=t.CompleteContext(arguments={"language": "py"}),
        ),
    ),
    (
        "server",
        t.CreateMessageRequest(
            messages=[t.SamplingMessage(role="user", content=every_block()[2], meta=META)],
            max_tokens=10,
            task=t.TaskMetadata(),
        ),
    ),
    (
        "server",
        t.ElicitRequest(
            message="Name?",
            mode="form",
            requested_schema={"type": "object", "properties": {"n": {"type": "string"}}},
            task=t.TaskMetadata(ttl=1),
        ),
    ),
    ("server", t.ProgressNotification(progress_token=1, progress=0.5, total=1, message="half")),
]


def as_json(value: Any) -> Any:
    return msgspec.json.decode(codec.encode(value))


def lacking(value: Any, revision: Revision) -> list[str]:
    """Every member or type in ``value`` that ``revision`` does not define."""
    found: list[str] = []
    if isinstance(value, list):
        for item in value:
            found += lacking(item, revision)
    elif isinstance(value, msgspec.Struct):
        feature = TYPES.get(type(value))
        if feature is not None and not getattr(revision, feature):
            found.append(type(value).__name__)
        for name in value.__struct_fields__:
            member = getattr(value, name)
            feature = members_of(type(value)).get(name)
            if member is not None and feature is not None and not getattr(revision, feature):
                found.append(f"{type(value).__name__}.{name}")
            found += lacking(member, revision)
    return found


NEWEST_HANDSHAKE = revision_of(HANDSHAKE_SUPPORTED[0])


def test_the_rich_messages_use_every_feature_of_the_newest_handshake_revision() -> None:
    every = [*SERVER_RESULTS.values(), *CLIENT_RESULTS.values(), *(m for _, m in MESSAGES)]
    for older in REVISIONS:
        if older is not NEWEST_HANDSHAKE:
            assert lacking(every, older)
    assert lacking(every, NEWEST_HANDSHAKE) == []


# ------------------------------------------------------------------ nothing to fit


def test_a_message_that_lacks_nothing_is_handed_back_as_it_is() -> None:
    for message in [*SERVER_RESULTS.values(), *CLIENT_RESULTS.values(), *(m for _, m in MESSAGES)]:
        assert fit_outgoing(message, NEWEST_HANDSHAKE) is message
        assert check_incoming(message, NEWEST_HANDSHAKE) is message


def test_a_message_with_nothing_to_fit_is_handed_back_as_it_is() -> None:
    result = t.CallToolResult(content=[t.TextContent(text="3")])
    for revision in REVISIONS:
        assert fit_outgoing(result, revision) is result
    listing = t.ListToolsResult(tools=[t.Tool(name="a", input_schema={"type": "object"})])
    assert fit_outgoing(listing, revision_of("2024-11-05")) is listing


# ------------------------------------------------------------------ every revision, every message


def stateless_meta(revision: Revision) -> RequestMeta:
    return RequestMeta(revision=revision, client_capabilities=t.ClientCapabilities())


@pytest.mark.parametrize("version", SUPPORTED)
@pytest.mark.parametrize("name", [*SERVER_RESULTS, *CLIENT_RESULTS])
def test_a_fitted_result_lacks_nothing_and_validates(name: str, version: str) -> None:
    revision = revision_of(version)
    result = {**SERVER_RESULTS, **CLIENT_RESULTS}[name]
    if name == "ElicitResult" and not revision.elicitation:
        return  # the request does not exist there
    sender = "server" if name in SERVER_RESULTS else "client"
    if revision.era == "stateless":
        if name == "InitializeResult":
            return  # no handshake in this era
        if sender == "server":
            # The connection finishes what it answers: resultType, serverInfo, cache hints.
            fitted = answer_result(result, stateless_meta(revision), {"name": "s", "version": "1"})
            validate_definition(as_json(fitted), version, "ServerResult")
        else:
            # Answers to input requests travel inside the retried request, not as results.
            fitted = fit_outgoing(result, revision)
        assert lacking(fitted, revision) == []
        validate_definition(as_json(fitted), version, name)
        return
    fitted = fit_outgoing(result, revision)
    assert lacking(fitted, revision) == []
    validate_definition(as_json(fitted), version, name)
    validate_definition(as_json(fitted), version, sender.capitalize() + "Result")


@pytest.mark.parametrize("version", SUPPORTED)
@pytest.mark.parametrize(("sender", "message"), MESSAGES, ids=lambda m: getattr(m, "METHOD", m))
def test_fitted_params_lack_nothing_and_validate(sender: str, message: Any, version: str) -> None:
    revision = revision_of(version)
    if version not in METHODS[message.METHOD].revisions:
        return
    if revision.era == "stateless" and isinstance(message, t.Request):
        message = msgspec.structs.replace(message, meta=stateless_meta(revision).to_meta())
    fitted = fit_outgoing(message, revision)
    assert lacking(fitted, revision) == []
    envelope: dict[str, Any] = {"jsonrpc": "2.0", "method": message.METHOD}
    if isinstance(message, t.Request):
        envelope["id"] = 1
    envelope["params"] = as_json(fitted)
    validate_message(envelope, version, sender)


@pytest.mark.parametrize("version", SUPPORTED)
def test_what_is_received_is_read_as_the_revision_means_it(version: str) -> None:
    revision = revision_of(version)
    for message in [*SERVER_RESULTS.values(), *CLIENT_RESULTS.values(), *(m for _, m in MESSAGES)]:
        received = check_incoming(message, revision)
        # Members are left out; types the revision lacks are kept, as read.
        assert [m for m in lacking(received, revision) if "." in m] == []


# ------------------------------------------------------------------ stand-ins and rules


def test_audio_becomes_a_text_note_everywhere_a_revision_lacks_it() -> None:
    oldest = revision_of("2024-11-05")
    note = t.TextContent(
        text="[audio (audio/wav) left out: protocol revision 2024-11-05 has no audio]",
        annotations=t.Annotations(audience=["user"], priority=0.5),
    )
    audio = every_block()[2]
    tool_result = fit_outgoing(t.CallToolResult(content=[audio]), oldest)
    prompt = fit_outgoing(
        t.GetPromptResult(messages=[t.PromptMessage(role="user", content=audio)]), oldest
    )
    sampling = fit_outgoing(
        t.CreateMessageRequest(
            messages=[t.SamplingMessage(role="user", content=audio)], max_tokens=1
        ),
        oldest,
    )
    answer = fit_outgoing(t.CreateMessageResult(role="assistant", content=audio, model="m"), oldest)
    assert tool_result.content == [note]
    assert prompt.messages[0].content == note
    assert sampling.messages[0].content == note
    assert answer.content == note
    assert fit_outgoing(audio, revision_of("2025-03-26")).mime_type == "audio/wav"


def test_a_resource_link_becomes_a_text_block_naming_it() -> None:
    link = every_block()[3]
    for version in ("2025-03-26", "2024-11-05"):
        assert fit_outgoing(link, revision_of(version)) == t.TextContent(
            text="[resource link: Notes <file:///notes.md> (text/markdown)]\nWhat we noted.",
            annotations=t.Annotations(audience=["user"], priority=0.5),
        )
    bare = t.ResourceLink(uri="file:///a", name="a")
    assert fit_outgoing(bare, revision_of("2025-03-26")) == t.TextContent(
        text="[resource link: a <file:///a>]"
    )
    assert as_json(fit_outgoing(link, revision_of("2025-06-18")))["title"] == "Notes"


def test_a_tool_title_is_carried_in_its_annotations_in_2025_03_26() -> None:
    revision = revision_of("2025-03-26")
    fitted = fit_outgoing(full_tool(), revision)
    assert fitted.title is None
    assert fitted.annotations == t.ToolAnnotations(title="Adder", read_only_hint=True)
    bare = t.Tool(name="a", title="A", input_schema={"type": "object"})
    assert fit_outgoing(bare, revision).annotations == t.ToolAnnotations(title="A")
    own = t.Tool(name="a", title="A", input_schema={}, annotations=t.ToolAnnotations(title="Own"))
    assert fit_outgoing(own, revision).annotations == t.ToolAnnotations(title="Own")
    assert fit_outgoing(bare, revision_of("2024-11-05")).annotations is None


def test_sampling_content_is_one_block_before_sampling_with_tools() -> None:
    revision = revision_of("2025-06-18")
    one = t.CreateMessageResult(role="assistant", content=[t.TextContent(text="a")], model="m")
    assert fit_outgoing(one, revision).content == t.TextContent(text="a")
    two = msgspec.structs.replace(one, content=[t.TextContent(text="a"), t.TextContent(text="b")])
    with pytest.raises(CapabilityNotNegotiated, match="allows exactly one"):
        fit_outgoing(two, revision)
    tool_use = msgspec.structs.replace(one, content=t.ToolUseContent(id="1", name="add", input={}))
    with pytest.raises(CapabilityNotNegotiated, match="ToolUseContent does not exist"):
        fit_outgoing(tool_use, revision)


def test_what_would_change_the_question_is_refused_not_left_out() -> None:
    revision = revision_of("2025-06-18")
    url = t.ElicitRequest.url_mode("Sign in", "https://example.com/login", "e1")
    tools = t.CreateMessageRequest(
        messages=[t.SamplingMessage(role="user", content=t.TextContent(text="hi"))],
        max_tokens=1,
        tools=[t.Tool(name="a", input_schema={"type": "object"})],
    )
    for message, reason in ((url, "URL-mode elicitation"), (tools, "sampling with tools")):
        with pytest.raises(CapabilityNotNegotiated, match=reason):
            fit_outgoing(message, revision)
        with pytest.raises(InvalidParams, match=reason):
            check_incoming(message, revision)
    arrays = t.ElicitResult(action="accept", content={"tags": ["a", "b"]})
    with pytest.raises(CapabilityNotNegotiated, match="string arrays are new in 2025-11-25"):
        fit_outgoing(arrays, revision)
    form = t.ElicitRequest.form("Name?", {"type": "object", "properties": {}}, explicit_mode=True)
    assert fit_outgoing(form, revision).mode is None


def test_elicitation_capabilities_without_modes() -> None:
    revision = revision_of("2025-06-18")
    both = t.ClientCapabilities(elicitation=t.ElicitationCapability(form={}, url={}))
    url_only = t.ClientCapabilities(elicitation=t.ElicitationCapability(url={}))
    for fit in (fit_outgoing, check_incoming):
        assert fit(both, revision).elicitation == t.ElicitationCapability()
        assert fit(url_only, revision).elicitation is None
        assert fit(both, revision_of("2025-03-26")).elicitation is None


def test_members_received_that_the_revision_lacks_are_ignored() -> None:
    request = MESSAGES[2][1]
    assert check_incoming(request, revision_of("2024-11-05")).context is None
    assert check_incoming(request, revision_of("2025-06-18")) is request
    caps = t.ClientCapabilities(sampling=t.SamplingCapability(tools={}))
    assert check_incoming(caps, revision_of("2025-06-18")).sampling == t.SamplingCapability()


# ------------------------------------------------------------------ in the connection


INFO = t.Implementation(name="test", version="1")


def handshake(
    version: str, client_caps: t.ClientCapabilities | None = None
) -> tuple[Connection, Connection]:
    server = Connection(
        "server",
        info=full_implementation(),
        capabilities=SERVER_RESULTS["InitializeResult"].capabilities,
        supported=(version,),
    )
    client = Connection(
        "client",
        info=full_implementation(),
        capabilities=client_caps or MESSAGES[0][1].capabilities,
        supported=(version,),
    )
    _, data = client.send_request(client.initialize_request())
    (reply, _complete) = server.receive(data)
    assert isinstance(reply, Reply)
    client.receive(reply.data)
    return server, client


@pytest.mark.parametrize("version", HANDSHAKE_SUPPORTED)
def test_the_handshake_is_fitted_both_ways(version: str) -> None:
    server_caps = SERVER_RESULTS["InitializeResult"].capabilities
    client_caps = MESSAGES[0][1].capabilities
    server = Connection("server", info=full_implementation(), capabilities=server_caps)
    client = Connection(
        "client", info=full_implementation(), capabilities=client_caps, supported=(version,)
    )
    _, data = client.send_request(client.initialize_request())
    validate_message(msgspec.json.decode(data), version, "client")
    (reply, _complete) = server.receive(data)
    assert isinstance(reply, Reply)
    validate_message(msgspec.json.decode(reply.data), version, "InitializeResult")
    client.receive(reply.data)
    revision = revision_of(version)
    assert server.features is revision and client.features is revision
    assert lacking(server.peer_capabilities, revision) == []
    assert lacking(client.peer_capabilities, revision) == []
    assert lacking(client.peer_info, revision) == []
    # What each side declared itself stays in the newest shape.
    assert server.capabilities is server_caps and client.capabilities is client_caps


def test_a_result_the_revision_cannot_carry_is_answered_internal_error() -> None:
    server, client = handshake("2025-06-18")
    request = t.CreateMessageRequest(
        messages=[t.SamplingMessage(role="user", content=t.TextContent(text="hi"))], max_tokens=1
    )
    _, data = server.send_request(request)
    (received,) = client.receive(data)
    assert isinstance(received, RequestReceived)
    answer = t.CreateMessageResult(
        role="assistant", content=t.ToolUseContent(id="1", name="a", input={}), model="m"
    )
    error = msgspec.json.decode(client.respond(received.id, answer))["error"]
    assert error["code"] == -32603
    assert "ToolUseContent does not exist in protocol revision 2025-06-18" in error["message"]


def test_a_request_the_revision_cannot_mean_is_answered_invalid_params() -> None:
    _server, client = handshake("2025-06-18")
    frame = codec.encode_request(
        7,
        "elicitation/create",
        t.ElicitRequest.url_mode("Sign in", "https://example.com/login", "e1"),
    )
    (reply,) = client.receive(frame)
    assert isinstance(reply, Reply)
    error = msgspec.json.decode(reply.data)["error"]
    assert error["code"] == -32602 and "URL-mode elicitation" in error["message"]


def test_progress_loses_its_message_before_2025_03_26() -> None:
    server, _client = handshake("2024-11-05")
    data = server.send_notification(MESSAGES[-1][1])
    params = msgspec.json.decode(data)["params"]
    assert "message" not in params
    validate_message(msgspec.json.decode(data), "2024-11-05", "server")


def test_a_list_of_blocks_that_never_change_is_kept_and_one_that_does_is_still_fitted() -> None:
    # The walk skips a list whose items are all of types the step found unchanged: the text
    # blocks seen first must not make it skip a later list that also holds a block to fit.
    revision = revision_of("2025-06-18")
    plain = t.CallToolResult(content=[t.TextContent(text="3"), t.TextContent(text="4")])
    assert fit_outgoing(plain, revision) is plain
    link = every_block()[3]
    mixed = t.CallToolResult(content=[t.TextContent(text="3"), t.TextContent(text="4"), link])
    fitted = fit_outgoing(mixed, revision)
    assert fitted.content[:2] == mixed.content[:2]
    assert fitted.content[0] is mixed.content[0]
    assert fitted.content[2].icons is None
    assert link.icons == [ICON]
    assert fit_outgoing(plain, revision) is plain
