"""Fixtures for testing anything served over HTTP, on every mcptrio front end.

Two helpers, for every engineer testing HTTP endpoints:

``front_end`` (fixture)
    Parametrized over ``"builtin-h11"``, ``"builtin-httptools"`` and ``"hypercorn"``: a test
    that takes it runs once per front end.

``open_front_end(front_end, app, **limits)`` (async context manager)
    Serves an :class:`~mcptrio.transports.http.engine.exchange.HttpApp` on that front end on
    127.0.0.1, port 0, and yields the base URL (``"http://127.0.0.1:54321"``). The server runs
    in a nursery the context manager owns and is cancelled when the block ends. ``limits`` are
    ``ServerLimits`` fields (``header_timeout=0.5``...), mapped onto Hypercorn's config where it
    has an equivalent. Import it with ``from front_ends_for_tests import open_front_end``.

``open_test_connection(base_url)`` from ``http_client_for_tests`` is a raw h11 client that
reports status codes, headers and bodies exactly and reads streamed (SSE) bodies piece by
piece::

    from front_ends_for_tests import open_front_end
    from http_client_for_tests import open_test_connection

    async def test_post_gets_json(front_end: str) -> None:
        with trio.fail_after(10):
            async with open_front_end(front_end, MyApp()) as url:
                async with open_test_connection(url) as conn:
                    response = await conn.request("POST", "/mcp", body=b"{}")
                    assert response.status == 200
                    async with conn.stream("GET", "/mcp") as events:
                        first = await events.next_chunk()
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from front_ends_for_tests import FRONT_ENDS, open_front_end
from redis_servers import RedisServer

__all__ = ["front_end", "open_front_end"]


def _reexport_root_conftest() -> None:
    """Keep ``from conftest import open_recorded_client`` working in every test module.

    pytest imports each ``conftest.py`` that is not in a package as the module ``conftest``,
    replacing the previous one in ``sys.modules``; once this file is loaded, test modules
    collected after it (tests/server/..., tests/test_*.py) would find this module instead of
    tests/conftest.py. So this module also carries tests/conftest.py's public names.
    """
    name = "_mcptrio_tests_root_conftest"
    root = sys.modules.get(name)
    if root is None:
        spec = importlib.util.spec_from_file_location(
            name, Path(__file__).resolve().parents[2] / "conftest.py"
        )
        assert spec is not None and spec.loader is not None
        root = importlib.util.module_from_spec(spec)
        sys.modules[name] = root
        spec.loader.exec_module(root)
    for key, value in vars(root).items():
        if not key.startswith("_") and key not in globals():
            globals()[key] = value


_reexport_root_conftest()


@pytest.fixture(params=FRONT_ENDS)
def front_end(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The URL of the test session's redis-server (see the root conftest)."""
    return redis_server.url
