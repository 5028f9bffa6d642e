"""The HTTP APIs of the OpenAPI tests (``tests/openapi/api_apps.py``: a FastAPI application,
and the API of the hand-written ``zoo.yaml``), run by uvicorn in a child process on a free
loopback port."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from processes import stop_process

APPS = Path(__file__).resolve().parent / "openapi" / "api_apps.py"
#: The hand-written OpenAPI 3.1 document of the API at ``<base>/zoo``.
ZOO_DOCUMENT = APPS.parent / "zoo.yaml"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@contextmanager
def running_apis() -> Iterator[str]:
    """The APIs served by uvicorn for the block; yields their base URL (the FastAPI
    application's, its document at ``/openapi.json``; the zoo's is ``<base>/zoo``)."""
    pytest.importorskip("fastapi")
    port = _free_port()
    process = subprocess.Popen([sys.executable, str(APPS), str(port)], stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not _listening(port):
            assert process.poll() is None, "the API ended before it listened"
            assert time.monotonic() < deadline, "the API did not listen within 30 s"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_process(process)
