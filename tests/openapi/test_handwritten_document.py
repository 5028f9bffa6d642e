"""A hand-written OpenAPI 3.1 document (``zoo.yaml``: a ``oneOf`` body, an ``allOf`` one,
arrays of objects, a file upload and a recursive schema), every operation of it called through
the official SDK's client against its API run by uvicorn; and its safe GETs as resources."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterator

import jsonschema
import pytest
import trio
from http_apis import ZOO_DOCUMENT, running_apis
from openapi_sessions import json_of, sdk_session, text_of

from mcptrio.openapi import OperationFilter, read_document, server_from_openapi


@pytest.fixture(scope="module")
def api() -> Iterator[str]:
    """The base URL of the running APIs (a conftest.py of this folder's own would stand in
    for the tests' shared ``conftest`` module in a whole run)."""
    with running_apis() as url:
        yield url


ZOO_TOOLS = [
    "listAnimals",
    "addAnimal",
    "getAnimal",
    "createEnclosure",
    "replaceKeepers",
    "uploadPhoto",
    "plantTree",
    "feedingTimes",
]

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


async def test_every_operation_is_a_tool_with_a_valid_json_schema(api: str) -> None:
    with trio.fail_after(30):
        async with sdk_session(server_from_openapi(ZOO_DOCUMENT, api + "/zoo")) as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert list(tools) == ZOO_TOOLS
            for tool in tools.values():
                jsonschema.Draft202012Validator.check_schema(tool.input_schema)
            assert tools["addAnimal"].description == (
                "Add an animal\n\nA cat or a dog, told apart by its kind."
            )
            union = tools["addAnimal"].input_schema["properties"]["body"]
            assert [branch["properties"]["kind"] for branch in union["oneOf"]] == [
                {"const": "cat"},
                {"const": "dog"},
            ]
            # The recursive schema is kept once, in $defs, and refers to itself there.
            tree = tools["plantTree"].input_schema
            assert tree["properties"]["children"]["items"] == {"$ref": "#/$defs/TreeNode"}
            assert tree["$defs"]["TreeNode"]["properties"]["children"]["items"] == {
                "$ref": "#/$defs/TreeNode"
            }


async def test_union_and_composed_bodies_reach_the_api(api: str) -> None:
    with trio.fail_after(30):
        async with sdk_session(server_from_openapi(ZOO_DOCUMENT, api + "/zoo")) as session:
            cat = json_of(
                await session.call_tool(
                    "addAnimal", {"body": {"kind": "cat", "name": "Tom", "indoor": True}}
                )
            )
            dog = json_of(
                await session.call_tool(
                    "addAnimal", {"body": {"kind": "dog", "name": "Rex", "breed": None}}
                )
            )
            fish = await session.call_tool("addAnimal", {"body": {"kind": "fish", "name": "x"}})
            assert fish.is_error and "Invalid arguments for tool 'addAnimal'" in text_of(fish)
            assert json_of(await session.call_tool("getAnimal", {"animalId": cat["id"]})) == cat
            listed = json_of(await session.call_tool("listAnimals", {}))
            assert cat in listed and dog in listed
            missing = await session.call_tool("getAnimal", {"animalId": 999})
            assert missing.is_error
            assert text_of(missing) == 'HTTP 404 Not Found: {"error":"no animal 999"}'
            enclosure = await session.call_tool(
                "createEnclosure",
                {
                    "body": {
                        "name": "meadow",
                        "area": 120.5,
                        "animals": [
                            {"kind": "dog", "name": "Rex"},
                            {"kind": "cat", "name": "Tom"},
                        ],
                    }
                },
            )
            assert json_of(enclosure) == {
                "name": "meadow",
                "area": 120.5,
                "animals": ["Rex", "Tom"],
            }
            no_area = await session.call_tool("createEnclosure", {"body": {"name": "x", "area": 0}})
            assert no_area.is_error


async def test_arrays_of_objects_and_a_recursive_body_reach_the_api(api: str) -> None:
    keepers = [
        {
            "name": "Ann",
            "shifts": [{"day": "mon", "start": "08:00"}, {"day": "tue", "start": "09:30"}],
        },
        {"name": "Bo", "shifts": [{"day": "sun", "start": "07:15"}]},
        {"name": "Cy"},
    ]
    tree = {"name": "oak", "children": [{"name": "a", "children": [{"name": "a1"}]}, {"name": "b"}]}
    with trio.fail_after(30):
        async with sdk_session(server_from_openapi(ZOO_DOCUMENT, api + "/zoo")) as session:
            replaced = await session.call_tool("replaceKeepers", {"body": keepers})
            assert json_of(replaced) == {"keepers": ["Ann", "Bo", "Cy"], "shifts": 3}
            bad_time = [{"name": "Di", "shifts": [{"day": "mon", "start": "8am"}]}]
            assert (await session.call_tool("replaceKeepers", {"body": bad_time})).is_error
            planted = await session.call_tool("plantTree", tree)
            assert json_of(planted) == {"nodes": 4, "depth": 3}


async def test_a_photo_is_uploaded_with_its_media_type_and_fields(api: str) -> None:
    with trio.fail_after(30):
        async with sdk_session(server_from_openapi(ZOO_DOCUMENT, api + "/zoo")) as session:
            uploaded = await session.call_tool(
                "uploadPhoto",
                {
                    "photo": base64.b64encode(PNG).decode(),
                    "caption": "Tom, asleep",
                    "tags": ["cat", "sleep"],
                },
            )
            assert json_of(uploaded) == {
                "filename": "photo",
                "content_type": "image/png",
                "size": len(PNG),
                "sha256": hashlib.sha256(PNG).hexdigest(),
                "caption": "Tom, asleep",
                "tags": ["cat", "sleep"],
            }


async def test_a_text_answer_and_an_enum_query(api: str) -> None:
    with trio.fail_after(30):
        async with sdk_session(server_from_openapi(ZOO_DOCUMENT, api + "/zoo")) as session:
            today = await session.call_tool("feedingTimes", {})
            assert text_of(today) == "Feeding today: 09:00, 15:00"
            tomorrow = await session.call_tool("feedingTimes", {"day": "tomorrow"})
            assert text_of(tomorrow) == "Feeding tomorrow: 09:00, 15:00"


async def test_safe_gets_become_resources_and_templates(api: str) -> None:
    base = api + "/zoo"
    server = server_from_openapi(ZOO_DOCUMENT, base, gets_as="resources")
    with trio.fail_after(30):
        async with sdk_session(server) as session:
            tools = [tool.name for tool in (await session.list_tools()).tools]
            assert "listAnimals" not in tools and "getAnimal" not in tools
            resources = {r.name: str(r.uri) for r in (await session.list_resources()).resources}
            assert resources == {
                "listAnimals": f"{base}/animals",
                "feedingTimes": f"{base}/feeding",
            }
            templates = (await session.list_resource_templates()).resource_templates
            assert [(t.name, t.uri_template) for t in templates] == [
                ("getAnimal", f"{base}/animals/{{animalId}}")
            ]
            added = json_of(
                await session.call_tool("addAnimal", {"body": {"kind": "cat", "name": "Kit"}})
            )
            member = await session.read_resource(f"{base}/animals/{added['id']}")
            assert json.loads(member.contents[0].text) == added  # type: ignore[union-attr]
            with pytest.raises(
                Exception, match=re.escape('HTTP 404 Not Found: {"error":"no animal 999"}')
            ):
                await session.read_resource(f"{base}/animals/999")
            listed = await session.read_resource(f"{base}/animals")
            assert listed.contents[0].mime_type == "application/json"


async def test_a_filter_keeps_operations_by_tag_method_path_and_id(api: str) -> None:
    document = read_document(ZOO_DOCUMENT)

    def names(select: OperationFilter) -> list[str]:
        server = server_from_openapi(document, api, select=select)
        return list(server.tools)

    assert names(OperationFilter(tags=["staff"])) == ["replaceKeepers", "plantTree", "feedingTimes"]
    assert names(OperationFilter(methods=["get"])) == ["listAnimals", "getAnimal", "feedingTimes"]
    assert names(OperationFilter(paths=["/animals*"])) == ["listAnimals", "addAnimal", "getAnimal"]
    assert names(OperationFilter(include=["*Animal*"], exclude=["add*"])) == [
        "listAnimals",
        "getAnimal",
    ]
