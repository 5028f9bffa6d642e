"""Lifecycle: implementation info, capabilities, ``initialize``, ``ping``, cancel and progress.

- :class:`Implementation`: ``name`` + ``version`` (2024-11-05); ``title`` (2025-06-18);
  ``description``, ``icons``, ``websiteUrl`` (2025-11-25).
- :class:`ClientCapabilities`: ``experimental``, ``roots`` and ``sampling`` (2024-11-05),
  ``elicitation`` (2025-06-18; ``form`` / ``url`` modes in 2025-11-25), ``tasks`` (2025-11-25).
  ``sampling`` gained ``context`` and ``tools`` in 2025-11-25.
- :class:`ServerCapabilities`: ``experimental``, ``logging``, ``prompts``, ``resources``,
  ``tools`` (2024-11-05), ``completions`` (2025-03-26), ``tasks`` (2025-11-25).
- ``initialize`` (:class:`InitializeRequest` -> :class:`InitializeResult`),
  ``notifications/initialized`` (:class:`InitializedNotification`), ``ping``
  (:class:`PingRequest` -> :class:`~mcptrio.protocol.base.EmptyResult`),
  ``notifications/cancelled`` (:class:`CancelledNotification`; ``requestId`` became optional in
  2025-11-25) and ``notifications/progress`` (:class:`ProgressNotification`; ``message`` is
  2025-03-26+).

Capabilities whose schema is an open object (``logging``, ``completions``, ``sampling.context``,
``elicitation.form``, the ``tasks`` leaves, ``experimental`` entries) are ``dict[str, Any]``: a
declared ``{}`` round-trips as ``{}`` and stays distinct from an absent member. Capabilities
with known keys have their own structs; an empty struct encodes as ``{}`` too.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from ..base import (
    EmptyResult,
    Notification,
    ProgressToken,
    Request,
    RequestId,
    Result,
    WireStruct,
)
from .common import BaseMetadata, Icon

__all__ = [
    "CancelledNotification",
    "ClientCapabilities",
    "ClientTaskRequestsCapability",
    "ClientTasksCapability",
    "ElicitationCapability",
    "Implementation",
    "InitializeRequest",
    "InitializeResult",
    "InitializedNotification",
    "PingRequest",
    "ProgressNotification",
    "PromptsCapability",
    "ResourcesCapability",
    "RootsCapability",
    "SamplingCapability",
    "ServerCapabilities",
    "ServerTaskRequestsCapability",
    "ServerTasksCapability",
    "TaskElicitationCapability",
    "TaskSamplingCapability",
    "TaskToolsCapability",
    "ToolsCapability",
]


class Implementation(BaseMetadata, kw_only=True):
    """The name and version of an MCP client or server (``clientInfo`` / ``serverInfo``)."""

    version: str
    description: str | None = None
    icons: list[Icon] | None = None
    website_url: str | None = None


# --- shapes both sides' capabilities use ---------------------------------------------------


class _ListChanged(WireStruct, kw_only=True):
    """A capability whose only member is ``listChanged``: the list change is notified."""

    list_changed: bool | None = None


_RequestsT = TypeVar("_RequestsT")


class _TasksCapability(WireStruct, Generic[_RequestsT], kw_only=True):
    """``tasks`` of either side (2025-11-25): ``list``, ``cancel`` and the requests it accepts
    as tasks."""

    cancel: dict[str, Any] | None = None
    requests: _RequestsT | None = None
    list: dict[str, Any] | None = None


class _Capabilities(WireStruct, kw_only=True):
    """What either side's capabilities may hold besides its own features: ``experimental``
    (non-standard ones, by name) and ``extensions`` (2026-07-28, SEP-2133: by identifier, with
    their settings)."""

    experimental: dict[str, dict[str, Any]] | None = None
    extensions: dict[str, dict[str, Any]] | None = None


# --- client capabilities -----------------------------------------------------------------


class RootsCapability(_ListChanged, kw_only=True):
    """Client ``roots``: the client can list roots; ``listChanged`` if it notifies changes."""


class SamplingCapability(WireStruct, kw_only=True):
    """Client ``sampling``: ``{}`` before 2025-11-25; then optional ``context`` and ``tools``."""

    context: dict[str, Any] | None = None
    tools: dict[str, Any] | None = None


class ElicitationCapability(WireStruct, kw_only=True):
    """Client ``elicitation`` (2025-06-18+): ``{}`` means form mode only; ``form`` / ``url``
    (2025-11-25) name the supported modes."""

    form: dict[str, Any] | None = None
    url: dict[str, Any] | None = None


class TaskSamplingCapability(WireStruct, kw_only=True):
    """``tasks.requests.sampling`` of a client: ``createMessage`` may be task-augmented."""

    create_message: dict[str, Any] | None = None


class TaskElicitationCapability(WireStruct, kw_only=True):
    """``tasks.requests.elicitation`` of a client: ``create`` may be task-augmented."""

    create: dict[str, Any] | None = None


class ClientTaskRequestsCapability(WireStruct, kw_only=True):
    """``tasks.requests`` of a client: which server requests it accepts as tasks."""

    sampling: TaskSamplingCapability | None = None
    elicitation: TaskElicitationCapability | None = None


class ClientTasksCapability(_TasksCapability[ClientTaskRequestsCapability], kw_only=True):
    """Client ``tasks`` (2025-11-25): ``list``, ``cancel`` and task-augmentable ``requests``."""


class ClientCapabilities(_Capabilities, kw_only=True):
    """What a client supports, sent in ``initialize``."""

    roots: RootsCapability | None = None
    sampling: SamplingCapability | None = None
    elicitation: ElicitationCapability | None = None
    tasks: ClientTasksCapability | None = None


# --- server capabilities -----------------------------------------------------------------


class PromptsCapability(_ListChanged, kw_only=True):
    """Server ``prompts``; ``listChanged`` if it sends ``notifications/prompts/list_changed``."""


class ResourcesCapability(WireStruct, kw_only=True):
    """Server ``resources``; ``subscribe`` for subscriptions, ``listChanged`` for list changes."""

    subscribe: bool | None = None
    list_changed: bool | None = None


class ToolsCapability(_ListChanged, kw_only=True):
    """Server ``tools``; ``listChanged`` if it sends ``notifications/tools/list_changed``."""


class TaskToolsCapability(WireStruct, kw_only=True):
    """``tasks.requests.tools`` of a server: ``call`` may be task-augmented."""

    call: dict[str, Any] | None = None


class ServerTaskRequestsCapability(WireStruct, kw_only=True):
    """``tasks.requests`` of a server: which client requests it accepts as tasks."""

    tools: TaskToolsCapability | None = None


class ServerTasksCapability(_TasksCapability[ServerTaskRequestsCapability], kw_only=True):
    """Server ``tasks`` (2025-11-25): ``list``, ``cancel`` and task-augmentable ``requests``."""


class ServerCapabilities(_Capabilities, kw_only=True):
    """What a server supports, returned from ``initialize``."""

    logging: dict[str, Any] | None = None
    completions: dict[str, Any] | None = None
    prompts: PromptsCapability | None = None
    resources: ResourcesCapability | None = None
    tools: ToolsCapability | None = None
    tasks: ServerTasksCapability | None = None


# --- initialize, ping, cancel, progress -----------------------------------------------------


class InitializeResult(Result, kw_only=True):
    """The server's answer to ``initialize``: the revision it chose and what it supports."""

    protocol_version: str
    capabilities: ServerCapabilities
    server_info: Implementation
    instructions: str | None = None


class InitializeRequest(Request[InitializeResult], kw_only=True):
    """``initialize``: the first request a client sends."""

    METHOD = "initialize"

    protocol_version: str
    capabilities: ClientCapabilities
    client_info: Implementation


class InitializedNotification(Notification, kw_only=True):
    """``notifications/initialized``: the client finished initialization (params optional)."""

    METHOD = "notifications/initialized"


class PingRequest(Request[EmptyResult], kw_only=True):
    """``ping``: either side checks the other is alive; the answer is ``{}``."""

    METHOD = "ping"


class CancelledNotification(Notification, kw_only=True):
    """``notifications/cancelled``: the sender cancels one of its in-flight requests.

    ``requestId`` is required up to 2025-06-18 and optional in 2025-11-25 (where this
    notification must not be used for tasks).
    """

    METHOD = "notifications/cancelled"

    request_id: RequestId | None = None
    reason: str | None = None


class ProgressNotification(Notification, kw_only=True):
    """``notifications/progress``: progress of a request that carried ``_meta.progressToken``.

    ``message`` is 2025-03-26+.
    """

    METHOD = "notifications/progress"

    progress_token: ProgressToken
    progress: float
    total: float | None = None
    message: str | None = None
