"""open_client's block: errors raised in it come out unchanged, for every kind of target."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio

import mcptrio

SERVER = str(Path(__file__).resolve().parent.parent / "examples" / "demo_server.py")


class Boom(Exception):
    pass


@pytest.mark.parametrize("target", ["in-memory", "stdio"])
async def test_an_error_raised_in_the_client_block_propagates(target: str) -> None:
    server: mcptrio.Server | list[str] = (
        mcptrio.Server("x") if target == "in-memory" else [sys.executable, SERVER]
    )
    with trio.fail_after(20), pytest.raises(Boom):
        async with mcptrio.open_client(server) as client:
            await client.ping()
            raise Boom
