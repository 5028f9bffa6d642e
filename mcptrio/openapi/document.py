"""An OpenAPI document, read from a file (JSON or YAML) or fetched from a URL.

Reading checks only what the rest of :mod:`mcptrio.openapi` relies on: the document is an
object, its ``openapi`` field names a 3.0 or 3.1 release, and ``paths`` (when present) is an
object. Everything else is read as the operations are described, and a part that cannot be
used is named there.

A URL is fetched with mcptrio's own HTTP client
(:class:`~mcptrio.transports.http.engine.client_pool.HttpClientPool`), on Trio: redirects are
followed (at most :data:`MAX_REDIRECTS`), and a document past :data:`MAX_DOCUMENT` bytes is
refused unread.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urljoin

import yaml

from ..protocol.errors import LocalError
from ..transports.http.engine.client_pool import HttpClientPool, HttpError

__all__ = [
    "MAX_DOCUMENT",
    "MAX_REDIRECTS",
    "OpenApiDocument",
    "OpenApiError",
    "fetch_document",
    "parse_document",
    "read_document",
]

#: The largest document fetched from a URL (16 MiB).
MAX_DOCUMENT = 16 * 1024 * 1024
#: Redirects followed when fetching one.
MAX_REDIRECTS = 5


class OpenApiError(LocalError, ValueError):
    """A document (or a part of it) that cannot be served: the message names the document and
    the part, in one line."""


@dataclass(frozen=True, slots=True)
class OpenApiDocument:
    """A parsed OpenAPI document: its ``contents`` and where they came from (``source``, a path
    or a URL, which relative ``$ref``s and server URLs are resolved against)."""

    contents: Mapping[str, Any]
    source: str

    @property
    def version(self) -> Literal["3.0", "3.1"]:
        """The OpenAPI release, ``"3.0"`` or ``"3.1"`` (checked when parsed)."""
        return "3.0" if str(self.contents["openapi"]).startswith("3.0") else "3.1"

    @property
    def title(self) -> str:
        """``info.title`` (``"openapi"`` without one)."""
        info = self.contents.get("info")
        title = info.get("title") if isinstance(info, Mapping) else None
        return title if isinstance(title, str) and title else "openapi"

    @property
    def paths(self) -> Mapping[str, Any]:
        paths = self.contents.get("paths")
        return paths if isinstance(paths, Mapping) else {}

    def server_url(self) -> str | None:
        """The first ``servers[].url`` with its variables at their defaults, resolved against
        the document's own URL; ``None`` when it names none (or only a relative one, and the
        document is a file)."""
        servers = self.contents.get("servers")
        if not isinstance(servers, list) or not servers or not isinstance(servers[0], Mapping):
            return None
        url = servers[0].get("url")
        if not isinstance(url, str):
            return None
        variables = servers[0].get("variables")
        if isinstance(variables, Mapping):
            for name, variable in variables.items():
                if isinstance(variable, Mapping) and "default" in variable:
                    url = url.replace("{" + str(name) + "}", str(variable["default"]))
        if "://" in url:
            return url
        if "://" in self.source:
            return urljoin(self.source, url)
        return None


def parse_document(text: str | bytes, source: str) -> OpenApiDocument:
    """The document ``text`` (JSON, or YAML) read from ``source``; :class:`OpenApiError` if it
    is neither or not an OpenAPI 3.0/3.1 document."""
    try:
        contents = json.loads(text)
    except ValueError:
        try:
            contents = yaml.load(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise OpenApiError(f"{source}: neither JSON nor YAML ({reason})") from None
    if not isinstance(contents, dict):
        raise OpenApiError(f"{source}: an OpenAPI document is an object")
    version = contents.get("openapi")
    if not isinstance(version, str):
        swagger = "swagger" in contents
        hint = " (a Swagger 2.0 document: convert it to OpenAPI 3 first)" if swagger else ""
        raise OpenApiError(f"{source}: has no 'openapi' version field{hint}")
    if not version.startswith(("3.0", "3.1")):
        raise OpenApiError(f"{source}: OpenAPI {version} is not supported (3.0 and 3.1 are)")
    if "paths" in contents and not isinstance(contents["paths"], dict):
        raise OpenApiError(f"{source}: 'paths' must be an object")
    return OpenApiDocument(contents, source)


def read_document(path: str | os.PathLike[str]) -> OpenApiDocument:
    """The document in the file ``path``."""
    try:
        text = Path(path).read_bytes()
    except OSError as exc:
        raise OpenApiError(f"{os.fspath(path)}: {exc.strerror or exc}") from None
    return parse_document(text, str(Path(path).resolve()))


async def fetch_document(
    url: str,
    *,
    http: HttpClientPool | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 30.0,
) -> OpenApiDocument:
    """The document at ``url``, fetched with ``http`` (a pool made for the fetch and closed
    after when ``None``) and ``headers`` (credentials, say), within ``timeout`` seconds per
    connect and read."""
    if http is None:
        pool = HttpClientPool(connect_timeout=timeout, read_timeout=timeout, max_connections=1)
        try:
            return await fetch_document(url, http=pool, headers=headers)
        finally:
            await pool.aclose()
    sent = [("accept", "application/json, application/yaml;q=0.9, */*;q=0.5")]
    sent.extend((headers or {}).items())
    location = url
    for _ in range(MAX_REDIRECTS + 1):
        try:
            async with http.request("GET", location, headers=sent) as response:
                redirect = response.header(b"location")
                if response.status in (301, 302, 303, 307, 308) and redirect is not None:
                    location = urljoin(location, redirect.decode("latin-1"))
                    continue
                body = await response.read(MAX_DOCUMENT)
                status = response.status
        except HttpError as exc:
            raise OpenApiError(f"{url}: {exc}") from None
        except ValueError as exc:
            raise OpenApiError(f"{url}: {exc}") from None
        if body is None:
            raise OpenApiError(f"{url}: the document is larger than {MAX_DOCUMENT} bytes")
        if status != 200:
            raise OpenApiError(f"{url}: answered HTTP {status}")
        return parse_document(body, location)
    raise OpenApiError(f"{url}: more than {MAX_REDIRECTS} redirects")
