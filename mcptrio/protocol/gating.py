"""Which methods a side may receive and send: existence, lifecycle and capability gating.

A method may cross a connection only if MCP defines it with that kind (request or notification)
and that sender, the negotiated revision has it, the lifecycle allows it (before the handshake
only ``initialize`` and ``ping``; a stateless-era client sends ``server/discover`` with none),
and the capability that gates it, if any, was declared by the side that owns the gate
(:meth:`MethodSpec.gate_owner`; a gate may apply in some revisions only).

Incoming, a breach is the peer's: :func:`incoming_spec` raises the error to answer with
(-32601, or -32600 for the lifecycle). Outgoing, it is ours: :func:`check_outgoing` raises
:class:`~mcptrio.protocol.errors.CapabilityNotNegotiated` before anything is written. Both are
pure; the connection caches what they allow once the handshake has settled their inputs.
"""

from __future__ import annotations

from typing import Any

from .declared import capability_declared
from .errors import CapabilityNotNegotiated, InvalidRequest, MethodNotFound
from .methods import MethodSpec, Side, extension_open, spec_at

__all__ = ["check_offered", "check_outgoing", "gate_open", "incoming_spec"]

# Before a session is initialized only these may be sent or handled.
_PRE_INIT_METHODS = frozenset({"initialize", "ping"})
_DISCOVER = "server/discover"


def _other(role: Side) -> Side:
    return "server" if role == "client" else "client"


def gate_open(spec: MethodSpec, revision: str | None, capabilities: Any) -> bool:
    """Whether ``capabilities`` (the gate owner's) open ``spec``'s gate in ``revision``."""
    if spec.capability is None or not spec.gated_in(revision or ""):
        return True
    return capability_declared(capabilities, spec.capability)


def incoming_spec(
    method: str, kind: str, *, role: Side, revision: str | None, capabilities: Any
) -> MethodSpec:
    """The spec of a ``kind`` of ``method`` that ``role`` (with ``capabilities``) received.

    Raises :class:`MethodNotFound` or :class:`InvalidRequest` when it may not be handled.
    """
    peer = _other(role)
    spec = spec_at(method, revision)
    if (
        spec is None
        or spec.kind != kind
        or spec.sender not in (peer, "both")
        or (revision is not None and revision not in spec.revisions)
    ):
        raise MethodNotFound(f"Method not found: {method}")
    if revision is None and method not in _PRE_INIT_METHODS and role == "server":
        raise InvalidRequest(f"Received {method!r} before initialization")
    if revision is not None and method == "initialize":
        raise InvalidRequest("The session is already initialized")
    check_offered(spec, role, revision, capabilities)
    return spec


def check_offered(
    spec: MethodSpec, receiver: Side, revision: str | None, capabilities: Any
) -> None:
    """Raise :class:`MethodNotFound` unless ``receiver``'s own ``capabilities`` offer what a
    request of ``spec`` needs in ``revision``: on a server, the extension that defines it (with
    the setting it needs); on either side, the capability that gates it, if ``receiver`` owns
    that gate."""
    if receiver == "server" and not extension_open(spec, capabilities):
        raise MethodNotFound(
            f"Method not supported: {spec.method} (extension {spec.extension}"
            f"{'' if spec.extension_setting is None else '.' + spec.extension_setting}"
            " is not offered)"
        )
    if spec.gate_owner(_other(receiver)) == receiver and not gate_open(
        spec, revision, capabilities
    ):
        raise MethodNotFound(
            f"Method not supported: {spec.method} (capability"
            f" {'.'.join(spec.capability or ())} was not declared)"
        )


def check_outgoing(
    method: str,
    kind: str,
    *,
    role: Side,
    revision: str | None,
    capabilities: Any,
    peer_capabilities: Any,
) -> None:
    """Raise :class:`CapabilityNotNegotiated` unless ``role`` may send a ``kind`` of ``method``.

    ``capabilities`` are the sender's, ``peer_capabilities`` the receiver's (``None`` before
    the handshake).
    """
    spec = spec_at(method, revision)
    if spec is None or spec.kind != kind or spec.sender not in (role, "both"):
        raise CapabilityNotNegotiated(f"A {role} does not send {method!r}")
    if revision is None:
        # server/discover is the stateless era's probe: it needs no handshake.
        if method not in _PRE_INIT_METHODS and kind == "request" and method != _DISCOVER:
            raise CapabilityNotNegotiated(f"Cannot send {method!r} before initialization")
        return
    if revision not in spec.revisions:
        raise CapabilityNotNegotiated(f"{method!r} does not exist in revision {revision}")
    if spec.extension is not None:
        # An extension's methods need the server to have declared it (the client declares it
        # on each request, in the _meta its connection adds).
        server = capabilities if role == "server" else peer_capabilities
        if not extension_open(spec, server):
            setting = "" if spec.extension_setting is None else f" with {spec.extension_setting}"
            raise CapabilityNotNegotiated(
                f"Cannot send {method!r}: the server did not declare extension"
                f" {spec.extension}{setting}"
            )
    gate_owner = spec.gate_owner(role)
    owner = capabilities if gate_owner == role else peer_capabilities
    if gate_owner is not None and not gate_open(spec, revision, owner):
        whose = "this side" if gate_owner == role else f"the {_other(role)}"
        raise CapabilityNotNegotiated(
            f"Cannot send {method!r}: {whose} did not declare"
            f" capability {'.'.join(spec.capability or ())}"
        )
