"""The stdio transport: the line framer, the transport over in-memory streams, and real
subprocesses for the client side and its shutdown ladder.

Every test that does I/O runs under ``trio.fail_after``; the ones that only wait use the
``autojump_clock``. Subprocesses are ``sys.executable -c <script>`` with grace periods of a few
tenths of a second, so the whole ladder runs in about a second.
"""

from __future__ import annotations

import itertools
import logging
import os
import signal
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st

from mcptrio.runtime.transport import Frame, Outgoing, oversized_frame
from mcptrio.transports.stdio import (
    SERVER_STDERR_LOGGER,
    StdioTransport,
    open_stdio_client_transport,
    open_stdio_server_transport,
)
from mcptrio.transports.stdio_framing import LineFramer

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="stdio tests are Unix-only")

REPO_ROOT = Path(__file__).resolve().parents[2]
TRANSPORT_LOGGER = "mcptrio.transports.stdio"


def feed_all(framer: LineFramer, chunks: Sequence[bytes], *, eof: bool = True) -> list[Frame]:
    frames: list[Frame] = []
    for chunk in chunks:
        frames.extend(framer.feed(chunk))
    if eof:
        frames.extend(framer.feed_eof())
    return frames


# --- LineFramer -------------------------------------------------------------------------------


def test_framer_joins_a_line_split_across_chunks() -> None:
    framer = LineFramer(100)
    assert framer.feed(b'{"a"') == []
    assert framer.feed(b":1}") == []
    assert framer.feed(b'\n{"b":2}\n{"c"') == [b'{"a":1}', b'{"b":2}']
    assert framer.feed(b":3}\n") == [b'{"c":3}']


def test_framer_strips_one_trailing_carriage_return() -> None:
    framer = LineFramer(100)
    assert framer.feed(b"one\r\ntwo\r") == [b"one"]
    assert framer.feed(b"\nthree\r\r\n") == [b"two", b"three\r"]


def test_framer_skips_empty_and_whitespace_only_lines() -> None:
    framer = LineFramer(100)
    assert framer.feed(b"\n\n  \n\t\r\none\n\r\n \r\ntwo\n") == [b"one", b"two"]


def test_framer_delivers_an_unterminated_last_line_at_eof() -> None:
    framer = LineFramer(100)
    assert framer.feed(b"one\ntw") == [b"one"]
    assert framer.feed_eof() == [b"tw"]
    assert framer.feed_eof() == []


def test_framer_eof_drops_a_blank_unterminated_line() -> None:
    framer = LineFramer(100)
    assert feed_all(framer, [b"one\n  \r"]) == [b"one"]


@pytest.mark.parametrize("chunk_size", [1, 3, 7, 1000])
def test_framer_skips_an_oversized_line_and_reports_it_once(chunk_size: int) -> None:
    data = b"first\n" + b"x" * 250 + b"\nsecond\r\nthird\n"
    chunks = [data[i : i + chunk_size] for i in range(0, len(data), chunk_size)]
    frames = feed_all(LineFramer(10), chunks)
    assert frames == [b"first", oversized_frame(10, b"x" * 250), b"second", b"third"]


def test_framer_never_buffers_an_oversized_line_whole() -> None:
    framer = LineFramer(1000)
    reported = []
    for _ in range(10_000):
        reported.extend(framer.feed(b"y" * 1000))
    # Reported when it ends (its tail may hold its id), having kept only its head and tail.
    assert reported == []
    line = b"y" * 10_000_000 + b"tail of the long line"
    assert framer.feed(b"tail of the long line\nnext\n") == [oversized_frame(1000, line), b"next"]


def test_framer_oversized_unterminated_line_at_eof_is_reported_once() -> None:
    framer = LineFramer(4)
    assert feed_all(framer, [b"ok\n", b"toolong", b"er"]) == [
        b"ok",
        oversized_frame(4, b"toolonger"),
    ]


@pytest.mark.parametrize("chunk_size", [1, 5, 64, 10_000])
def test_an_oversized_line_keeps_how_it_began_however_it_arrived(chunk_size: int) -> None:
    line = b'{"jsonrpc":"2.0","id":7,"result":{"text":"' + b"y" * 3000 + b'"}}'
    data = line + b"\r\nnext\n"
    chunks = [data[i : i + chunk_size] for i in range(0, len(data), chunk_size)]
    [oversized, after] = feed_all(LineFramer(2000), chunks)
    assert oversized == oversized_frame(2000, line)
    assert oversized.head == line[:1024]
    assert after == b"next"


