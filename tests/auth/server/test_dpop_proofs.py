"""A DPoP-bound token (``cnf.jkt``) is accepted only with a proof of its key (RFC 9449).

Issue 38, item 13: such a token was accepted as a plain bearer token, with no proof, so anyone
who got hold of it could use it. Now its proof is checked (``htm``, ``htu``, ``iat``, ``jti``
once, ``ath``, the key's thumbprint), it is refused as a bearer token, and a server may take
DPoP-bound tokens only.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from collections.abc import Callable
from typing import Any

import httpx2
import pytest
import trio
from joserfc import jwt
from joserfc.jwk import ECKey, OctKey

from mcptrio.auth.client import DpopKey
from mcptrio.auth.server import DpopPolicy, VerifierUnavailable
from mcptrio.stores.bundle import open_stores

from oauth_servers import ACCEPT, INITIALIZE, IO_LIMIT, Protected, open_protected


def ath(token: str) -> str:
    digest = hashlib.sha256(token.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def proof(
    key: ECKey,
    url: str,
    token: str,
    *,
    header: dict[str, Any] | None = None,
    claims: dict[str, Any] | None = None,
    signer: Any = None,
) -> str:
    """A proof as RFC 9449 makes it, with ``header`` and ``claims`` changed as told (a value of
    ``None`` leaves the member out)."""
    made_header = {"typ": "dpop+jwt", "alg": "ES256", "jwk": key.as_dict(private=False)}
    made_claims = {
        "jti": secrets.token_urlsafe(16),
        "htm": "POST",
        "htu": url,
        "iat": int(time.time()),
        "ath": ath(token),
    }
    made_header.update(header or {})
    made_claims.update(claims or {})
    return jwt.encode(
        {k: v for k, v in made_header.items() if v is not None},
        {k: v for k, v in made_claims.items() if v is not None},
        signer if signer is not None else key,
        algorithms=[made_header["alg"]],
    )


async def post(
    client: httpx2.AsyncClient,
    protected: Protected,
    token: str,
    proofs: list[str] | None,
    scheme: str = "DPoP",
) -> httpx2.Response:
    headers = [*ACCEPT.items(), ("authorization", f"{scheme} {token}")]
    headers += [("dpop", value) for value in proofs or ()]
    return await client.post(protected.url, json=INITIALIZE, headers=headers)


async def test_a_bound_token_presented_as_a_bearer_token_is_refused() -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_protected() as protected, httpx2.AsyncClient() as client:
            key = DpopKey()
            token = protected.token(dpop_jkt=key.thumbprint)
            answer = await post(client, protected, token, None, scheme="Bearer")
            assert answer.status_code == 401
            challenge = answer.headers["www-authenticate"]
            assert challenge.startswith("Bearer ") and 'error="invalid_token"' in challenge
            assert "DPoP" in challenge
            assert protected.calls == []


async def test_a_bound_token_with_a_proof_of_its_key_is_accepted_once_per_proof() -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_protected() as protected, httpx2.AsyncClient() as client:
            key = DpopKey()
            token = protected.token("carol", dpop_jkt=key.thumbprint)
            fresh = key.proof("POST", protected.url, access_token=token)
            answer = await post(client, protected, token, [fresh])
            assert answer.status_code == 200, answer.text
            replayed = await post(client, protected, token, [fresh])
            assert replayed.status_code == 401
            assert 'DPoP error="invalid_dpop_proof"' in replayed.headers["www-authenticate"]
            assert "already used" in replayed.headers["www-authenticate"]
            again = key.proof("POST", protected.url, access_token=token)
            assert (await post(client, protected, token, [again])).status_code == 200


def _bad_proofs(url: str, token: str, key: ECKey) -> dict[str, Callable[[], list[str]]]:
    stranger = ECKey.generate_key("P-256", private=True)
    now = int(time.time())
    return {
        "no proof": list,
        "two proofs": lambda: [proof(key, url, token), proof(key, url, token)],
        "not a JWT": lambda: ["not.a.jwt"],
        "another method": lambda: [proof(key, url, token, claims={"htm": "GET"})],
        "another server": lambda: [proof(key, "http://127.0.0.1:1/mcp", token)],
        "another path": lambda: [proof(key, url + "/other", token)],
        "too old": lambda: [proof(key, url, token, claims={"iat": now - 600})],
        "from the future": lambda: [proof(key, url, token, claims={"iat": now + 600})],
        "no iat": lambda: [proof(key, url, token, claims={"iat": None})],
        "no jti": lambda: [proof(key, url, token, claims={"jti": None})],
        "no ath": lambda: [proof(key, url, token, claims={"ath": None})],
        "ath of another token": lambda: [proof(key, url, token, claims={"ath": ath("other")})],
        "another key": lambda: [proof(stranger, url, token)],
        "signed by another key": lambda: [proof(key, url, token, signer=stranger)],
        "wrong typ": lambda: [proof(key, url, token, header={"typ": "JWT"})],
        "private key in jwk": lambda: [
            proof(key, url, token, header={"jwk": key.as_dict(private=True)})
        ],
        "symmetric": lambda: [
            proof(
                key,
                url,
                token,
                header={"alg": "HS256", "jwk": {"kty": "oct", "k": "c2VjcmV0c2VjcmV0c2VjcmV0"}},
                signer=OctKey.import_key("secretsecretsecret"),
            )
        ],
    }


async def test_proofs_that_do_not_fit_the_request_token_or_key_are_refused() -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_protected() as protected, httpx2.AsyncClient() as client:
            key = ECKey.generate_key("P-256", private=True)
            token = protected.token(dpop_jkt=key.thumbprint())
            for why, make in _bad_proofs(protected.url, token, key).items():
                answer = await post(client, protected, token, make())
                assert answer.status_code == 401, why
                challenge = answer.headers["www-authenticate"]
                assert challenge.startswith("DPoP "), why
                assert 'error="invalid_dpop_proof"' in challenge, why
                assert 'algs="' in challenge, why
            assert protected.calls == []
            # The same key's well-made proof is fine.
            answer = await post(client, protected, token, [proof(key, protected.url, token)])
            assert answer.status_code == 200, answer.text


async def test_an_unbound_token_is_refused_with_the_dpop_scheme() -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_protected() as protected, httpx2.AsyncClient() as client:
            key = DpopKey()
            token = protected.token()
            answer = await post(client, protected, token, [key.proof("POST", protected.url)])
            assert answer.status_code == 401
            challenge = answer.headers["www-authenticate"]
            assert challenge.startswith("DPoP ") and 'error="invalid_token"' in challenge


async def test_dpop_required_mode_refuses_bearer_tokens_and_says_so_in_its_metadata() -> None:
    with trio.fail_after(IO_LIMIT):
        async with (
            open_protected(dpop=DpopPolicy(required=True)) as protected,
            httpx2.AsyncClient() as client,
        ):
            document = (
                await client.get(protected.base + "/.well-known/oauth-protected-resource/mcp")
            ).json()
            assert document["dpop_bound_access_tokens_required"] is True
            assert "ES256" in document["dpop_signing_alg_values_supported"]
            anonymous = await client.post(protected.url, json=INITIALIZE, headers=ACCEPT)
            assert anonymous.status_code == 401
            assert anonymous.headers["www-authenticate"].startswith("DPoP ")
            bearer = await post(client, protected, protected.token(), None, scheme="Bearer")
            assert bearer.status_code == 401
            assert bearer.headers["www-authenticate"].startswith("DPoP ")
            assert protected.calls == []
            key = DpopKey()
            token = protected.token(dpop_jkt=key.thumbprint)
            answer = await post(
                client, protected, token, [key.proof("POST", protected.url, access_token=token)]
            )
            assert answer.status_code == 200, answer.text


async def test_a_call_lacking_a_scope_is_challenged_with_the_dpop_scheme() -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_protected() as protected, httpx2.AsyncClient() as client:
            key = DpopKey()
            token = protected.token(scopes=(), dpop_jkt=key.thumbprint)
            answer = await post(
                client, protected, token, [key.proof("POST", protected.url, access_token=token)]
            )
            assert answer.status_code == 403
            challenge = answer.headers["www-authenticate"]
            assert challenge.startswith("DPoP ") and 'error="insufficient_scope"' in challenge


async def test_the_memory_replay_cache_is_bounded_and_forgets_expired_proofs(
    autojump_clock: trio.testing.MockClock,
) -> None:
    policy = DpopPolicy(replay_cache_size=2)
    assert await policy.replays.first_use(b"a", 10.0)
    assert not await policy.replays.first_use(b"a", 10.0)
    assert await policy.replays.first_use(b"b", 20.0)
    with pytest.raises(VerifierUnavailable, match="DPoP replay cache is full"):
        await policy.replays.first_use(b"c", 10.0)
    await trio.sleep(11.0)  # "a" has expired, "b" has not
    assert not await policy.replays.first_use(b"b", 10.0)
    assert await policy.replays.first_use(b"c", 10.0)
    await trio.sleep(10.0)
    assert await policy.replays.first_use(b"a", 10.0)
    assert await policy.replays.first_use(b"b", 10.0)


async def test_two_workers_sharing_a_redis_store_refuse_each_others_replays(
    redis_server: Any,
) -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_stores(redis_server.url, prefix=f"t-{secrets.token_hex(4)}:") as stores:
            first, second = DpopPolicy(stores=stores), DpopPolicy(stores=stores)
            assert await first.replays.first_use(b"proof", 5.0)
            assert not await second.replays.first_use(b"proof", 5.0)
            assert await second.replays.first_use(b"another proof", 5.0)
            assert stores.redis is not None
            ttls = [
                await stores.redis.pttl(name)
                for name in await stores.redis.keys(stores.prefix + "dpop-proof:*")
            ]
            assert len(ttls) == 2 and all(0 < ttl <= 5000 for ttl in ttls)
