"""The framer's partial line kept as the chunks read: long lines in reads of every size."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st
from test_stdio import feed_all, reference_frames

from mcptrio.runtime.transport import oversized_frame
from mcptrio.transports.stdio_framing import LineFramer


@settings(max_examples=200)
@given(
    sizes=st.lists(st.integers(min_value=0, max_value=20_000), min_size=1, max_size=6),
    cuts=st.lists(st.integers(min_value=0, max_value=70_000), max_size=12),
    terminated=st.booleans(),
)
def test_long_lines_in_reads_of_any_size_frame_as_whole_input_would(
    sizes: list[int], cuts: list[int], terminated: bool
) -> None:
    lines = [bytes([0x61 + i % 26]) * size for i, size in enumerate(sizes)]
    data = b"\n".join(lines) + (b"\n" if terminated else b"")
    bounds = sorted({0, len(data), *(c for c in cuts if c < len(data))})
    chunks = [data[a:b] for a, b in itertools.pairwise(bounds)]
    assert feed_all(LineFramer(15_000), chunks) == reference_frames(data, 15_000)


def test_a_frame_in_two_reads_comes_out_whole() -> None:
    frame = b"{" + b"y" * 102_400 + b"}"
    data = frame + b"\n"
    assert feed_all(LineFramer(1 << 20), [data[:65_536], data[65_536:]]) == [frame]


def test_a_line_trickled_a_byte_at_a_time_is_kept_in_few_parts() -> None:
    framer = LineFramer(1 << 20)
    for _ in range(100_000):
        assert framer.feed(b"y") == []
    # About one part per 4 KiB: the overhead per byte stays bounded however small the reads.
    assert len(framer._parts) <= 100_000 // 4096 + 1
    assert framer.feed(b"\n") == [b"y" * 100_000]


def test_an_oversized_line_in_large_reads_is_dropped_at_once() -> None:
    framer = LineFramer(100_000)
    assert framer.feed(b"y" * 65_536) == []
    assert framer.feed(b"y" * 65_536) == []
    assert framer._parts == [] and framer._size == 0
    line = b"y" * (2 * 65_536 + 10)
    assert framer.feed(b"y" * 10 + b"\nok\n") == [oversized_frame(100_000, line), b"ok"]
