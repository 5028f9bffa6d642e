"""Who a request is, for :class:`PassThroughHeaders`: the headers it passes on, or, with none of
them, its client's address, so that anonymous clients never share sessions or tasks."""

from __future__ import annotations

from dataclasses import dataclass, field

from mcptrio.openapi.pass_through import HeaderPrincipal, PassThroughHeaders


@dataclass
class Request:
    """The part of an HTTP request an authenticator reads."""

    client: tuple[str, int] | None
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)


async def subject(request: Request) -> str:
    principal = await PassThroughHeaders(["x-api-key"]).authenticate(request)  # type: ignore[arg-type]
    assert isinstance(principal, HeaderPrincipal)
    return principal.subject


async def test_clients_without_the_headers_are_told_apart_by_address() -> None:
    first = await subject(Request(("127.0.0.1", 5000)))
    second = await subject(Request(("127.0.0.2", 5000)))
    assert first != second
    assert first == await subject(Request(("127.0.0.1", 6000)))


async def test_clients_with_the_same_key_are_one_principal_wherever_they_are() -> None:
    key = [(b"x-api-key", b"k1")]
    assert await subject(Request(("127.0.0.1", 1), key)) == await subject(
        Request(("127.0.0.2", 1), key)
    )
    other = [(b"x-api-key", b"k2")]
    assert await subject(Request(("127.0.0.1", 1), key)) != await subject(
        Request(("127.0.0.1", 1), other)
    )
