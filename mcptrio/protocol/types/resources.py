"""Resources: :class:`Resource`, :class:`ResourceTemplate` and the ``resources/*`` methods.

Methods (all since 2024-11-05): ``resources/list``, ``resources/templates/list``,
``resources/read``, ``resources/subscribe``, ``resources/unsubscribe``, and the notifications
``notifications/resources/list_changed`` and ``notifications/resources/updated``.

Revision notes: ``Annotations`` on resources and templates exist throughout; ``title`` and
``_meta`` arrived in 2025-06-18 and ``icons`` in 2025-11-25. The contents returned by
``resources/read`` are :class:`~mcptrio.protocol.types.content.ResourceContents`.
"""

from __future__ import annotations

from typing import ClassVar

from ..base import (
    UNSET,
    EmptyResult,
    Meta,
    Notification,
    Request,
    Result,
    UnsetType,
    meta_field,
)
from .common import BaseMetadata, PaginatedRequest, PaginatedResult
from .content import Annotations, Icon, ResourceContents

__all__ = [
    "ListResourceTemplatesRequest",
    "ListResourceTemplatesResult",
    "ListResourcesRequest",
    "ListResourcesResult",
    "ReadResourceRequest",
    "ReadResourceResult",
    "Resource",
    "ResourceListChangedNotification",
    "ResourceTemplate",
    "ResourceUpdatedNotification",
    "SubscribeRequest",
    "UnsubscribeRequest",
]


class Resource(BaseMetadata, kw_only=True):
    """A resource the server can read. ``size`` is the raw size in bytes, if known."""

    uri: str
    description: str | UnsetType = UNSET
    mime_type: str | UnsetType = UNSET
    size: int | UnsetType = UNSET
    annotations: Annotations | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    meta: Meta | UnsetType = meta_field()


class ResourceTemplate(BaseMetadata, kw_only=True):
    """A family of resources described by an RFC 6570 URI template."""

    uri_template: str
    description: str | UnsetType = UNSET
    mime_type: str | UnsetType = UNSET
    annotations: Annotations | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    meta: Meta | UnsetType = meta_field()


class ListResourcesResult(PaginatedResult, kw_only=True):
    """The result of ``resources/list``."""

    resources: list[Resource]


class ListResourcesRequest(PaginatedRequest[ListResourcesResult], kw_only=True):
    """``resources/list``: list the server's resources (paginated)."""

    METHOD: ClassVar[str] = "resources/list"
    RESULT: ClassVar[type[Result]] = ListResourcesResult


class ListResourceTemplatesResult(PaginatedResult, kw_only=True):
    """The result of ``resources/templates/list``."""

    resource_templates: list[ResourceTemplate]


class ListResourceTemplatesRequest(PaginatedRequest[ListResourceTemplatesResult], kw_only=True):
    """``resources/templates/list``: list the server's resource templates (paginated)."""

    METHOD: ClassVar[str] = "resources/templates/list"
    RESULT: ClassVar[type[Result]] = ListResourceTemplatesResult


class ReadResourceResult(Result, kw_only=True):
    """The result of ``resources/read``."""

    contents: list[ResourceContents]


class ReadResourceRequest(Request[ReadResourceResult], kw_only=True):
    """``resources/read``: read one resource."""

    METHOD: ClassVar[str] = "resources/read"
    RESULT: ClassVar[type[Result]] = ReadResourceResult

    uri: str


class SubscribeRequest(Request[EmptyResult], kw_only=True):
    """``resources/subscribe``: ask for ``notifications/resources/updated`` about ``uri``."""

    METHOD: ClassVar[str] = "resources/subscribe"
    RESULT: ClassVar[type[Result]] = EmptyResult

    uri: str


class UnsubscribeRequest(Request[EmptyResult], kw_only=True):
    """``resources/unsubscribe``: cancel a subscription made with ``resources/subscribe``."""

    METHOD: ClassVar[str] = "resources/unsubscribe"
    RESULT: ClassVar[type[Result]] = EmptyResult

    uri: str


class ResourceListChangedNotification(Notification, kw_only=True):
    """``notifications/resources/list_changed``: the resource list changed (params optional)."""

    METHOD: ClassVar[str] = "notifications/resources/list_changed"


class ResourceUpdatedNotification(Notification, kw_only=True):
    """``notifications/resources/updated``: a subscribed resource changed."""

    METHOD: ClassVar[str] = "notifications/resources/updated"

    uri: str
