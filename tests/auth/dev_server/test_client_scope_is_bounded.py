"""The development authorization server grants a client no more than it may have: open dynamic
registration makes no machine clients (``client_credentials``) unless the server allows it,
and a client-credentials token carries only scopes of the client's registered ``scope``."""

from __future__ import annotations

import httpx2
import pytest
import trio
from served_dev_server import dev_server

from mcptrio.auth.dev_server import DevAuthorizationServer

IO_LIMIT = 20.0
RESOURCE = "http://127.0.0.1:2/mcp"
MACHINE_GRANTS = ("authorization_code", "refresh_token", "client_credentials")
SCOPES = ("mcp", "admin", "offline_access")
#: A server whose owner opened machine clients to anyone's registration.
MACHINE_CLIENTS_OPEN = {"scopes": SCOPES, "dynamic_registration_grant_types": MACHINE_GRANTS}


async def client_credentials(
    client: httpx2.AsyncClient, client_id: str, secret: str, scope: str | None
) -> httpx2.Response:
    form = {"grant_type": "client_credentials", "resource": RESOURCE}
    if scope is not None:
        form["scope"] = scope
    return await client.post("/token", data=form, auth=(client_id, secret))


async def test_an_anonymous_client_cannot_register_for_client_credentials() -> None:
    with trio.fail_after(IO_LIMIT):
        async with dev_server(scopes=SCOPES) as (_, client):
            answer = await client.post(
                "/register",
                json={"grant_types": ["client_credentials"], "scope": "mcp admin"},
            )
            assert answer.status_code == 400, answer.text
            assert answer.json()["error"] == "invalid_client_metadata"
            assert "client_credentials" in answer.json()["error_description"]


async def test_a_registered_machine_client_gets_only_its_registered_scope() -> None:
    with trio.fail_after(IO_LIMIT):
        async with dev_server(**MACHINE_CLIENTS_OPEN) as (auth, client):
            registered = await client.post(
                "/register",
                json={"grant_types": ["client_credentials"], "redirect_uris": [], "scope": "mcp"},
            )
            assert registered.status_code == 201, registered.text
            client_id = registered.json()["client_id"]
            secret = registered.json()["client_secret"]
            wider = await client_credentials(client, client_id, secret, "mcp admin")
            assert (wider.status_code, wider.json()["error"]) == (400, "invalid_scope")
            assert "admin" in wider.json()["error_description"]
            default = await client_credentials(client, client_id, secret, None)
            assert default.status_code == 200, default.text
            claims = auth.read_token(default.json()["access_token"])
            assert claims is not None and claims["scope"] == "mcp"


async def test_a_machine_client_registered_without_scope_gets_none() -> None:
    with trio.fail_after(IO_LIMIT):
        async with dev_server(**MACHINE_CLIENTS_OPEN) as (auth, client):
            registered = await client.post(
                "/register", json={"grant_types": ["client_credentials"], "redirect_uris": []}
            )
            assert registered.status_code == 201, registered.text
            client_id = registered.json()["client_id"]
            secret = registered.json()["client_secret"]
            asked = await client_credentials(client, client_id, secret, "admin")
            assert (asked.status_code, asked.json()["error"]) == (400, "invalid_scope")
            unasked = await client_credentials(client, client_id, secret, None)
            claims = auth.read_token(unasked.json()["access_token"])
            assert claims is not None and "scope" not in claims


async def test_a_pre_registered_client_is_bounded_by_the_scope_it_was_given() -> None:
    with trio.fail_after(IO_LIMIT):
        async with dev_server(scopes=SCOPES) as (auth, client):
            auth.register_client(
                client_id="reporter",
                secret="s3cret",
                grant_types=["client_credentials"],
                scope="mcp",
            )
            wider = await client_credentials(client, "reporter", "s3cret", "admin")
            assert (wider.status_code, wider.json()["error"]) == (400, "invalid_scope")
            narrow = await client_credentials(client, "reporter", "s3cret", "mcp")
            assert narrow.status_code == 200, narrow.text


def test_a_grant_the_server_does_not_know_cannot_be_opened_to_registration() -> None:
    with pytest.raises(ValueError, match="dynamic_registration_grant_types"):
        DevAuthorizationServer(dynamic_registration_grant_types=("password",))
