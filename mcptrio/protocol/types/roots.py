"""Roots: :class:`Root`, ``roots/list`` and ``notifications/roots/list_changed`` (2024-11-05).

``roots/list`` goes from server to client; a root's ``uri`` is a ``file://`` URI. ``_meta`` on
:class:`Root` is 2025-06-18+.
"""

from __future__ import annotations

from ..base import HasMeta, Notification, Request, Result

__all__ = ["ListRootsRequest", "ListRootsResult", "Root", "RootsListChangedNotification"]


class Root(HasMeta, kw_only=True):
    """A directory or file the server may operate on."""

    uri: str
    name: str | None = None


class ListRootsResult(Result, kw_only=True):
    """The client's answer to ``roots/list``."""

    roots: list[Root]


class ListRootsRequest(Request[ListRootsResult], kw_only=True):
    """``roots/list``: the server asks for the client's roots (params optional)."""

    METHOD = "roots/list"


class RootsListChangedNotification(Notification, kw_only=True):
    """``notifications/roots/list_changed``: the client's roots changed (params optional)."""

    METHOD = "notifications/roots/list_changed"
