"""The handshake and discovery part of :class:`~.connection.Connection`: :class:`Handshake`.

A base of ``Connection`` (free per message: a method found on a base costs what one on the
class costs), holding what settles a connection's revision and answers the peer's opening:

- a client's ``initialize`` request, offering its latest handshake-era revision, and a server's
  answer to one (the revision chosen, both messages fitted to it, the peer's capabilities kept);
- a connection started without a handshake: a server whose ``initialize`` another connection
  already answered (a stateless HTTP server), or a stateless-era client whose every request
  carries its ``_meta``;
- a server's answer to ``server/discover``, and its own info on the wire.

Every state it writes is ``Connection``'s (declared there); the per-message paths stay in
``connection.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import UnsetType

from . import codec
from . import events as ev
from .base import RequestId, Result
from .fitting import Step, check_incoming, fit_outgoing, incoming_step, outgoing_step
from .request_meta import RequestMeta
from .revisions import Revision, choose_server_revision, handshake_versions, revision_of
from .stateless import discover_result
from .types import (
    ClientCapabilities,
    Implementation,
    InitializeRequest,
    InitializeResult,
    ServerCapabilities,
)

if TYPE_CHECKING:
    from .methods import Side
    from .types.common import CacheScope

__all__ = ["Handshake"]


class Handshake:
    """Settling the revision, with or without ``initialize``; see the module docstring."""

    if TYPE_CHECKING:
        # The state of ``Connection`` this part reads and writes.
        role: Side
        info: Implementation
        capabilities: ClientCapabilities | ServerCapabilities
        instructions: str | None
        supported: tuple[str, ...]
        cache_hints: tuple[int, CacheScope] | None
        revision: str | None
        features: Revision | None
        _fit_out: Step | None
        _check_in: Step | None
        peer_info: Implementation | None
        peer_capabilities: ClientCapabilities | ServerCapabilities | None
        initialized_notified: bool
        request_meta: RequestMeta | None
        _allowed_out: set[tuple[str, str, str]] | None
        _server_info_wire: dict[str, Any] | None

        def respond(self, rid: RequestId, result: Result) -> bytes | None: ...

    def _negotiated(self, revision: str) -> None:
        features = revision_of(revision)
        self.revision = revision
        self.features = features
        self._fit_out = outgoing_step(features)
        self._check_in = incoming_step(features)

    def start_initialized(self, revision: str) -> None:
        """Act as a server whose ``initialize`` already negotiated ``revision``.

        For a stateless HTTP server, where each POST gets a fresh connection: the client's
        capabilities are unknown there, so none are assumed (requests to the client are refused).
        """
        if self.role != "server" or self.revision is not None:
            raise RuntimeError("start_initialized is for a fresh server-side connection")
        if revision not in self.supported:
            raise ValueError(f"Unsupported protocol revision {revision!r}")
        self._negotiated(revision)
        self.peer_capabilities = ClientCapabilities()
        self.initialized_notified = True

    def start_stateless(
        self, meta: RequestMeta, server_capabilities: ServerCapabilities | None = None
    ) -> None:
        """Act as a client of the stateless era: every request carries ``meta``.

        ``server_capabilities`` (from ``server/discover``) gate what may be sent.
        """
        if self.role != "client":
            raise RuntimeError("start_stateless is for the client side")
        self._negotiated(meta.revision.version)
        self.request_meta = meta
        self.peer_capabilities = server_capabilities or ServerCapabilities()
        self._allowed_out = None

    def initialize_request(self) -> InitializeRequest:
        """The ``initialize`` request a client opens with, offering its latest revision."""
        assert isinstance(self.capabilities, ClientCapabilities)
        return InitializeRequest(
            protocol_version=handshake_versions(self.supported)[0],
            capabilities=self.capabilities,
            client_info=self.info,
        )

    def _answer_initialize(self, rid: RequestId, raw: msgspec.Raw | UnsetType) -> list[ev.Event]:
        request = codec.decode_body(raw, InitializeRequest)
        revision = choose_server_revision(request.protocol_version, self.supported)
        assert isinstance(self.capabilities, ServerCapabilities)
        result = InitializeResult(
            protocol_version=revision,
            capabilities=self.capabilities,
            server_info=self.info,
            instructions=self.instructions,
        )
        features = revision_of(revision)
        request = check_incoming(request, features)
        result = fit_outgoing(result, features)
        self._negotiated(revision)
        self.peer_info = request.client_info
        self.peer_capabilities = request.capabilities
        return [ev.Reply(codec.encode_result(rid, result), rid), ev.HandshakeComplete(revision)]

    def _answer_discover(self, rid: RequestId) -> bytes:
        """The answer to stateless-era ``server/discover`` request ``rid`` (taken in flight)."""
        assert isinstance(self.capabilities, ServerCapabilities)
        result = discover_result(
            self.supported, self.capabilities, self.instructions, self.cache_hints
        )
        data = self.respond(rid, result)
        assert data is not None
        return data

    def _server_info(self) -> dict[str, Any]:
        info = self._server_info_wire
        if info is None:
            info = self._server_info_wire = msgspec.to_builtins(self.info)
        return info
