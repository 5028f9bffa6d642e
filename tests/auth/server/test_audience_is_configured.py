"""The audience a token must name is the resource the operator configured, never the request's.

Issue 38, item 5: a BearerAuth that made its resource URI from the ``Host`` header accepted a
token the same issuer minted for another server on the same machine (or for any name the
allowed hosts admit), when the request named that server in ``Host``.
"""

from __future__ import annotations

import httpx2
import pytest
import trio

from mcptrio.auth.server import BearerAuth, JwtVerifier

from oauth_servers import ACCEPT, INITIALIZE, IO_LIMIT, open_protected


def test_bearer_auth_without_a_resource_fails_at_construction() -> None:
    verifier = JwtVerifier("https://auth.example.com", "https://auth.example.com/jwks")
    with pytest.raises(TypeError, match="'resource'"):
        BearerAuth(verifier, authorization_servers=["https://auth.example.com"])  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="resource="):
        BearerAuth(
            verifier,
            authorization_servers=["https://auth.example.com"],
            resource=None,  # type: ignore[arg-type]
        )


async def test_a_token_for_another_server_is_refused_whatever_the_host_header() -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_protected() as protected, httpx2.AsyncClient() as client:
            port = protected.base.rsplit(":", 1)[1]
            # Another server on this machine, and a name the default allowed hosts admit.
            for elsewhere in ("127.0.0.1:1", f"localhost:{port}"):
                token = protected.token(resource=f"http://{elsewhere}/mcp")
                answer = await client.post(
                    protected.url,
                    json=INITIALIZE,
                    headers={**ACCEPT, "authorization": f"Bearer {token}", "host": elsewhere},
                )
                assert answer.status_code == 401, elsewhere
                assert 'error="invalid_token"' in answer.headers["www-authenticate"]
            assert protected.calls == []
            # The token for this server is still accepted, whatever name the client used.
            answer = await client.post(
                protected.url,
                json=INITIALIZE,
                headers={
                    **ACCEPT,
                    "authorization": f"Bearer {protected.token()}",
                    "host": f"localhost:{port}",
                },
            )
            assert answer.status_code == 200, answer.text


async def test_the_metadata_and_challenge_name_the_configured_resource_whatever_the_host() -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_protected() as protected, httpx2.AsyncClient() as client:
            port = protected.base.rsplit(":", 1)[1]
            named = {"host": f"localhost:{port}"}
            answer = await client.get(
                protected.base + "/.well-known/oauth-protected-resource/mcp", headers=named
            )
            assert answer.status_code == 200
            assert answer.json()["resource"] == protected.url
            answer = await client.post(protected.url, json=INITIALIZE, headers={**ACCEPT, **named})
            assert answer.status_code == 401
            expected = protected.base + "/.well-known/oauth-protected-resource/mcp"
            assert f'resource_metadata="{expected}"' in answer.headers["www-authenticate"]
