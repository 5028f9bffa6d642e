"""The OAuth server tests run on both HTTP front ends where the front end matters."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["builtin", "hypercorn"])
def front_end(request: pytest.FixtureRequest) -> str:
    return str(request.param)