@pytest.mark.parametrize("split", range(1, 14))
def test_framer_limit_is_measured_without_the_line_ending(split: int) -> None:
    data = b"abcd\r\nabcde\r\n"
    frames = feed_all(LineFramer(4), [data[:split], data[split:]])
    assert frames == [b"abcd", oversized_frame(4, b"abcde")]


def reference_frames(data: bytes, limit: int) -> list[Frame]:
    """What framing ``data`` must give, computed the obvious way on the whole input at once."""
    frames: list[Frame] = []
    for line in data.split(b"\n"):
        if line.endswith(b"\r"):
            line = line[:-1]
        if len(line) > limit:
            frames.append(oversized_frame(limit, line))
        elif line.strip():
            frames.append(line)
    return frames


_line_bytes = st.lists(
    st.sampled_from([b"a", b"{", b"}", b" ", b"\r", b"\t", b"\xff"]), max_size=30
)


@given(
    lines=st.lists(_line_bytes.map(b"".join), max_size=12),
    terminated=st.booleans(),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=20),
)
def test_framer_output_does_not_depend_on_chunking(
    lines: list[bytes], terminated: bool, cuts: list[int]
) -> None:
    data = b"\n".join(lines) + (b"\n" if terminated else b"")
    bounds = sorted({0, len(data), *(c for c in cuts if c < len(data))})
    chunks = [data[a:b] for a, b in itertools.pairwise(bounds)]
    assert feed_all(LineFramer(12), chunks) == reference_frames(data, 12)


# --- StdioTransport over memory streams ---------------------------------------------------------


def memory_transport_pair(
    max_frame_size: int = 1024, read_size: int = 65536
) -> tuple[StdioTransport, StdioTransport]:
    a_to_b_send, a_to_b_receive = trio.testing.memory_stream_one_way_pair()
    b_to_a_send, b_to_a_receive = trio.testing.memory_stream_one_way_pair()
    a = StdioTransport(
        b_to_a_receive, a_to_b_send, max_frame_size=max_frame_size, read_size=read_size
    )
    b = StdioTransport(
        a_to_b_receive, b_to_a_send, max_frame_size=max_frame_size, read_size=read_size
    )
    return a, b


async def test_transport_round_trips_frames_both_ways() -> None:
    with trio.fail_after(10):
        client, server = memory_transport_pair()
        await client.send([Outgoing(b'{"id":1}'), Outgoing(b'{"id":2}', related=2)])
        assert await server.receive() == b'{"id":1}'
        assert await server.receive() == b'{"id":2}'
        await server.send([Outgoing(b'{"result":{}}', related=1)])
        assert await client.receive() == b'{"result":{}}'


async def test_transport_writes_a_batch_with_one_send_all() -> None:
    writes: list[bytes] = []

    class RecordingStream(trio.abc.SendStream):
        async def send_all(self, data: bytes | bytearray | memoryview) -> None:
            await trio.lowlevel.checkpoint()
            writes.append(bytes(data))

        async def wait_send_all_might_not_block(self) -> None:
            await trio.lowlevel.checkpoint()

        async def aclose(self) -> None:
            await trio.lowlevel.checkpoint()

    with trio.fail_after(10):
        _, receive_stream = trio.testing.memory_stream_one_way_pair()
        transport = StdioTransport(receive_stream, RecordingStream())
        await transport.send([Outgoing(b"a"), Outgoing(b"b"), Outgoing(b"c")])
        await transport.send([Outgoing(b"d")])
        await transport.send([])
        assert writes == [b"a\nb\nc\n", b"d\n"]


async def test_transport_raises_end_of_channel_at_eof_after_the_last_line() -> None:
    with trio.fail_after(10):
        send_stream, receive_stream = trio.testing.memory_stream_one_way_pair()
        transport = StdioTransport(receive_stream, trio.testing.memory_stream_one_way_pair()[0])
        await send_stream.send_all(b'{"a":1}\r\n\n{"b":2}')
        await send_stream.aclose()
        assert await transport.receive() == b'{"a":1}'
        assert await transport.receive() == b'{"b":2}'
        with pytest.raises(trio.EndOfChannel):
            await transport.receive()
        with pytest.raises(trio.EndOfChannel):
            await transport.receive()


async def test_transport_reports_an_oversized_frame_and_carries_on() -> None:
    with trio.fail_after(10):
        client, server = memory_transport_pair(max_frame_size=16, read_size=5)
        await client.send([Outgoing(b"small"), Outgoing(b"x" * 100), Outgoing(b"after")])
        assert await server.receive() == b"small"
        assert await server.receive() == oversized_frame(16, b"x" * 100)
        assert await server.receive() == b"after"


