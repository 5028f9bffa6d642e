"""The method registry: every request and notification of the revisions mcptrio speaks.

:data:`METHODS` maps a JSON-RPC method name to its :class:`MethodSpec`: the params struct, whether
it is a request or a notification, who may send it, the revisions that define it and the
capability that gates it. Which revisions define a method is read from the revision table
(:mod:`mcptrio.protocol.revisions`) through the feature it belongs to, never from dates.

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
- ``completion/complete`` is gated on the server's ``completions`` only in revisions that have
  that capability (``gated_revisions``); 2024-11-05 defines none.

Capability paths use the wire (camelCase) member names, e.g. ``("resources", "listChanged")``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Literal

from . import skills_extension as skills
from . import tasks_extension as ext
from .base import Notification, Request
from .declared import capability_declared as capability_declared
from .declared import extension_declared as extension_declared
from .declared import extension_settings
from .revisions import REVISIONS, Revision
from .types import (
    CallToolRequest,
    CancelledNotification,
    CancelTaskRequest,
    CompleteRequest,
    CreateMessageRequest,
    DiscoverRequest,
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
    SubscriptionsAcknowledgedNotification,
    SubscriptionsListenRequest,
    TaskStatusNotification,
    ToolListChangedNotification,
    UnsubscribeRequest,
)

__all__ = [
    "EXTENSION_METHODS",
    "METHODS",
    "MethodSpec",
    "Side",
    "capability_declared",
    "extension_declared",
    "extension_open",
    "spec_at",
    "spec_for",
]

#: One side of a session.
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
    #: The revisions where ``capability`` gates the method (``None``: every one).
    gated_revisions: frozenset[str] | None = None
    params_required: bool = True
    #: The extension that defines the method (``None``: the core protocol). Both sides must
    #: declare it: the server in its capabilities, the client in the request's ``_meta``.
    extension: str | None = None
    #: A setting of ``extension`` the server must declare true (``directoryRead``).
    extension_setting: str | None = None

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
        return self.gated_revisions is None or revision in self.gated_revisions


def _having(feature: Callable[[Revision], bool]) -> frozenset[str]:
    """The versions of the revisions that have ``feature``."""
    return frozenset(revision.version for revision in REVISIONS if feature(revision))


_ALL = _having(lambda r: True)
#: Methods of the handshake era only (CHECKLIST section 3 marks them removed in 2026-07-28).
_HANDSHAKE = _having(lambda r: r.era == "handshake")
#: Methods of the stateless era only (2026-07-28).
_STATELESS = _having(lambda r: r.era == "stateless")
_ELICITATION = _having(lambda r: r.elicitation and r.era == "handshake")
_URL_ELICITATION = _having(lambda r: r.elicitation_ids)
_TASKS = _having(lambda r: r.tasks)


def _spec(
    params: type[Request[Any]] | type[Notification],
    sender: Literal["client", "server", "both"],
    capability: tuple[str, ...] | None = None,
    capability_of: Side | None = None,
    *,
    revisions: frozenset[str] = _ALL,
    gated_revisions: frozenset[str] | None = None,
    params_required: bool = True,
    extension: str | None = None,
    extension_setting: str | None = None,
) -> MethodSpec:
    return MethodSpec(
        method=params.METHOD,
        params=params,
        kind="request" if issubclass(params, Request) else "notification",
        sender=sender,
        revisions=revisions,
        capability=capability,
        capability_of=capability_of,
        gated_revisions=gated_revisions,
        params_required=params_required,
        extension=extension,
        extension_setting=extension_setting,
    )


_SPECS: tuple[MethodSpec, ...] = (
    # --- requests, client to server ---
    _spec(InitializeRequest, "client", revisions=_HANDSHAKE),
    _spec(PingRequest, "both", revisions=_HANDSHAKE, params_required=False),
    _spec(DiscoverRequest, "client", revisions=_STATELESS),
    # Each filter entry needs its server capability: the listen handler honours what it can.
    _spec(SubscriptionsListenRequest, "client", revisions=_STATELESS),
    _spec(ListResourcesRequest, "client", ("resources",), "server", params_required=False),
    _spec(ListResourceTemplatesRequest, "client", ("resources",), "server", params_required=False),
    _spec(ReadResourceRequest, "client", ("resources",), "server"),
    _spec(SubscribeRequest, "client", ("resources", "subscribe"), "server", revisions=_HANDSHAKE),
    _spec(UnsubscribeRequest, "client", ("resources", "subscribe"), "server", revisions=_HANDSHAKE),
    _spec(ListPromptsRequest, "client", ("prompts",), "server", params_required=False),
    _spec(GetPromptRequest, "client", ("prompts",), "server"),
    _spec(ListToolsRequest, "client", ("tools",), "server", params_required=False),
    _spec(CallToolRequest, "client", ("tools",), "server"),
    _spec(SetLevelRequest, "client", ("logging",), "server", revisions=_HANDSHAKE),
    _spec(
        CompleteRequest,
        "client",
        ("completions",),
        "server",
        gated_revisions=_having(lambda r: r.completions_capability),
    ),
    # --- requests, server to client (2026-07-28 embeds them in results instead) ---
    _spec(CreateMessageRequest, "server", ("sampling",), "client", revisions=_HANDSHAKE),
    _spec(
        ListRootsRequest,
        "server",
        ("roots",),
        "client",
        revisions=_HANDSHAKE,
        params_required=False,
    ),
    _spec(ElicitRequest, "server", ("elicitation",), "client", revisions=_ELICITATION),
    # --- requests, either direction, gated on the receiver ---
    _spec(GetTaskRequest, "both", ("tasks",), revisions=_TASKS),
    _spec(GetTaskPayloadRequest, "both", ("tasks",), revisions=_TASKS),
    _spec(ListTasksRequest, "both", ("tasks", "list"), revisions=_TASKS, params_required=False),
    _spec(CancelTaskRequest, "both", ("tasks", "cancel"), revisions=_TASKS),
    # --- notifications ---
    _spec(InitializedNotification, "client", revisions=_HANDSHAKE, params_required=False),
    _spec(CancelledNotification, "both"),
    _spec(ProgressNotification, "both"),
    _spec(LoggingMessageNotification, "server", ("logging",), "server"),
    _spec(
        ResourceListChangedNotification,
        "server",
        ("resources", "listChanged"),
        "server",
        params_required=False,
    ),
    _spec(ResourceUpdatedNotification, "server", ("resources", "subscribe"), "server"),
    _spec(
        PromptListChangedNotification,
        "server",
        ("prompts", "listChanged"),
        "server",
        params_required=False,
    ),
    _spec(
        ToolListChangedNotification,
        "server",
        ("tools", "listChanged"),
        "server",
        params_required=False,
    ),
    _spec(
        RootsListChangedNotification,
        "client",
        ("roots", "listChanged"),
        "client",
        revisions=_HANDSHAKE,
        params_required=False,
    ),
    _spec(TaskStatusNotification, "both", revisions=_TASKS),
    _spec(SubscriptionsAcknowledgedNotification, "server", revisions=_STATELESS),
    _spec(
        ElicitationCompleteNotification,
        "server",
        ("elicitation", "url"),
        "client",
        revisions=_URL_ELICITATION,
    ),
)

#: Every request and notification of every revision's core protocol, by method name.
METHODS: Final[dict[str, MethodSpec]] = {spec.method: spec for spec in _SPECS}

_EXTENSIONS = _having(lambda r: r.extensions)

#: The methods of the extensions mcptrio speaks, by name. They exist in the revisions that have
#: extensions, and there they replace a core method of the same name (``tasks/get`` and
#: ``tasks/cancel`` of 2025-11-25): look methods up with :func:`spec_at`.
EXTENSION_METHODS: Final[dict[str, MethodSpec]] = {
    spec.method: spec
    for spec in (
        _spec(ext.GetTaskRequest, "client", revisions=_EXTENSIONS, extension=ext.EXTENSION_ID),
        _spec(ext.UpdateTaskRequest, "client", revisions=_EXTENSIONS, extension=ext.EXTENSION_ID),
        _spec(ext.CancelTaskRequest, "client", revisions=_EXTENSIONS, extension=ext.EXTENSION_ID),
        _spec(
            ext.TaskStatusNotification,
            "server",
            revisions=_EXTENSIONS,
            extension=ext.EXTENSION_ID,
        ),
        # The skills extension (SEP-2640) crosses both eras (see .extensions).
        _spec(skills.ListSkillsRequest, "client", extension=skills.EXTENSION_ID),
        _spec(skills.GetSkillRequest, "client", extension=skills.EXTENSION_ID),
        _spec(
            skills.ReadResourceDirectoryRequest,
            "client",
            extension=skills.EXTENSION_ID,
            extension_setting=skills.DIRECTORY_READ,
        ),
    )
}


def spec_for(method: str) -> MethodSpec | None:
    """The core :class:`MethodSpec` of ``method``, or ``None`` for a method MCP's core
    protocol does not define (see :func:`spec_at` for a revision's)."""
    return METHODS.get(method)


def spec_at(method: str, revision: str | None) -> MethodSpec | None:
    """The :class:`MethodSpec` of ``method`` as ``revision`` defines it: an extension's where
    the revision has that extension's methods (``None``: before the handshake, the core one
    when there is one)."""
    found = EXTENSION_METHODS.get(method)
    if found is not None:
        if revision is None:
            return METHODS.get(method) or found
        if revision in found.revisions:
            return found
    return METHODS.get(method)


def extension_open(spec: MethodSpec, server_capabilities: Any) -> bool:
    """Whether the server's capabilities offer ``spec``'s extension (and the setting it needs);
    true for a core method."""
    if spec.extension is None:
        return True
    settings = extension_settings(server_capabilities, spec.extension)
    if settings is None:
        return False
    return spec.extension_setting is None or settings.get(spec.extension_setting) is True
