"""Reading documents into tools: OpenAPI 3.0's schema dialect, references (recursive ones
too), argument names, tool names, and the errors a user sees. No I/O beyond files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest

from mcptrio.openapi import OpenApiError, parse_document, read_document, server_from_openapi
from mcptrio.openapi.names import sanitise
from mcptrio.openapi.operations import read_operations


def petstore_30() -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {"title": "Pets", "version": "3"},
        "servers": [{"url": "https://pets.example/v1"}],
        "paths": {
            "/pets/{id}": {
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}
                ],
                "get": {
                    "parameters": [
                        {"name": "id", "in": "query", "schema": {"type": "string"}},
                        {"name": "Authorization", "in": "header", "schema": {"type": "string"}},
                        {"$ref": "#/components/parameters/Verbose"},
                    ],
                    "responses": {"200": {"description": "ok"}},
                },
                "put": {
                    "operationId": "put pet (v2)!",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}
                        },
                    },
                    "responses": {"200": {"description": "ok"}},
                },
            },
            "/pets/{id}/photo": {
                "post": {
                    "operationId": "put pet (v2)?",
                    "parameters": [
                        {
                            "name": "id",
                            "in": "path",
                            "required": True,
                            "schema": {"type": "integer"},
                        }
                    ],
                    "requestBody": {"content": {"image/png": {}}},
                    "responses": {"200": {"description": "ok"}},
                }
            },
        },
        "components": {
            "parameters": {
                "Verbose": {
                    "name": "verbose",
                    "in": "query",
                    "schema": {"type": "boolean"},
                    "x-internal": 1,
                }
            },
            "schemas": {
                "Pet": {
                    "type": "object",
                    "required": ["name"],
                    "properties": {
                        "name": {"type": "string", "example": "Rex"},
                        "weight": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
                        "age": {"type": "integer", "maximum": 30, "exclusiveMaximum": False},
                        "nickname": {"type": "string", "nullable": True, "enum": ["a", "b"]},
                        "owner": {"$ref": "#/components/schemas/Owner"},
                        "photo": {"type": "string", "format": "binary"},
                        "kind": {
                            "allOf": [{"$ref": "#/components/schemas/Kind"}],
                            "nullable": True,
                        },
                    },
                    "discriminator": {"propertyName": "name"},
                },
                "Owner": {
                    "type": "object",
                    "properties": {
                        "pets": {"type": "array", "items": {"$ref": "#/components/schemas/Pet"}}
                    },
                },
                "Kind": {"type": "string", "enum": ["cat", "dog"]},
            },
        },
    }


def test_openapi_30_schemas_become_json_schema() -> None:
    operations = read_operations(parse_document(_json(petstore_30()), "pets.json"))
    put = next(op for op in operations if op.method == "PUT")
    schema = put.input_schema
    jsonschema.Draft202012Validator.check_schema(schema)
    pet = schema["properties"]
    assert pet["weight"] == {"type": "number", "exclusiveMinimum": 0}
    assert pet["age"] == {"type": "integer", "maximum": 30}
    assert pet["name"] == {"type": "string", "examples": ["Rex"]}
    assert pet["nickname"] == {"type": ["string", "null"], "enum": ["a", "b", None]}
    assert pet["kind"] == {
        "anyOf": [{"allOf": [{"type": "string", "enum": ["cat", "dog"]}]}, {"type": "null"}]
    }
    assert pet["photo"]["contentEncoding"] == "base64"
    # Pet -> Owner -> Pet: the second Pet is a reference into $defs, kept once.
    assert pet["owner"]["properties"]["pets"]["items"] == {"$ref": "#/$defs/Pet"}
    assert schema["$defs"]["Pet"]["properties"]["owner"]["properties"]["pets"]["items"] == {
        "$ref": "#/$defs/Pet"
    }
    assert "discriminator" not in schema["$defs"]["Pet"]
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"id": 1, "name": "Rex", "owner": {"pets": [{"name": "Tom"}]}})
    assert not validator.is_valid({"id": 1, "name": "Rex", "weight": 0})


def test_parameters_are_merged_renamed_on_clashes_and_authorization_is_left_out() -> None:
    document = parse_document(_json(petstore_30()), "pets.json")
    get = next(op for op in read_operations(document) if op.method == "GET")
    assert [(p.name, p.place, p.argument) for p in get.parameters] == [
        ("id", "path", "id"),
        ("id", "query", "query_id"),
        ("verbose", "query", "verbose"),
    ]
    assert get.input_schema["required"] == ["id"]
    assert get.input_schema["properties"]["verbose"] == {"type": "boolean"}


def test_tool_names_are_sanitised_unique_or_made_from_the_route() -> None:
    server = server_from_openapi(petstore_30())
    assert list(server.tools) == ["get_pets_id", "put_pet_v2", "put_pet_v2_2"]
    assert sanitise("a b/c{d}") == "a_b_c_d"
    assert len(sanitise("x" * 300)) == 128
    photo = server.tools["put_pet_v2_2"].definition
    # A raw body is one base64 argument.
    assert photo.input_schema["properties"]["body"]["contentEncoding"] == "base64"
    assert server.info.name == "Pets" and server.info.version == "3"


def _json(value: Any) -> str:
    import json

    return json.dumps(value)


def test_documents_that_cannot_be_served_say_why_in_one_line(tmp_path: Path) -> None:
    swagger = tmp_path / "swagger.json"
    swagger.write_text('{"swagger": "2.0"}')
    with pytest.raises(
        OpenApiError, match=r"swagger.json: has no 'openapi' version field \(a Swagger 2.0"
    ):
        read_document(swagger)
    with pytest.raises(OpenApiError, match=r"OpenAPI 4\.0 is not supported"):
        parse_document('{"openapi": "4.0"}', "x.json")
    with pytest.raises(OpenApiError, match=r"no\.yaml: No such file"):
        read_document(tmp_path / "no.yaml")
    with pytest.raises(OpenApiError, match="neither JSON nor YAML"):
        parse_document("a: [", "broken.yaml")
    relative = {"openapi": "3.1.0", "servers": [{"url": "/v1"}], "paths": {}}
    with pytest.raises(OpenApiError, match="names no absolute server URL: give the base URL"):
        server_from_openapi(relative)
    dangling = {
        "openapi": "3.1.0",
        "paths": {"/a": {"post": {"requestBody": {"$ref": "#/components/requestBodies/Gone"}}}},
    }
    with pytest.raises(
        OpenApiError, match="cannot resolve \\$ref '#/components/requestBodies/Gone'"
    ):
        server_from_openapi(dangling, "http://127.0.0.1:1")
    with pytest.raises(OpenApiError, match="fetch a document from a URL first"):
        server_from_openapi("http://127.0.0.1:1/openapi.json")


def test_a_yaml_file_may_refer_to_schemas_in_a_file_beside_it(tmp_path: Path) -> None:
    (tmp_path / "schemas.yaml").write_text(
        "Thing:\n  type: object\n  properties:\n    n: {type: integer}\n"
    )
    (tmp_path / "api.yaml").write_text(
        "openapi: 3.1.0\n"
        "info: {title: Things, version: '1'}\n"
        "paths:\n"
        "  /things:\n"
        "    post:\n"
        "      operationId: addThing\n"
        "      requestBody:\n"
        "        content:\n"
        "          application/json:\n"
        "            schema: {$ref: 'schemas.yaml#/Thing'}\n"
    )
    server = server_from_openapi(tmp_path / "api.yaml", "http://127.0.0.1:1")
    assert server.tools["addThing"].definition.input_schema["properties"] == {
        "n": {"type": "integer"}
    }
