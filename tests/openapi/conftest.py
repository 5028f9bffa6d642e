from __future__ import annotations

from collections.abc import Iterator

import pytest
from http_apis import running_apis


@pytest.fixture(scope="session")
def api() -> Iterator[str]:
    """The base URL of the running APIs (one uvicorn process for the whole session)."""
    with running_apis() as url:
        yield url
