"""Who holds the built-in server's connection slots: waiting connections give theirs up to a
client with a request, busy ones never do, and a client past every limit hears 503."""

from __future__ import annotations

import pytest

from mcptrio.transports.http.engine.connection_slots import ConnectionSlots


class Connection:
    def __init__(self, name: str) -> None:
        self.name = name
        self.evicted = False

    def evict(self) -> None:
        self.evicted = True

    def __repr__(self) -> str:
        return self.name


def test_a_free_slot_is_taken_without_evicting_anyone() -> None:
    slots = ConnectionSlots(2)
    a = Connection("a")
    assert slots.admit("10.0.0.1")
    slots.waiting(a, "10.0.0.1")
    assert slots.admit("10.0.0.2")
    assert not a.evicted and slots.evictions == 0


def test_a_full_server_evicts_the_longest_waiting_connection() -> None:
    slots = ConnectionSlots(3)
    a, b, c = Connection("a"), Connection("b"), Connection("c")
    for _ in range(3):
        assert slots.admit("10.0.0.1")
    slots.waiting(b, "10.0.0.1")
    slots.waiting(a, "10.0.0.1")
    slots.waiting(c, "10.0.0.1")
    slots.busy(c)
    assert slots.admit("10.0.0.2")
    assert (a.evicted, b.evicted, c.evicted) == (False, True, False)
    # The evicted connection still holds its slot until it ends, and is counted as going.
    assert slots.active == 4
    slots.release(b, "10.0.0.1")
    assert slots.active == 3


def test_a_full_server_with_every_connection_busy_refuses() -> None:
    slots = ConnectionSlots(2)
    assert slots.admit("10.0.0.1") and slots.admit("10.0.0.1")
    assert not slots.admit("10.0.0.2")
    assert slots.refusals == 1


def test_slots_being_given_back_are_not_given_twice() -> None:
    slots = ConnectionSlots(1)
    a = Connection("a")
    assert slots.admit(None)
    slots.waiting(a, None)
    assert slots.admit(None)
    assert a.evicted
    # a has not ended yet, and the newcomer is busy: nothing more to take.
    assert not slots.admit(None)
    slots.release(a, None)
    assert not slots.admit(None)


def test_a_client_at_its_own_limit_evicts_its_own_waiting_connection_only() -> None:
    slots = ConnectionSlots(10, per_client=2)
    mine, theirs = Connection("mine"), Connection("theirs")
    assert slots.admit("10.0.0.9")
    slots.waiting(theirs, "10.0.0.9")
    assert slots.admit("10.0.0.1") and slots.admit("10.0.0.1")
    slots.waiting(mine, "10.0.0.1")
    assert slots.admit("10.0.0.1")
    assert mine.evicted and not theirs.evicted
    # Now all of 10.0.0.1's are busy (or going): refused, while others still get in.
    assert not slots.admit("10.0.0.1")
    assert slots.admit("10.0.0.2")


def test_release_frees_the_clients_count() -> None:
    slots = ConnectionSlots(10, per_client=1)
    a = Connection("a")
    assert slots.admit("10.0.0.1")
    assert not slots.admit("10.0.0.1")
    slots.release(a, "10.0.0.1")
    assert slots.admit("10.0.0.1")


@pytest.mark.parametrize(("limit", "per_client"), [(0, None), (5, 0)])
def test_limits_below_one_are_refused(limit: int, per_client: int | None) -> None:
    with pytest.raises(ValueError):
        ConnectionSlots(limit, per_client)


def test_draining_evicts_the_waiting_now_and_the_busy_when_they_next_wait() -> None:
    slots = ConnectionSlots(4)
    idle, busy = Connection("idle"), Connection("busy")
    assert slots.admit(None) and slots.admit(None)
    slots.waiting(idle, None)
    slots.drain()
    assert idle.evicted and not busy.evicted
    # The busy connection answered its request and waits for another: it goes at once.
    slots.waiting(busy, None)
    assert busy.evicted and slots.draining


def test_draining_leaves_a_connection_waiting_for_a_request_to_answer_it() -> None:
    slots = ConnectionSlots(2)
    idle, stream = Connection("idle"), Connection("stream")
    assert slots.admit(None) and slots.admit(None)
    slots.waiting(idle, None, for_request=True)
    slots.waiting(stream, None)
    slots.drain()
    # A request may be on its way on the idle keep-alive connection: it is not closed under
    # its client; the stream is (its client reopens it elsewhere).
    assert stream.evicted and not idle.evicted
    slots.busy(idle)
    slots.waiting(idle, None, for_request=True)
    assert not idle.evicted
    # It still gives its slot up to a new client when every slot is taken.
    slots.release(stream, None)
    assert slots.admit(None)
    assert not idle.evicted
    assert slots.admit(None)
    assert idle.evicted
