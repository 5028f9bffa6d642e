"""The sans-IO SSE encoder and parser."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcptrio.protocol.sse import SseError, SseEvent, SseParser, encode_comment, encode_event


def test_encoded_event_round_trips_through_the_parser() -> None:
    wire = encode_event('{"a":1}\nsecond', event_id="s1-7", event="message", retry_ms=500)
    parser = SseParser()
    assert parser.feed(wire) == [
        SseEvent(data='{"a":1}\nsecond', event="message", id="s1-7", retry=500)
    ]
    assert parser.last_event_id == "s1-7"
    assert parser.retry == 500


def test_priming_event_with_empty_data_is_dispatched_with_its_id() -> None:
    parser = SseParser()
    assert parser.feed(encode_event("", event_id="0", retry_ms=1000)) == [
        SseEvent(data="", id="0", retry=1000)
    ]


def test_comments_and_blank_lines_alone_dispatch_nothing() -> None:
    parser = SseParser()
    assert parser.feed(encode_comment("keep-alive") + b"\n\n" + encode_comment()) == []


def test_crlf_cr_and_lf_line_endings_and_split_chunks() -> None:
    parser = SseParser()
    events = []
    for byte in b"data: a\r\n\r\ndata:b\r\rdata: c\n\n":
        events += parser.feed(bytes([byte]))
    assert [e.data for e in events] == ["a", "b", "c"]


def test_last_event_id_persists_and_nul_ids_are_ignored() -> None:
    parser = SseParser()
    parser.feed(b"id: 5\ndata: x\n\n")
    events = parser.feed(b"id: bad\0id\ndata: y\n\n")
    assert events == [SseEvent(data="y")]
    assert parser.last_event_id == "5"


def test_invalid_retry_is_ignored() -> None:
    parser = SseParser()
    parser.feed(b"retry: 12x\ndata: x\n\n")
    assert parser.retry is None


def test_an_overlong_line_raises_instead_of_buffering() -> None:
    parser = SseParser(max_line=16)
    with pytest.raises(SseError):
        parser.feed(b"data: " + b"x" * 64)


def test_event_ids_with_newlines_are_refused() -> None:
    with pytest.raises(ValueError):
        encode_event("x", event_id="a\nb")


@given(st.lists(st.text(), min_size=1, max_size=5), st.integers(1, 7))
def test_any_text_survives_encoding_in_any_chunking(datas: list[str], step: int) -> None:
    wire = b"".join(encode_event(d, event_id=str(i)) for i, d in enumerate(datas))
    parser = SseParser()
    events = []
    for i in range(0, len(wire), step):
        events += parser.feed(wire[i : i + step])
    normalised = [d.replace("\r\n", "\n").replace("\r", "\n") for d in datas]
    assert [e.data for e in events] == normalised
    assert [e.id for e in events] == [str(i) for i in range(len(datas))]


def test_last_event_id_changes_only_when_the_event_completes() -> None:
    parser = SseParser()
    parser.feed(b"id: 1\ndata: a\n\n")
    parser.feed(b"id: 2\ndata: half")
    assert parser.last_event_id == "1"
    assert parser.feed(b"\n\n") == [SseEvent(data="half", id="2")]
    assert parser.last_event_id == "2"
