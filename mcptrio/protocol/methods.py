"""The method registry: every request and notification of the four handshake-era revisions.

:data:`METHODS` maps a JSON-RPC method name to its :class:`MethodSpec`: the params struct, whether
it is a request or a notification, who may send it, the revisions that define it and the
capability that gates it.

Gating, as in the specification (CHECKLIST §3-4):

- A **request** is gated on the *receiver's* capabilities: ``tools/call`` needs the server's
  ``tools``, ``sampling/createMessage`` the client's ``sampling``, and so on.
- A server **notification** about a server feature is gated on the *sender's* (server's)
  capabilities: ``notifications/message`` on ``logging``, ``*/list_changed`` on
  ``<feature>.listChanged``, ``notifications/resources/updated`` on ``resources.subscribe``.
  ``notifications/roots/list_changed`` is gated on the client's ``roots.listChanged``, and
  ``notifications/elicitation/complete`` on the client's ``elicitation.url`` (it only follows a
  URL-mode elicitation).
- ``initialize``, ``ping``, ``notifications/initialized``, ``notifications/cancelled``,
  ``notifications/progress`` and ``notifications/tasks/status`` are ungated.
- ``tasks/*`` (2025-11-25) can be sent by either side and are gated on the *receiver's* ``tasks``
  capability (``tasks.list`` / ``tasks.cancel`` for those two). Since the receiver depends on the
  direction, their ``capability_of`` is ``None``; :meth:`MethodSpec.gate_owner` resolves it.
- ``completion/complete`` is gated on the server's ``completions`` only from 2025-03-26
  (``capability_since``); 2024-11-05 defines no such capability.

Capability paths use the wire (camelCase) member names, e.g. ``("resources", "listChanged")``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

from .base import Notification, Request
from .types import (
    CallToolRequest,
    CancelledNotification,
    CancelTaskRequest,
    CompleteRequest,
    CreateMessageRequest,
    ElicitationCompleteNotification,
    ElicitRequest,
    GetPromptRequest,
    GetTaskPayloadRequest,
    GetTaskRequest,
    InitializedNotification,
    InitializeRequest,
    ListPromptsRequest,
    ListResourcesRequest,
    ListResourceTemplatesRequest,
    ListRootsRequest,
    ListTasksRequest,
    ListToolsRequest,
    LoggingMessageNotification,
    PingRequest,
    ProgressNotification,
    PromptListChangedNotification,
    ReadResourceRequest,
    ResourceListChangedNotification,
    ResourceUpdatedNotification,
    RootsListChangedNotification,
    SetLevelRequest,
    SubscribeRequest,
    TaskStatusNotification,
    ToolListChangedNotification,
    UnsubscribeRequest,
)

__all__ = ["ALL_REVISIONS", "METHODS", "MethodSpec", "spec_for"]

#: The four handshake-era revisions, oldest first.
ALL_REVISIONS: Final[tuple[str, ...]] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

Side = Literal["client", "server"]


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """What the protocol says about one method.

    ``capability`` is the path of the gating capability (``None``: ungated) and
    ``capability_of`` whose declared capabilities hold it. ``capability_of`` is ``None`` for an
    ungated method, and also for the ``tasks/*`` requests, which either side may send and which
    are gated on the receiver's capabilities: use :meth:`gate_owner` to resolve it.
    """

    method: str
    params: type[Request[Any]] | type[Notification]
    kind: Literal["request", "notification"]
    sender: Literal["client", "server", "both"]
    revisions: frozenset[str]
    capability: tuple[str, ...] | None
    capability_of: Side | None
    capability_since: str | None = None
    params_required: bool = True

    def gate_owner(self, sender: Side) -> Side | None:
        """Whose capabilities gate this method when ``sender`` sends it (``None``: ungated)."""
        if self.capability is None:
            return None
        if self.capability_of is not None:
            return self.capability_of
        # Both-direction requests are gated on the receiver.
        return "server" if sender == "client" else "client"

    def gated_in(self, revision: str) -> bool:
        """Whether the capability gate applies in ``revision``."""
        if self.capability is None:
            return False
        return self.capability_since is None or revision >= self.capability_since


_ALL = frozenset(ALL_REVISIONS)
_FROM_2025_06_18 = frozenset({"2025-06-18", "2025-11-25"})
_ONLY_2025_11_25 = frozenset({"2025-11-25"})


def _request(
    params: type[Request[Any]],
    sender: Literal["client", "server", "both"],
    capability: tuple[str, ...] | None = None,
    capability_of: Side | None = None,
    *,
    revisions: frozenset[str] = _ALL,
    capability_since: str | None = None,
    params_required: bool = True,
) -> MethodSpec:
    return MethodSpec(
        method=params.METHOD,
        params=params,
        kind="request",
        sender=sender,
        revisions=revisions,
        capability=capability,
        capability_of=capability_of,
        capability_since=capability_since,
        params_required=params_required,
    )


def _notification(
    params: type[Notification],
    sender: Literal["client", "server", "both"],
    capability: tuple[str, ...] | None = None,
    capability_of: Side | None = None,
    *,
    revisions: frozenset[str] = _ALL,
    params_required: bool = True,
) -> MethodSpec:
    return MethodSpec(
        method=params.METHOD,
        params=params,
        kind="notification",
        sender=sender,
        revisions=revisions,
        capability=capability,
        capability_of=capability_of,
        params_required=params_required,
    )


_SPECS: tuple[MethodSpec, ...] = (
    # --- requests, client to server ---
    _request(InitializeRequest, "client"),
    _request(PingRequest, "both", params_required=False),
    _request(ListResourcesRequest, "client", ("resources",), "server", params_required=False),
    _request(
        ListResourceTemplatesRequest, "client", ("resources",), "server", params_required=False
    ),
    _request(ReadResourceRequest, "client", ("resources",), "server"),
    _request(SubscribeRequest, "client", ("resources", "subscribe"), "server"),
    _request(UnsubscribeRequest, "client", ("resources", "subscribe"), "server"),
    _request(ListPromptsRequest, "client", ("prompts",), "server", params_required=False),
    _request(GetPromptRequest, "client", ("prompts",), "server"),
    _request(ListToolsRequest, "client", ("tools",), "server", params_required=False),
    _request(CallToolRequest, "client", ("tools",), "server"),
    _request(SetLevelRequest, "client", ("logging",), "server"),
    _request(CompleteRequest, "client", ("completions",), "server", capability_since="2025-03-26"),
    # --- requests, server to client ---
    _request(CreateMessageRequest, "server", ("sampling",), "client"),
    _request(ListRootsRequest, "server", ("roots",), "client", params_required=False),
    _request(ElicitRequest, "server", ("elicitation",), "client", revisions=_FROM_2025_06_18),
    # --- requests, either direction (2025-11-25), gated on the receiver ---
    _request(GetTaskRequest, "both", ("tasks",), revisions=_ONLY_2025_11_25),
    _request(GetTaskPayloadRequest, "both", ("tasks",), revisions=_ONLY_2025_11_25),
    _request(
        ListTasksRequest,
        "both",
        ("tasks", "list"),
        revisions=_ONLY_2025_11_25,
        params_required=False,
    ),
    _request(CancelTaskRequest, "both", ("tasks", "cancel"), revisions=_ONLY_2025_11_25),
    # --- notifications ---
    _notification(InitializedNotification, "client", params_required=False),
    _notification(CancelledNotification, "both"),
    _notification(ProgressNotification, "both"),
    _notification(LoggingMessageNotification, "server", ("logging",), "server"),
    _notification(
        ResourceListChangedNotification,
        "server",
        ("resources", "listChanged"),
        "server",
        params_required=False,
    ),
    _notification(ResourceUpdatedNotification, "server", ("resources", "subscribe"), "server"),
    _notification(
        PromptListChangedNotification,
        "server",
        ("prompts", "listChanged"),
        "server",
        params_required=False,
    ),
    _notification(
        ToolListChangedNotification,
        "server",
        ("tools", "listChanged"),
        "server",
        params_required=False,
    ),
    _notification(
        RootsListChangedNotification,
        "client",
        ("roots", "listChanged"),
        "client",
        params_required=False,
    ),
    _notification(TaskStatusNotification, "both", revisions=_ONLY_2025_11_25),
    _notification(
        ElicitationCompleteNotification,
        "server",
        ("elicitation", "url"),
        "client",
        revisions=_ONLY_2025_11_25,
    ),
)

#: Every request and notification of the four revisions, by method name.
METHODS: Final[dict[str, MethodSpec]] = {spec.method: spec for spec in _SPECS}


def spec_for(method: str) -> MethodSpec | None:
    """The :class:`MethodSpec` of ``method``, or ``None`` for a method MCP does not define."""
    return METHODS.get(method)