async def test_transport_receive_is_safe_to_cancel() -> None:
    with trio.fail_after(10):
        client, server = memory_transport_pair()
        await client.send([Outgoing(b"one"), Outgoing(b"two")])
        assert await server.receive() == b"one"
        # A frame already read is handed over without a checkpoint, even in a cancelled scope.
        with trio.CancelScope() as scope:
            scope.cancel()
            assert await server.receive() == b"two"
        assert not scope.cancelled_caught
        # A receive that has to wait is cancelled, and loses nothing.
        with trio.CancelScope() as scope:
            scope.cancel()
            await server.receive()
        assert scope.cancelled_caught
        await client.send([Outgoing(b"three")])
        assert await server.receive() == b"three"


async def test_transport_assembles_a_trickling_frame(autojump_clock: trio.abc.Clock) -> None:
    with trio.fail_after(10):
        client, server = memory_transport_pair()

        async def trickle() -> None:
            for byte in b'{"slow":true}\n':
                await client.send_stream.send_all(bytes([byte]))
                await trio.sleep(0.5)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(trickle)
            assert await server.receive() == b'{"slow":true}'
            assert trio.current_time() >= 6.5


async def test_transport_aclose_is_idempotent_and_closes_both_streams() -> None:
    with trio.fail_after(10):
        client, server = memory_transport_pair()
        await client.aclose()
        await client.aclose()
        with pytest.raises(trio.ClosedResourceError):
            await client.send([Outgoing(b"late")])
        with pytest.raises(trio.ClosedResourceError):
            await client.receive()
        with pytest.raises(trio.EndOfChannel):
            await server.receive()
        with pytest.raises(trio.BrokenResourceError):
            await server.send([Outgoing(b"to nobody")])


# --- server side ---------------------------------------------------------------------------------


