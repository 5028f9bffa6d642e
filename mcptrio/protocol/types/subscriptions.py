"""``subscriptions/listen`` (2026-07-28): the one long-lived stream of server notifications.

It replaces the handshake era's GET stream and ``resources/subscribe``. The client names what it
wants in a :class:`SubscriptionFilter`; the server first acknowledges the part it honours, then
sends only those notifications, each tagged with the listen request's id in
``_meta["io.modelcontextprotocol/subscriptionId"]``, until the client ends the stream or the
server ends it with a :class:`SubscriptionsListenResult`.
"""

from __future__ import annotations

from ..base import Notification, Request, Result, WireStruct

__all__ = [
    "SubscriptionFilter",
    "SubscriptionsAcknowledgedNotification",
    "SubscriptionsListenRequest",
    "SubscriptionsListenResult",
]


class SubscriptionFilter(WireStruct, kw_only=True):
    """The notification kinds a listen stream opts in to (each is opt-in)."""

    tools_list_changed: bool | None = None
    prompts_list_changed: bool | None = None
    resources_list_changed: bool | None = None
    resource_subscriptions: list[str] | None = None
    #: ``notifications/tasks`` for these task ids (the tasks extension, SEP-2663: the listen
    #: request must declare ``io.modelcontextprotocol/tasks``).
    task_ids: list[str] | None = None


class SubscriptionsListenResult(Result, kw_only=True):
    """Ends a listen stream gracefully (server shutdown); ``_meta`` names the subscription."""


class SubscriptionsListenRequest(Request[SubscriptionsListenResult], kw_only=True):
    """``subscriptions/listen``: open a notification stream for ``notifications``."""

    METHOD = "subscriptions/listen"

    notifications: SubscriptionFilter


class SubscriptionsAcknowledgedNotification(Notification, kw_only=True):
    """The first message of a listen stream: the part of the filter the server honours."""

    METHOD = "notifications/subscriptions/acknowledged"

    notifications: SubscriptionFilter
