"""HeaderScan: a request's headers by name without a table of its own (engine/exchange.py)."""

from __future__ import annotations

from mcptrio.transports.http.engine.exchange import HeaderScan

HEADERS = [(b"host", b"a"), (b"accept", b"text/event-stream"), (b"host", b"b")]


def test_a_name_gives_its_first_value_as_the_dict_of_a_post_does() -> None:
    scan = HeaderScan(HEADERS)
    assert scan.get(b"host") == b"a" == dict(reversed(HEADERS))[b"host"]
    assert scan[b"accept"] == b"text/event-stream"


def test_an_absent_name_gives_the_default_or_a_key_error() -> None:
    scan = HeaderScan(HEADERS)
    assert scan.get(b"origin") is None
    assert scan.get(b"origin", b"x") == b"x"
    try:
        scan[b"origin"]
    except KeyError:
        pass
    else:
        raise AssertionError("a missing header must raise KeyError")


def test_it_lists_each_name_once() -> None:
    scan = HeaderScan(HEADERS)
    assert list(scan) == [b"host", b"accept"]
    assert len(scan) == 2