async def test_server_transport_redirects_stdout_to_stderr_while_open(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with trio.fail_after(10):
        to_server_send, to_server_receive = trio.testing.memory_stream_one_way_pair()
        from_server_send, from_server_receive = trio.testing.memory_stream_one_way_pair()
        original = sys.stdout
        async with open_stdio_server_transport(
            stdin=to_server_receive, stdout=from_server_send
        ) as transport:
            assert sys.stdout is sys.stderr
            print("stray output")
            await to_server_send.send_all(b'{"ping":1}\n')
            assert await transport.receive() == b'{"ping":1}'
            await transport.send([Outgoing(b'{"pong":1}')])
            assert await from_server_receive.receive_some() == b'{"pong":1}\n'
        assert sys.stdout is original
        captured = capsys.readouterr()
        assert "stray output" in captured.err
        assert "stray output" not in captured.out


# --- client side, real subprocesses -------------------------------------------------------------


def python(script: str) -> list[str]:
    return [sys.executable, "-u", "-c", textwrap.dedent(script)]


ECHO = python(
    """
    import sys
    for line in sys.stdin.buffer:
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
    """
)


def shutdown_messages(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(r.getMessage() for r in caplog.records if r.name == TRANSPORT_LOGGER)


async def test_client_echoes_frames_through_a_subprocess(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger=TRANSPORT_LOGGER)
    with trio.fail_after(10):
        async with open_stdio_client_transport(
            ECHO, stdin_close_grace=5, terminate_grace=5
        ) as transport:
            await transport.send([Outgoing(b'{"id":1}'), Outgoing(b'{"id":2}')])
            assert await transport.receive() == b'{"id":1}'
            assert await transport.receive() == b'{"id":2}'
            start = trio.current_time()
        # The fast path: closing stdin is enough, no signal is sent.
        assert trio.current_time() - start < 5
        assert transport.process.returncode == 0
        assert "SIGTERM" not in shutdown_messages(caplog)


async def test_client_sees_end_of_channel_when_the_server_exits() -> None:
    script = python(
        """
        import sys
        sys.stdout.write('{"bye":true}\\n')
        sys.exit(3)
        """
    )
    with trio.fail_after(10):
        async with open_stdio_client_transport(script) as transport:
            assert await transport.receive() == b'{"bye":true}'
            with pytest.raises(trio.EndOfChannel):
                await transport.receive()
            assert await transport.process.wait() == 3


async def test_client_forwards_server_stderr_to_the_logger(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=SERVER_STDERR_LOGGER)
    script = python(
        """
        import sys
        sys.stderr.write("starting up\\nstill starting\\n")
        sys.stderr.flush()
        sys.stdout.write("{}\\n")
        sys.stdout.flush()
        sys.stdin.read()
        sys.stderr.write("last words")
        """
    )
    with trio.fail_after(10):
        async with open_stdio_client_transport(script) as transport:
            assert await transport.receive() == b"{}"
    records = [r for r in caplog.records if r.name == SERVER_STDERR_LOGGER]
    assert [r.getMessage() for r in records] == ["starting up", "still starting", "last words"]
    assert all(r.levelno == logging.INFO for r in records)


async def test_client_uses_the_given_stderr_logger(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="custom.server")
    script = python("import sys; sys.stderr.write('hello\\n')")
    with trio.fail_after(10):
        async with open_stdio_client_transport(
            script, stderr_logger=logging.getLogger("custom.server")
        ) as transport:
            with pytest.raises(trio.EndOfChannel):
                await transport.receive()
    assert [(r.name, r.getMessage()) for r in caplog.records] == [("custom.server", "hello")]


async def test_shutdown_terminates_a_server_that_ignores_stdin_eof(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=TRANSPORT_LOGGER)
    script = python(
        """
        import sys, time
        print("{}", flush=True)
        sys.stdin.read()
        time.sleep(60)
        """
    )
    with trio.fail_after(10):
        async with open_stdio_client_transport(
            script, stdin_close_grace=0.3, terminate_grace=5
        ) as transport:
            assert await transport.receive() == b"{}"
    assert transport.process.returncode == -signal.SIGTERM
    messages = shutdown_messages(caplog)
    assert "SIGTERM" in messages
    assert "SIGKILL" not in messages


IGNORES_SIGTERM = python(
    """
    import signal, sys, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print("{}", flush=True)
    sys.stdin.read()
    time.sleep(60)
    """
)


async def test_shutdown_kills_a_server_that_ignores_sigterm(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=TRANSPORT_LOGGER)
    with trio.fail_after(10):
        async with open_stdio_client_transport(
            IGNORES_SIGTERM, stdin_close_grace=0.2, terminate_grace=0.3
        ) as transport:
            assert await transport.receive() == b"{}"
    assert transport.process.returncode == -signal.SIGKILL
    messages = shutdown_messages(caplog)
    assert "SIGTERM" in messages
    assert "SIGKILL" in messages


async def test_shutdown_completes_while_the_caller_is_cancelled() -> None:
    with trio.fail_after(10):
        with trio.CancelScope() as scope:
            async with open_stdio_client_transport(
                IGNORES_SIGTERM, stdin_close_grace=0.2, terminate_grace=0.2
            ) as transport:
                assert await transport.receive() == b"{}"
                scope.cancel()
                await trio.sleep_forever()
        assert scope.cancelled_caught
        assert transport.process.returncode == -signal.SIGKILL


async def test_client_error_in_the_block_propagates_unwrapped() -> None:
    with trio.fail_after(10):
        with pytest.raises(ValueError, match="boom"):
            async with open_stdio_client_transport(ECHO) as transport:
                raise ValueError("boom")
        assert transport.process.returncode == 0


async def test_client_rejects_a_shell_string() -> None:
    with pytest.raises(TypeError):
        async with open_stdio_client_transport("python -c pass"):
            pass  # pragma: no cover


async def test_real_stdio_server_keeps_stray_output_off_the_protocol_stream(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """End to end on real file descriptors: print(), a raw write to fd 1 and a child process
    all land on stderr, and only frames reach the client."""
    caplog.set_level(logging.INFO, logger=SERVER_STDERR_LOGGER)
    script = python(
        """
        import os, subprocess, sys
        import trio
        from mcptrio.runtime.transport import Outgoing
        from mcptrio.transports.stdio import open_stdio_server_transport

        async def main():
            async with open_stdio_server_transport() as transport:
                print("stray print")
                os.write(1, b"stray fd write\\n")
                subprocess.run([sys.executable, "-c", "print('stray child')"], check=True)
                while True:
                    try:
                        frame = await transport.receive()
                    except trio.EndOfChannel:
                        return
                    await transport.send([Outgoing(frame)])

        trio.run(main)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    with trio.fail_after(10):
        async with open_stdio_client_transport(script, env=env) as transport:
            await transport.send([Outgoing(b'{"id":1}'), Outgoing(b'{"id":2}')])
            assert await transport.receive() == b'{"id":1}'
            assert await transport.receive() == b'{"id":2}'
            await transport.send_stream.aclose()
            with pytest.raises(trio.EndOfChannel):
                await transport.receive()
    assert transport.process.returncode == 0
    stderr_lines = {r.getMessage() for r in caplog.records if r.name == SERVER_STDERR_LOGGER}
    assert {"stray print", "stray fd write", "stray child"} <= stderr_lines
