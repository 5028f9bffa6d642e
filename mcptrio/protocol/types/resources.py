"""Resources: :class:`Resource`, :class:`ResourceTemplate`, :class:`ResourceContents`, resource
links and the ``resources/*`` methods.

Methods (all since 2024-11-05): ``resources/list``, ``resources/templates/list``,
``resources/read``, ``resources/subscribe``, ``resources/unsubscribe``, and the notifications
``notifications/resources/list_changed`` and ``notifications/resources/updated``.

Revision notes: ``Annotations`` on resources and templates exist throughout; ``title`` and
``_meta`` arrived in 2025-06-18 and ``icons`` in 2025-11-25. A :class:`ResourceLink` (a content
block, 2025-06-18+) is a ``Resource`` with ``type: "resource_link"``, as in the schema.

Resource contents: the schema's ``TextResourceContents | BlobResourceContents`` is not a tagged
union (the two differ only by which of ``text`` / ``blob`` is present), and msgspec cannot decode
an untagged union of structs. Both are therefore one struct, :class:`ResourceContents`, with
optional ``text`` and ``blob`` of which at least one must be present (checked on construction
and on decode). ``TextResourceContents`` and ``BlobResourceContents`` are aliases of it, so
``TextResourceContents(uri=..., text=...)`` reads like the schema and round-trips unchanged.
``_meta`` on contents is 2025-06-18+.
"""

from __future__ import annotations

from typing import TypeAlias

from ..base import EmptyResult, HasMeta, Notification, Request, Result
from .common import (
    Annotations,
    CacheablePaginatedResult,
    CacheScope,
    Described,
    PaginatedRequest,
)
from .input_required import InputResponseRequest

__all__ = [
    "BlobResourceContents",
    "ListResourceTemplatesRequest",
    "ListResourceTemplatesResult",
    "ListResourcesRequest",
    "ListResourcesResult",
    "ReadResourceRequest",
    "ReadResourceResult",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "ResourceListChangedNotification",
    "ResourceTemplate",
    "ResourceUpdatedNotification",
    "SubscribeRequest",
    "TextResourceContents",
    "UnsubscribeRequest",
]


class ResourceContents(HasMeta, kw_only=True):
    """The contents of a resource: text (``text``) or binary data (``blob``, base64).

    Stands for the schema's ``TextResourceContents`` and ``BlobResourceContents`` (see the
    module docstring).
    """

    uri: str
    mime_type: str | None = None
    text: str | None = None
    blob: str | None = None

    def __post_init__(self) -> None:
        if self.text is None and self.blob is None:
            raise ValueError("resource contents need `text` or `blob`")

    @property
    def is_text(self) -> bool:
        """Whether these are text contents (``TextResourceContents``)."""
        return self.text is not None

    @property
    def is_blob(self) -> bool:
        """Whether these are binary contents (``BlobResourceContents``)."""
        return self.text is None and self.blob is not None


#: Text contents of a resource: build with ``uri`` and ``text``.
TextResourceContents: TypeAlias = ResourceContents
#: Binary contents of a resource: build with ``uri`` and ``blob`` (base64).
BlobResourceContents: TypeAlias = ResourceContents


class Resource(Described, kw_only=True):
    """A resource the server can read. ``size`` is the raw size in bytes, if known."""

    uri: str
    mime_type: str | None = None
    size: int | None = None
    annotations: Annotations | None = None


class ResourceLink(Resource, kw_only=True, tag_field="type", tag="resource_link"):
    """A link to a resource the server can read, as a content block (2025-06-18+)."""


class ResourceTemplate(Described, kw_only=True):
    """A family of resources described by an RFC 6570 URI template."""

    uri_template: str
    mime_type: str | None = None
    annotations: Annotations | None = None


class ListResourcesResult(CacheablePaginatedResult, kw_only=True):
    """The result of ``resources/list``."""

    resources: list[Resource]


class ListResourcesRequest(PaginatedRequest[ListResourcesResult], kw_only=True):
    """``resources/list``: list the server's resources (paginated)."""

    METHOD = "resources/list"


class ListResourceTemplatesResult(CacheablePaginatedResult, kw_only=True):
    """The result of ``resources/templates/list``."""

    resource_templates: list[ResourceTemplate]


class ListResourceTemplatesRequest(PaginatedRequest[ListResourceTemplatesResult], kw_only=True):
    """``resources/templates/list``: list the server's resource templates (paginated)."""

    METHOD = "resources/templates/list"


class ReadResourceResult(Result, kw_only=True):
    """The result of ``resources/read``."""

    contents: list[ResourceContents]
    ttl_ms: int | None = None
    cache_scope: CacheScope | None = None


class ReadResourceRequest(InputResponseRequest[ReadResourceResult], kw_only=True):
    """``resources/read``: read one resource."""

    METHOD = "resources/read"

    uri: str


class SubscribeRequest(Request[EmptyResult], kw_only=True):
    """``resources/subscribe``: ask for ``notifications/resources/updated`` about ``uri``."""

    METHOD = "resources/subscribe"

    uri: str


class UnsubscribeRequest(Request[EmptyResult], kw_only=True):
    """``resources/unsubscribe``: cancel a subscription made with ``resources/subscribe``."""

    METHOD = "resources/unsubscribe"

    uri: str


class ResourceListChangedNotification(Notification, kw_only=True):
    """``notifications/resources/list_changed``: the resource list changed (params optional)."""

    METHOD = "notifications/resources/list_changed"


class ResourceUpdatedNotification(Notification, kw_only=True):
    """``notifications/resources/updated``: a subscribed resource changed."""

    METHOD = "notifications/resources/updated"

    uri: str
