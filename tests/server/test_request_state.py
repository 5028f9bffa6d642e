"""The sealed requestState of input-required results: intact, fresh and for this request only."""

from __future__ import annotations

import base64

import pytest

from mcptrio.protocol.errors import InvalidParams
from mcptrio.server.request_state import KEY_ENVIRONMENT_VARIABLE, RequestStateKey, params_digest

DIGEST = params_digest("tools/call", "greet", {"a": 1})


def test_a_sealed_state_opens_to_its_answers() -> None:
    key = RequestStateKey()
    state = key.seal("tools/call", DIGEST, {"name": {"action": "accept"}}, asked=["surname"])
    opened = key.open(state, "tools/call", DIGEST)
    assert opened.answers == {"name": {"action": "accept"}}
    assert opened.asked == ["surname"]
    assert "accept" not in state  # sealed, not merely signed


def test_a_state_issued_to_one_principal_is_refused_to_another() -> None:
    key = RequestStateKey()
    state = key.seal("tools/call", DIGEST, {"k": 1}, principal="alice")
    assert key.open(state, "tools/call", DIGEST, principal="alice").answers == {"k": 1}
    for other in ("mallory", None):
        with pytest.raises(InvalidParams, match="another user"):
            key.open(state, "tools/call", DIGEST, principal=other)
    anonymous = key.seal("tools/call", DIGEST, {"k": 1})
    with pytest.raises(InvalidParams, match="another user"):
        key.open(anonymous, "tools/call", DIGEST, principal="alice")


def test_a_changed_state_is_refused() -> None:
    key = RequestStateKey()
    state = key.seal("tools/call", DIGEST, {})
    for bad in (state[:-2] + ("AA" if not state.endswith("AA") else "BB"), state + "x", "", "!!"):
        with pytest.raises(InvalidParams):
            key.open(bad, "tools/call", DIGEST)


def test_a_state_for_another_request_is_refused() -> None:
    key = RequestStateKey()
    state = key.seal("tools/call", DIGEST, {})
    with pytest.raises(InvalidParams, match="another request"):
        key.open(state, "tools/call", params_digest("tools/call", "greet", {"a": 2}))
    with pytest.raises(InvalidParams, match="another request"):
        key.open(state, "prompts/get", DIGEST)


def test_an_expired_state_is_refused() -> None:
    key = RequestStateKey(ttl=-1)
    state = key.seal("tools/call", DIGEST, {})
    with pytest.raises(InvalidParams, match="expired"):
        key.open(state, "tools/call", DIGEST)


def test_workers_sharing_a_key_open_each_others_state(monkeypatch: pytest.MonkeyPatch) -> None:
    shared = base64.b64encode(b"k" * 32).decode()
    monkeypatch.setenv(KEY_ENVIRONMENT_VARIABLE, shared)
    one, other = RequestStateKey(), RequestStateKey()
    opened = other.open(one.seal("tools/call", DIGEST, {"k": 1}), "tools/call", DIGEST)
    assert opened.answers == {"k": 1}
    with pytest.raises(InvalidParams):
        RequestStateKey(b"x" * 32).open(one.seal("tools/call", DIGEST, {}), "tools/call", DIGEST)


def test_the_digest_ignores_argument_order() -> None:
    assert params_digest("tools/call", "t", {"a": 1, "b": 2}) == params_digest(
        "tools/call", "t", {"b": 2, "a": 1}
    )


def test_a_bad_key_is_refused_at_once() -> None:
    with pytest.raises(ValueError, match="bytes"):
        RequestStateKey(b"short")
    with pytest.raises(ValueError, match="base64"):
        RequestStateKey("not base64!")
