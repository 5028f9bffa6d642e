"""Reading WWW-Authenticate: the challenges servers send, and the odd ones they might."""

from __future__ import annotations

import pytest

from mcptrio.auth.client.challenge import Challenge, parse_challenges, scope_of


def test_a_bearer_challenge_gives_its_metadata_url_scope_and_error() -> None:
    [challenge] = parse_challenges(
        [
            'Bearer error="insufficient_scope", scope="files:read files:write",'
            ' resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource"'
        ]
    )
    assert challenge.scheme == "bearer"
    assert challenge.error == "insufficient_scope"
    assert scope_of(challenge) == ["files:read", "files:write"]
    assert challenge.resource_metadata == (
        "https://mcp.example.com/.well-known/oauth-protected-resource"
    )


def test_several_challenges_in_one_header_and_across_headers_are_all_read() -> None:
    challenges = parse_challenges(
        ['DPoP error="use_dpop_nonce", algs="ES256", Bearer realm="mcp"', b"Basic abc=="]
    )
    assert [c.scheme for c in challenges] == ["dpop", "bearer", "basic"]
    assert challenges[0].params == {"error": "use_dpop_nonce", "algs": "ES256"}
    assert challenges[2].token68 == "abc=="


def test_quoted_strings_keep_commas_and_escaped_quotes() -> None:
    [challenge] = parse_challenges(['Bearer realm="a, b", error_description="say \\"no\\""'])
    assert challenge.params == {"realm": "a, b", "error_description": 'say "no"'}


@pytest.mark.parametrize(
    "value",
    ["", ",,,", "=", '"', 'Bearer scope="unterminated', "Bearer ,=,=", "x" * 10_000, "\x00\xff"],
)
def test_malformed_headers_never_raise(value: str) -> None:
    challenges = parse_challenges([value])
    assert all(isinstance(c, Challenge) for c in challenges)


def test_an_empty_scope_is_no_scope() -> None:
    [challenge] = parse_challenges(['Bearer scope=""'])
    assert scope_of(challenge) is None
