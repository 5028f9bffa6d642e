"""Wire types and method registry against the official MCP schemas of the four revisions."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from mcptrio.protocol import types as t
from mcptrio.protocol.base import EmptyResult, Notification, Request, Result
from mcptrio.protocol.methods import METHODS, MethodSpec, spec_for
from mcptrio.protocol.revisions import HANDSHAKE_SUPPORTED, STATELESS_SUPPORTED, SUPPORTED

from schema_validation import (
    REVISIONS,
    ValidationError,
    defined_methods,
    definition_names,
    method_type_name,
    union_members,
    validate_definition,
    validate_message,
)

#: The stateless era's messages are built and checked through the connection instead
#: (tests/protocol/test_stateless.py): its requests need _meta and its results resultType.
HANDSHAKE_REVISIONS = [rev for rev in REVISIONS if rev in HANDSHAKE_SUPPORTED]
STATELESS_REVISIONS = frozenset(STATELESS_SUPPORTED)


def at_least(revision: str, minimum: str) -> bool:
    return revision >= minimum


def since(revision: str, minimum: str, value: Any) -> Any:
    """``value`` when ``revision`` defines it, else None."""
    return value if at_least(revision, minimum) else None


# --- builders: one representative instance per type, using only what the revision defines ---


def icons(rev: str) -> Any:
    return since(
        rev,
        "2025-11-25",
        [t.Icon(src="https://x.test/i.png", mime_type="image/png", sizes=["48x48"], theme="dark")],
    )


def meta(rev: str) -> Any:
    return since(rev, "2025-06-18", {"example.com/k": 1})


def annots(rev: str) -> t.Annotations:
    return t.Annotations(
        audience=["user", "assistant"],
        priority=0.5,
        last_modified=since(rev, "2025-06-18", "2025-01-01T00:00:00Z"),
    )


def implementation(rev: str) -> t.Implementation:
    return t.Implementation(
        name="impl",
        version="1.0",
        title=since(rev, "2025-06-18", "Impl"),
        description=since(rev, "2025-11-25", "An implementation"),
        icons=icons(rev),
        website_url=since(rev, "2025-11-25", "https://x.test"),
    )


def content_blocks(rev: str) -> list[t.ContentBlock]:
    blocks: list[t.ContentBlock] = [
        t.TextContent(text="hello", annotations=annots(rev), meta=meta(rev)),
        t.ImageContent(data="aGk=", mime_type="image/png", meta=meta(rev)),
        t.EmbeddedResource(
            resource=t.TextResourceContents(
                uri="file:///a.txt", text="a", mime_type="text/plain", meta=meta(rev)
            )
        ),
        t.EmbeddedResource(resource=t.BlobResourceContents(uri="file:///b.bin", blob="AAE=")),
    ]
    if at_least(rev, "2025-03-26"):
        blocks.append(t.AudioContent(data="AAAA", mime_type="audio/wav", meta=meta(rev)))
    if at_least(rev, "2025-06-18"):
        blocks.append(
            t.ResourceLink(
                uri="file:///c.txt",
                name="c",
                title="C",
                description="d",
                mime_type="text/plain",
                size=3,
                icons=icons(rev),
                annotations=annots(rev),
                meta={"k": 1},
            )
        )
    return blocks


def tool(rev: str) -> t.Tool:
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    if at_least(rev, "2025-11-25"):
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return t.Tool(
        name="add",
        title=since(rev, "2025-06-18", "Add"),
        description="adds",
        input_schema=schema,
        output_schema=since(rev, "2025-06-18", {"type": "object"}),
        annotations=since(
            rev,
            "2025-03-26",
            t.ToolAnnotations(
                title="Add",
                read_only_hint=True,
                destructive_hint=False,
                idempotent_hint=True,
                open_world_hint=False,
            ),
        ),
        execution=since(rev, "2025-11-25", t.ToolExecution(task_support="optional")),
        icons=icons(rev),
        meta=meta(rev),
    )


def client_capabilities(rev: str) -> t.ClientCapabilities:
    new = at_least(rev, "2025-11-25")
    return t.ClientCapabilities(
        experimental={"x": {}},
        roots=t.RootsCapability(list_changed=True),
        sampling=t.SamplingCapability(
            context=since(rev, "2025-11-25", {}), tools=since(rev, "2025-11-25", {})
        ),
        elicitation=since(
            rev,
            "2025-06-18",
            t.ElicitationCapability(form={} if new else None, url={} if new else None),
        ),
        tasks=since(
            rev,
            "2025-11-25",
            t.ClientTasksCapability(
                list={},
                cancel={},
                requests=t.ClientTaskRequestsCapability(
                    sampling=t.TaskSamplingCapability(create_message={}),
                    elicitation=t.TaskElicitationCapability(create={}),
                ),
            ),
        ),
    )


def server_capabilities(rev: str) -> t.ServerCapabilities:
    return t.ServerCapabilities(
        experimental={"x": {"y": 1}},
        logging={},
        completions=since(rev, "2025-03-26", {}),
        prompts=t.PromptsCapability(list_changed=True),
        resources=t.ResourcesCapability(subscribe=True, list_changed=False),
        tools=t.ToolsCapability(list_changed=True),
        tasks=since(
            rev,
            "2025-11-25",
            t.ServerTasksCapability(
                list={},
                cancel={},
                requests=t.ServerTaskRequestsCapability(tools=t.TaskToolsCapability(call={})),
            ),
        ),
    )


def elicitation_schema(rev: str) -> dict[str, Any]:
    props: dict[str, t.PrimitiveSchemaDefinition] = {
        "name": t.StringSchema(title="Name", min_length=1, max_length=9, format="email"),
        "age": t.NumberSchema(type="integer", minimum=0, maximum=150),
        "ok": t.BooleanSchema(description="fine?"),
        "color": t.LegacyTitledEnumSchema(enum=["r", "g"], enum_names=["Red", "Green"]),
    }
    if at_least(rev, "2025-11-25"):
        opts = [t.EnumOption(const="a", title="A"), t.EnumOption(const="b", title="B")]
        props |= {
            "s1": t.UntitledSingleSelectEnumSchema(enum=["a", "b"], default="a"),
            "s2": t.TitledSingleSelectEnumSchema(one_of=opts, default="b"),
            "m1": t.UntitledMultiSelectEnumSchema(
                items=t.UntitledEnumItems(enum=["a", "b"]), min_items=1, default=["a"]
            ),
            "m2": t.TitledMultiSelectEnumSchema(items=t.TitledEnumItems(any_of=opts), max_items=2),
            "d": t.StringSchema(default="x"),
            "n": t.NumberSchema(type="number", default=1.5),
            "b": t.BooleanSchema(default=True),
        }
    return t.requested_schema(props, required=["name"])


def task(status: t.TaskStatus = "working") -> t.Task:
    return t.Task(
        task_id="t1",
        status=status,
        created_at="2025-01-01T00:00:00Z",
        last_updated_at="2025-01-01T00:00:01Z",
        ttl=60000,
        poll_interval=500,
        status_message="busy",
    )


def requests(rev: str) -> list[Request[Any]]:
    progress = {"progressToken": "p1"}
    new = at_least(rev, "2025-11-25")
    sampling_content: Any = t.TextContent(text="hi")
    if new:
        sampling_content = [
            t.TextContent(text="hi"),
            t.ToolResultContent(
                tool_use_id="u1",
                content=[t.TextContent(text="3")],
                structured_content={"v": 3},
                is_error=False,
            ),
        ]
    out: list[Request[Any]] = [
        t.InitializeRequest(
            protocol_version=rev,
            capabilities=client_capabilities(rev),
            client_info=implementation(rev),
        ),
        t.PingRequest(),
        t.ListResourcesRequest(cursor="c1"),
        t.ListResourceTemplatesRequest(),
        t.ReadResourceRequest(uri="file:///a.txt", meta=progress),
        t.SubscribeRequest(uri="file:///a.txt"),
        t.UnsubscribeRequest(uri="file:///a.txt"),
        t.ListPromptsRequest(),
        t.GetPromptRequest(name="p", arguments={"a": "1"}),
        t.ListToolsRequest(cursor="c"),
        t.CallToolRequest(
            name="add",
            arguments={"x": 1},
            meta=progress,
            task=since(rev, "2025-11-25", t.TaskMetadata(ttl=1000)),
        ),
        t.SetLevelRequest(level="warning"),
        t.CompleteRequest(
            ref=t.PromptReference(name="p", title=since(rev, "2025-06-18", "P")),
            argument=t.CompleteArgument(name="a", value="x"),
            context=since(rev, "2025-06-18", t.CompleteContext(arguments={"b": "y"})),
        ),
        t.CreateMessageRequest(
            messages=[
                t.SamplingMessage(
                    role="user", content=t.ImageContent(data="aGk=", mime_type="image/png")
                ),
                t.SamplingMessage(role="assistant", content=sampling_content, meta=meta(rev)),
            ],
            max_tokens=100,
            model_preferences=t.ModelPreferences(
                hints=[t.ModelHint(name="claude")],
                cost_priority=0.1,
                speed_priority=0.2,
                intelligence_priority=1,
            ),
            system_prompt="be nice",
            include_context="thisServer",
            temperature=0.7,
            stop_sequences=["\n"],
            metadata={"a": 1},
            tools=since(rev, "2025-11-25", [tool(rev)]),
            tool_choice=since(rev, "2025-11-25", t.ToolChoice(mode="auto")),
            task=since(rev, "2025-11-25", t.TaskMetadata()),
        ),
        t.ListRootsRequest(),
    ]
    if at_least(rev, "2025-06-18"):
        out.append(t.ElicitRequest.form("Who are you?", elicitation_schema(rev), explicit_mode=new))
    if new:
        out += [
            t.GetTaskRequest(task_id="t1"),
            t.GetTaskPayloadRequest(task_id="t1"),
            t.ListTasksRequest(cursor="c"),
            t.CancelTaskRequest(task_id="t1"),
        ]
    return out


def extra_requests(rev: str) -> list[Request[Any]]:
    """More variants of some requests (not needed for coverage)."""
    out: list[Request[Any]] = [
        t.CompleteRequest(
            ref=t.ResourceTemplateReference(uri="file:///{p}"),
            argument=t.CompleteArgument(name="p", value=""),
        ),
        t.InitializeRequest(
            protocol_version=rev,
            capabilities=t.ClientCapabilities(),
            client_info=t.Implementation(name="c", version="0"),
        ),
    ]
    if at_least(rev, "2025-11-25"):
        out += [
            t.ElicitRequest.url_mode(
                "Log in", "https://x.test/auth", "e1", task=t.TaskMetadata(ttl=5)
            ),
            t.ElicitRequest.form("plain", elicitation_schema(rev)),
        ]
    return out


def notifications(rev: str) -> list[Notification]:
    out: list[Notification] = [
        t.InitializedNotification(),
        t.CancelledNotification(request_id=7, reason="bored"),
        t.ProgressNotification(
            progress_token="p1", progress=1, total=10.5, message=since(rev, "2025-03-26", "one")
        ),
        t.LoggingMessageNotification(level="error", logger="db", data={"err": [1, None]}),
        t.ResourceListChangedNotification(),
        t.ResourceUpdatedNotification(uri="file:///a.txt"),
        t.PromptListChangedNotification(meta={"k": "v"}),
        t.ToolListChangedNotification(),
        t.RootsListChangedNotification(),
    ]
    if at_least(rev, "2025-11-25"):
        out += [
            t.TaskStatusNotification.from_task(task("input_required")),
            t.ElicitationCompleteNotification(elicitation_id="e1"),
        ]
    return out


def results(rev: str) -> dict[type[Request[Any]], Result]:
    """One result per request type of ``rev``."""
    sampling_content: Any = t.TextContent(text="4")
    if at_least(rev, "2025-11-25"):
        sampling_content = [
            t.TextContent(text="calling"),
            t.ToolUseContent(id="u1", name="add", input={"x": 1}, meta={"k": 1}),
        ]
    elicit_content: dict[str, t.ElicitValue] = {"name": "a@b.c", "age": 3, "ok": True}
    if at_least(rev, "2025-11-25"):
        elicit_content["m1"] = ["a", "b"]
    out: dict[type[Request[Any]], Result] = {
        t.InitializeRequest: t.InitializeResult(
            protocol_version=rev,
            capabilities=server_capabilities(rev),
            server_info=implementation(rev),
            instructions="use me",
            meta={"k": 1},
        ),
        t.PingRequest: EmptyResult(),
        t.ListResourcesRequest: t.ListResourcesResult(
            next_cursor="n",
            resources=[
                t.Resource(
                    uri="file:///a.txt",
                    name="a",
                    title=since(rev, "2025-06-18", "A"),
                    description="d",
                    mime_type="text/plain",
                    size=1,
                    annotations=annots(rev),
                    icons=icons(rev),
                    meta=meta(rev),
                )
            ],
        ),
        t.ListResourceTemplatesRequest: t.ListResourceTemplatesResult(
            resource_templates=[
                t.ResourceTemplate(
                    uri_template="file:///{p}",
                    name="f",
                    description="d",
                    title=since(rev, "2025-06-18", "F"),
                    mime_type="text/plain",
                    annotations=annots(rev),
                    icons=icons(rev),
                    meta=meta(rev),
                )
            ]
        ),
        t.ReadResourceRequest: t.ReadResourceResult(
            contents=[
                t.TextResourceContents(uri="file:///a.txt", text="a"),
                t.BlobResourceContents(uri="file:///a.bin", blob="AA==", mime_type="x/y"),
            ]
        ),
        t.SubscribeRequest: EmptyResult(),
        t.UnsubscribeRequest: EmptyResult(),
        t.ListPromptsRequest: t.ListPromptsResult(
            prompts=[
                t.Prompt(
                    name="p",
                    title=since(rev, "2025-06-18", "P"),
                    description="d",
                    icons=icons(rev),
                    meta=meta(rev),
                    arguments=[
                        t.PromptArgument(
                            name="a",
                            title=since(rev, "2025-06-18", "A"),
                            description="d",
                            required=True,
                        )
                    ],
                )
            ]
        ),
        t.GetPromptRequest: t.GetPromptResult(
            description="d",
            messages=[t.PromptMessage(role="user", content=block) for block in content_blocks(rev)],
        ),
        t.ListToolsRequest: t.ListToolsResult(tools=[tool(rev)], next_cursor="n"),
        t.CallToolRequest: t.CallToolResult(
            content=content_blocks(rev),
            is_error=False,
            structured_content=since(rev, "2025-06-18", {"sum": 3}),
        ),
        t.SetLevelRequest: EmptyResult(),
        t.CompleteRequest: t.CompleteResult(
            completion=t.Completion(values=["a", "b"], total=2, has_more=False)
        ),
        t.CreateMessageRequest: t.CreateMessageResult(
            role="assistant",
            content=sampling_content,
            model="m",
            stop_reason="toolUse" if at_least(rev, "2025-11-25") else "endTurn",
        ),
        t.ListRootsRequest: t.ListRootsResult(
            roots=[t.Root(uri="file:///home", name="home", meta=meta(rev))]
        ),
    }
    if at_least(rev, "2025-06-18"):
        out[t.ElicitRequest] = t.ElicitResult(action="accept", content=elicit_content)
    if at_least(rev, "2025-11-25"):
        tasks: dict[type[Request[Any]], Result] = {
            t.GetTaskRequest: t.GetTaskResult.from_task(task()),
            t.GetTaskPayloadRequest: t.GetTaskPayloadResult(
                meta={t.RELATED_TASK_META_KEY: {"taskId": "t1"}}
            ),
            t.ListTasksRequest: t.ListTasksResult(tasks=[task(), task("completed")]),
            t.CancelTaskRequest: t.CancelTaskResult.from_task(task("cancelled")),
        }
        out |= tasks
    return out


# --- helpers ---------------------------------------------------------------------------------


def as_json(obj: msgspec.Struct) -> Any:
    return msgspec.json.decode(msgspec.json.encode(obj))


def request_message(req: Request[Any], rid: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": req.METHOD, "params": as_json(req)}


def notification_message(note: Notification) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": note.METHOD, "params": as_json(note)}


def result_message(result: Result, rid: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": as_json(result)}


def sender_hints(spec: MethodSpec) -> list[str]:
    return ["client", "server"] if spec.sender == "both" else [spec.sender]


def roundtrip(obj: msgspec.Struct) -> None:
    decoded = msgspec.json.decode(msgspec.json.encode(obj), type=type(obj))
    assert decoded == obj
    assert as_json(decoded) == as_json(obj)


def add_unknown(obj: Any, wire: Any) -> Any:
    """Add an unknown member to the JSON of every struct in ``obj`` (not to open maps)."""
    if isinstance(obj, msgspec.Struct):
        out = dict(wire)
        for field in msgspec.structs.fields(obj):
            if field.encode_name in out:
                out[field.encode_name] = add_unknown(
                    getattr(obj, field.name), out[field.encode_name]
                )
        out["zzUnknownField"] = {"x": [1, 2]}
        return out
    if isinstance(obj, list):
        return [add_unknown(o, w) for o, w in zip(obj, wire, strict=True)]
    return wire


# --- schema validation -----------------------------------------------------------------------


@pytest.mark.parametrize("rev", HANDSHAKE_REVISIONS)
def test_every_request_validates(rev: str) -> None:
    built = requests(rev)
    assert {r.METHOD for r in built} == {
        m for m, s in METHODS.items() if s.kind == "request" and rev in s.revisions
    }
    for req in built + extra_requests(rev):
        spec = METHODS[req.METHOD]
        assert rev in spec.revisions and spec.kind == "request"
        for hint in sender_hints(spec):
            validate_message(request_message(req), rev, hint)
        roundtrip(req)


@pytest.mark.parametrize("rev", HANDSHAKE_REVISIONS)
def test_every_notification_validates(rev: str) -> None:
    built = notifications(rev)
    assert {n.METHOD for n in built} == {
        m for m, s in METHODS.items() if s.kind == "notification" and rev in s.revisions
    }
    for note in built:
        spec = METHODS[note.METHOD]
        for hint in sender_hints(spec):
            validate_message(notification_message(note), rev, hint)
        roundtrip(note)


@pytest.mark.parametrize("rev", HANDSHAKE_REVISIONS)
def test_every_result_validates(rev: str) -> None:
    built = results(rev)
    assert set(built) == {type(r) for r in requests(rev)}
    for req_type, result in built.items():
        assert isinstance(result, req_type.RESULT)
        spec = METHODS[req_type.METHOD]
        validate_message(result_message(result), rev, type(result).__name__)
        # The answer travels the other way: a client request gets a ServerResult.
        for hint in sender_hints(spec):
            validate_message(
                result_message(result), rev, "server" if hint == "client" else "client"
            )
        roundtrip(result)


def test_create_task_result_validates() -> None:
    result = t.CreateTaskResult(task=task(), meta={t.MODEL_IMMEDIATE_RESPONSE_META_KEY: "soon"})
    validate_message(result_message(result), "2025-11-25", "CreateTaskResult")
    roundtrip(result)


def test_error_responses_validate() -> None:
    error = {"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "nope"}}
    for rev in REVISIONS:
        validate_message(error, rev)
    data = t.URLElicitationRequiredErrorData(
        elicitations=[t.ElicitRequest.url_mode("Log in", "https://x.test", "e1")]
    )
    message = {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {"code": -32042, "message": "elicit first", "data": as_json(data)},
    }
    validate_message(message, "2025-11-25", "URLElicitationRequiredError")
    roundtrip(data)


@pytest.mark.parametrize("rev", REVISIONS)
def test_requests_without_params(rev: str) -> None:
    for method, spec in METHODS.items():
        if rev not in spec.revisions:
            continue
        base: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if spec.kind == "request":
            base["id"] = "abc"
        # In the stateless era every request carries its _meta in params.
        if spec.params_required or (rev in STATELESS_REVISIONS and spec.kind == "request"):
            with pytest.raises(ValidationError):
                validate_message(base, rev)
        else:
            validate_message(base, rev)


def test_validator_rejects_what_a_revision_lacks() -> None:
    audio = t.CallToolResult(content=[t.AudioContent(data="AA==", mime_type="audio/wav")])
    validate_message(result_message(audio), "2025-03-26", "CallToolResult")
    with pytest.raises(ValidationError):
        validate_message(result_message(audio), "2024-11-05", "CallToolResult")
    with pytest.raises(ValidationError):  # not defined before 2025-06-18
        validate_message(
            request_message(t.ElicitRequest.form("m", {"type": "object", "properties": {}})),
            "2025-03-26",
        )
    with pytest.raises(ValidationError):  # wrong direction
        validate_message(request_message(t.ListRootsRequest()), "2025-06-18", "client")
    with pytest.raises(ValidationError):  # a notification sent as a request
        validate_message(
            {"jsonrpc": "2.0", "id": 1, "method": "notifications/initialized"}, "2025-06-18"
        )
    with pytest.raises(ValidationError):
        validate_message(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}, "2025-11-25"
        )
    with pytest.raises(ValidationError):
        validate_message({"jsonrpc": "2.0", "id": 1}, "2025-11-25")
    with pytest.raises(ValueError, match="unknown MCP revision"):
        validate_message({"jsonrpc": "2.0", "id": 1, "method": "ping"}, "2099-01-01")


def test_validator_batches() -> None:
    batch = [request_message(t.PingRequest(), 1), notification_message(t.InitializedNotification())]
    validate_message(batch, "2025-03-26")
    for rev in ("2024-11-05", "2025-06-18", "2025-11-25"):
        with pytest.raises(ValidationError):
            validate_message(batch, rev)
    with pytest.raises(ValidationError):
        validate_message([], "2025-03-26")


def test_validate_definition_helper() -> None:
    validate_definition(as_json(tool("2025-11-25")), "2025-11-25", "Tool")
    with pytest.raises(ValueError, match="defines no type"):
        validate_definition({}, "2024-11-05", "Task")


# --- decoding ----------------------------------------------------------------------------------


@pytest.mark.parametrize("rev", REVISIONS)
def test_unknown_fields_are_ignored(rev: str) -> None:
    objects: list[msgspec.Struct] = [*requests(rev), *notifications(rev), *results(rev).values()]
    for obj in objects:
        wire = add_unknown(obj, as_json(obj))
        assert "zzUnknownField" in wire
        assert msgspec.convert(wire, type=type(obj)) == obj
        assert msgspec.json.decode(msgspec.json.encode(wire), type=type(obj)) == obj
    wire = {"name": "c", "version": "1", "brandNew": [1, 2]}
    assert msgspec.convert(wire, t.Implementation) == t.Implementation(name="c", version="1")
    raw = b'{"content":[{"type":"text","text":"x","future":1}],"isError":true,"later":{}}'
    assert msgspec.json.decode(raw, type=t.CallToolResult) == t.CallToolResult(
        content=[t.TextContent(text="x")], is_error=True
    )


def test_content_blocks_decode_by_type() -> None:
    wire = [
        {"type": "text", "text": "a"},
        {"type": "image", "data": "AA==", "mimeType": "image/png"},
        {"type": "audio", "data": "AA==", "mimeType": "audio/wav"},
        {"type": "resource_link", "uri": "file:///x", "name": "x"},
        {"type": "resource", "resource": {"uri": "file:///x", "blob": "AA=="}},
    ]
    blocks = msgspec.convert(wire, list[t.ContentBlock])
    assert [type(b) for b in blocks] == [
        t.TextContent,
        t.ImageContent,
        t.AudioContent,
        t.ResourceLink,
        t.EmbeddedResource,
    ]
    assert as_json_list(blocks) == wire
    assert isinstance(blocks[4], t.EmbeddedResource) and blocks[4].resource.is_blob
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert(
            [{"type": "tool_use", "id": "1", "name": "n", "input": {}}], list[t.ContentBlock]
        )
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert([{"type": "video", "data": ""}], list[t.ContentBlock])


def as_json_list(items: list[Any]) -> Any:
    return msgspec.json.decode(msgspec.json.encode(items))


def test_sampling_content_single_or_list() -> None:
    one = msgspec.convert(
        {"role": "user", "content": {"type": "text", "text": "hi"}}, t.SamplingMessage
    )
    assert one.content == t.TextContent(text="hi")
    many = msgspec.convert(
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "u", "name": "add", "input": {"x": 1}},
                {
                    "type": "tool_result",
                    "toolUseId": "u",
                    "content": [{"type": "text", "text": "2"}],
                },
            ],
        },
        t.SamplingMessage,
    )
    assert isinstance(many.content, list)
    assert [type(c) for c in many.content] == [t.ToolUseContent, t.ToolResultContent]


def test_completion_refs_decode_by_type() -> None:
    req = msgspec.convert(
        {
            "ref": {"type": "ref/resource", "uri": "file:///{x}"},
            "argument": {"name": "x", "value": ""},
        },
        t.CompleteRequest,
    )
    assert req.ref == t.ResourceReference(uri="file:///{x}")
    req = msgspec.convert(
        {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "x", "value": ""}},
        t.CompleteRequest,
    )
    assert isinstance(req.ref, t.PromptReference)


def test_resource_contents_need_text_or_blob() -> None:
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"uri": "file:///x"}, t.ResourceContents)
    with pytest.raises(ValueError):
        t.ResourceContents(uri="file:///x")
    text = msgspec.convert({"uri": "file:///x", "text": ""}, t.TextResourceContents)
    assert text.is_text and not text.is_blob


def test_elicit_request_modes() -> None:
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"message": "m"}, t.ElicitRequest)
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"message": "m", "mode": "url"}, t.ElicitRequest)
    # 2026-07-28 dropped elicitationId.
    msgspec.convert({"message": "m", "mode": "url", "url": "https://x"}, t.ElicitRequest)
    url = msgspec.convert(
        {"message": "m", "mode": "url", "url": "https://x", "elicitationId": "e"}, t.ElicitRequest
    )
    assert url.effective_mode == "url"
    form = t.ElicitRequest.form("m", {"type": "object", "properties": {}})
    assert form.effective_mode == "form" and "mode" not in as_json(form)


def test_elicitation_schema_structs_round_trip() -> None:
    schema = elicitation_schema("2025-11-25")
    assert schema["properties"]["age"] == {"type": "integer", "minimum": 0, "maximum": 150}
    assert schema["properties"]["m2"]["items"] == {
        "anyOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]
    }
    parsed = t.requested_schema_properties(schema)
    assert t.requested_schema(parsed, required=["name"]) == schema
    assert type(parsed["s1"]) is t.UntitledSingleSelectEnumSchema
    assert type(parsed["color"]) is t.LegacyTitledEnumSchema
    with pytest.raises(msgspec.ValidationError):
        t.parse_primitive_schema({"type": "object"})


def test_open_capabilities_keep_empty_objects() -> None:
    caps = msgspec.json.decode(
        b'{"logging":{},"tools":{},"experimental":{"x":{}}}', type=t.ServerCapabilities
    )
    assert caps.logging == {} and caps.completions is None
    assert caps.tools == t.ToolsCapability() and caps.prompts is None
    assert msgspec.json.encode(caps) == b'{"experimental":{"x":{}},"logging":{},"tools":{}}'
    client = t.ClientCapabilities(
        sampling=t.SamplingCapability(), elicitation=t.ElicitationCapability()
    )
    assert as_json(client) == {"sampling": {}, "elicitation": {}}
    roundtrip(client_capabilities("2025-11-25"))


def test_wire_names() -> None:
    wire = as_json(tool("2025-11-25"))
    assert {"inputSchema", "outputSchema", "_meta", "icons", "execution"} <= wire.keys()
    assert wire["inputSchema"]["$schema"].endswith("2020-12/schema")
    assert wire["annotations"]["readOnlyHint"] is True
    assert as_json(implementation("2025-11-25"))["websiteUrl"] == "https://x.test"
    assert as_json(t.CallToolRequest(name="x", meta={"progressToken": 3})) == {
        "_meta": {"progressToken": 3},
        "name": "x",
    }
    assert t.CallToolRequest(name="x", meta={"progressToken": 3}).progress_token() == 3
    assert (
        as_json(
            t.Task(task_id="a", status="working", created_at="c", last_updated_at="l", ttl=None)
        )["ttl"]
        is None
    )


def test_task_shaped_types_mirror_task() -> None:
    for cls in (t.GetTaskResult, t.CancelTaskResult, t.TaskStatusNotification):
        assert set(t.Task.__struct_fields__) <= set(cls.__struct_fields__)
        assert cls.from_task(task()).task == task()


# --- the method registry ---------------------------------------------------------------------


def test_registry_keys_match_params_types() -> None:
    assert set(SUPPORTED) == set(REVISIONS)
    for method, spec in METHODS.items():
        assert spec.method == method == spec.params.METHOD
        assert spec_for(method) is spec
        base = Request if spec.kind == "request" else Notification
        assert issubclass(spec.params, base)
        assert spec.revisions <= set(SUPPORTED) and spec.revisions
        assert (spec.capability is None) == (spec.gate_owner("client") is None)
        if spec.gated_revisions is not None:
            assert spec.capability is not None and spec.gated_revisions <= spec.revisions
    assert spec_for("no/such") is None


@pytest.mark.parametrize("rev", REVISIONS)
def test_registry_matches_schema(rev: str) -> None:
    defined = {m for m, s in METHODS.items() if rev in s.revisions}
    # The stateless era's schema keeps the input requests only as embedded types.
    embedded = t.INPUT_REQUEST_METHODS if rev in STATELESS_REVISIONS else frozenset()
    assert defined == defined_methods(rev) - embedded
    names = definition_names(rev)
    for method in defined:
        spec = METHODS[method]
        type_name = method_type_name(method, rev)
        assert type_name == spec.params.__name__
        if issubclass(spec.params, Request):
            result_name = spec.params.RESULT.__name__
            assert result_name in names
            for side in sender_hints(spec):
                union = "ClientRequest" if side == "client" else "ServerRequest"
                assert union_members(rev, union) >= {type_name}


def test_registry_senders_match_schema_unions() -> None:
    rev = "2025-11-25"
    for method, spec in METHODS.items():
        if rev not in spec.revisions:
            continue
        type_name = spec.params.__name__
        kind = "Request" if spec.kind == "request" else "Notification"
        senders = {
            side
            for side in ("client", "server")
            if type_name in union_members(rev, side.capitalize() + kind)
        }
        expected = {"client", "server"} if spec.sender == "both" else {spec.sender}
        assert senders == expected, method


def test_capability_paths_exist() -> None:
    structs = {"client": t.ClientCapabilities, "server": t.ServerCapabilities}
    for spec in METHODS.values():
        if spec.capability is None:
            continue
        owners = {spec.gate_owner("client"), spec.gate_owner("server")}
        for owner in owners:
            assert owner is not None
            node: Any = structs[owner]
            for part in spec.capability:
                info = msgspec.inspect.type_info(node)
                assert isinstance(info, msgspec.inspect.StructType), (spec.method, part)
                field = {f.encode_name: f for f in info.fields}[part]
                # An optional member is a union with None: follow its struct.
                ftype = field.type
                members = ftype.types if isinstance(ftype, msgspec.inspect.UnionType) else (ftype,)
                structs_of = [m for m in members if isinstance(m, msgspec.inspect.StructType)]
                node = structs_of[0].cls if structs_of else None
    gates = {
        m: (s.capability, s.gate_owner("client"), s.gate_owner("server"))
        for m, s in METHODS.items()
    }
    assert gates["tools/call"] == (("tools",), "server", "server")
    assert gates["tasks/list"] == (("tasks", "list"), "server", "client")
    assert gates["notifications/message"] == (("logging",), "server", "server")
    assert gates["notifications/roots/list_changed"] == (
        ("roots", "listChanged"),
        "client",
        "client",
    )
    assert METHODS["completion/complete"].gated_in("2025-03-26")
    assert not METHODS["completion/complete"].gated_in("2024-11-05")
    assert METHODS["elicitation/create"].revisions == {"2025-06-18", "2025-11-25"}
    for name in ("notifications/progress", "notifications/cancelled", "ping", "initialize"):
        assert METHODS[name].capability is None
