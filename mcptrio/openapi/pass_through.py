"""Headers of the MCP client's HTTP request, passed on to the API.

An OpenAPI server often fronts an API that needs the *user's* credential (an API key, a token
the API itself issued). :class:`PassThroughHeaders` is an
:class:`~mcptrio.transports.http.endpoints.security.Authenticator` that lets every request in
(or, wrapping another authenticator, every request that one lets in) and records the values of
the named headers in the request's principal, a :class:`HeaderPrincipal`; each call of the
OpenAPI server sends them on (:func:`forwarded_headers`). The principal's ``subject`` is the
wrapped authenticator's, or else a digest of those values, so that an HTTP session opened with
one credential is refused to a request with another; a request that carries none of them is
known by its client's address, as an anonymous one is without this authenticator.

The MCP authorization spec forbids passing on a token that was issued *for the MCP server*: do
not pass on ``Authorization`` when the server checks it itself (``--auth jwt``); pass on a
header the API reads (``X-API-Key``), or let the server hold the credential (``headers``).
Over stdio there is no HTTP request, and nothing is passed on.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from ..server.serving_options import ServingOptions
from ..transports.http.endpoints.security import (
    Authenticator,
    HttpSecurity,
    Principal,
    Refusal,
)
from ..transports.http.engine.exchange import HttpRequest

__all__ = [
    "HeaderPrincipal",
    "PassThroughHeaders",
    "PassThroughServing",
    "forwarded_headers",
]


@dataclass(frozen=True, slots=True)
class HeaderPrincipal:
    """The principal :class:`PassThroughHeaders` admits: the passed headers (lower-case names)
    and the wrapped authenticator's principal, if any, whose ``scopes`` it has."""

    subject: str
    headers: Mapping[str, str]
    inner: Principal | None = None

    @property
    def scopes(self) -> frozenset[str]:
        scopes: Iterable[str] = getattr(self.inner, "scopes", ())
        return frozenset(scopes)


class PassThroughHeaders:
    """Records ``names`` (header names) of each HTTP request in its principal; ``inner`` (when
    given) authenticates first, and a request it refuses stays refused."""

    def __init__(self, names: Iterable[str], inner: Authenticator | None = None) -> None:
        self.names = tuple(name.lower() for name in names)
        self.inner = inner
        metadata = getattr(inner, "metadata_response", None)
        if metadata is not None:
            # The endpoint serves the wrapped authenticator's metadata document.
            self.metadata_response = metadata

    async def authenticate(self, request: HttpRequest) -> Principal | Refusal | None:
        inner: Principal | None = None
        if self.inner is not None:
            admitted = await self.inner.authenticate(request)
            if admitted is None or isinstance(admitted, Refusal):
                return admitted
            inner = admitted
        wanted = set(self.names)
        headers: dict[str, str] = {}
        for name, value in request.headers:
            key = (name.decode("latin-1") if isinstance(name, bytes) else name).lower()
            if key in wanted and key not in headers:
                headers[key] = value.decode("latin-1") if isinstance(value, bytes) else value
        if inner is not None:
            subject = inner.subject
        elif headers:
            digest = hashlib.sha256(repr(sorted(headers.items())).encode("utf-8")).hexdigest()
            subject = f"headers:{digest[:32]}"
        else:
            # No credential at all: one principal for every such client would let each see
            # the others' sessions and tasks; an anonymous client is known by its address.
            subject = f"address:{request.client[0] if request.client else 'unknown'}"
        return HeaderPrincipal(subject, headers, inner)

    def challenge(self, request: HttpRequest) -> bytes:
        if self.inner is not None:
            return self.inner.challenge(request)
        return b'Bearer realm="mcp"'


def forwarded_headers(principal: Any, names: Sequence[str]) -> list[tuple[str, str]]:
    """The headers named ``names`` that ``principal`` (a :class:`HeaderPrincipal`) carries."""
    if not names or not isinstance(principal, HeaderPrincipal):
        return []
    return [
        (name, principal.headers[name.lower()])
        for name in names
        if name.lower() in principal.headers
    ]


@dataclass(frozen=True, kw_only=True)
class PassThroughServing(ServingOptions):
    """Serving options whose endpoint records ``pass_headers`` (``mcptrio run --openapi
    --forward-header``): its authenticator, if any, is wrapped in :class:`PassThroughHeaders`."""

    pass_headers: tuple[str, ...] = ()

    @classmethod
    def of(cls, serving: ServingOptions, names: Sequence[str]) -> PassThroughServing:
        given = {f.name: getattr(serving, f.name) for f in fields(ServingOptions)}
        return cls(**given, pass_headers=tuple(names))

    def security(self) -> HttpSecurity:
        security = super().security()
        if self.pass_headers:
            security.authenticator = PassThroughHeaders(self.pass_headers, security.authenticator)
        return security
