"""What the HTTP endpoint learns of a frame before its session sees it (``peek``): every kind
of message, alone and in a batch, gives the same routing whichever way it is read."""

from __future__ import annotations

import pytest

from mcptrio.protocol.errors import InvalidRequest
from mcptrio.transports.http.endpoints.envelope_peek import peek


def test_a_lone_request_names_its_id_and_keeps_its_decoded_message() -> None:
    routing = peek(b'{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x"}}')
    assert (routing.request_ids, routing.response_ids, routing.cancelled) == (["a"], [], [])
    assert not routing.batch and not routing.initialize
    assert routing.message is not None and routing.message.method == "tools/call"


def test_only_a_lone_initialize_request_is_an_initialize() -> None:
    assert peek(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}').initialize
    notification = peek(b'{"jsonrpc":"2.0","method":"initialize"}')
    assert not notification.initialize and notification.request_ids == []
    batch = peek(b'[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}]')
    assert not batch.initialize and batch.request_ids == [1] and batch.message is None


def test_notifications_and_responses_carry_no_request_ids() -> None:
    cancel = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}'
    routing = peek(cancel)
    assert (routing.request_ids, routing.cancelled) == ([], [4])
    answer = peek(b'{"jsonrpc":"2.0","id":9,"result":{}}')
    assert (answer.request_ids, answer.response_ids) == ([], [9])


def test_a_batch_lists_its_requests_and_answers_in_order() -> None:
    routing = peek(
        b'[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":"r","error":{}},'
        b'{"jsonrpc":"2.0","id":3,"method":"ping"}]'
    )
    assert (routing.request_ids, routing.response_ids, routing.batch) == ([2, 3], ["r"], True)


@pytest.mark.parametrize(
    "frame",
    [
        b'{"jsonrpc":"2.0","id":null,"method":"ping"}',
        b'[{"jsonrpc":"2.0","id":null,"method":"ping"}]',
        b'{"jsonrpc":"2.0","id":1}',
        b"[]",
    ],
)
def test_what_cannot_be_routed_is_an_invalid_request(frame: bytes) -> None:
    with pytest.raises(InvalidRequest):
        peek(frame)
