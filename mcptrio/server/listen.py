"""``subscriptions/listen`` (2026-07-28): a subscription actor per listen stream.

A listen request is a request whose handler does not return while the stream is wanted. It
first acknowledges the part of the filter the server honours (what its capabilities offer:
``tools.listChanged``, ``prompts.listChanged``, ``resources.listChanged``,
``resources.subscribe``), then sends only the notifications asked for, each tagged with the
listen request's id under ``_meta["io.modelcontextprotocol/subscriptionId"]``, as they come
from the server's :mod:`subscription bus <.subscription_bus>`.

A filter naming ``taskIds`` (the tasks extension, SEP-2663) needs the listen request to declare
``io.modelcontextprotocol/tasks`` (-32021 otherwise); the acknowledgement echoes the ids the
server accepted (known tasks of the requestor), and each status change of one of them comes as a
``notifications/tasks`` carrying the whole detailed task (:mod:`.task_extension`).

It ends when the client ends it (over HTTP by closing the response stream, over stdio or
WebSocket with ``notifications/cancelled``: either cancels the handler, and nothing more is
sent) or when the server closes the bus (it then answers ``SubscriptionsListenResult``, the
graceful end the spec describes). The notifications are related to the listen request, so each
transport carries them as it carries a request's progress: on the POST's SSE stream, or
multiplexed on stdio.
"""

from __future__ import annotations

from typing import Any

import trio

from ..protocol import tasks_extension as ext
from ..protocol.base import Notification
from ..protocol.errors import InternalError, InvalidParams
from ..protocol.request_meta import SUBSCRIPTION_ID_KEY
from ..protocol.types import (
    PromptListChangedNotification,
    ResourceListChangedNotification,
    ResourceUpdatedNotification,
    ServerCapabilities,
    SubscriptionFilter,
    SubscriptionsAcknowledgedNotification,
    SubscriptionsListenRequest,
    SubscriptionsListenResult,
    ToolListChangedNotification,
)
from .handler_context import HandlerContext
from .listen_quota import ListenQuota
from .requestor import requestor_key
from .session_state import ListKind
from .subscription_bus import Change, SubscriptionBus, TooManyListeners
from .task_extension import ExtensionTasks, watch_tasks

__all__ = ["honoured_filter", "listen"]

_LIST_CHANGED: dict[ListKind, type[Notification]] = {
    "tools": ToolListChangedNotification,
    "prompts": PromptListChangedNotification,
    "resources": ResourceListChangedNotification,
}


def honoured_filter(
    asked: SubscriptionFilter, capabilities: ServerCapabilities
) -> SubscriptionFilter:
    """The part of ``asked`` this server's capabilities let it honour."""
    tools, prompts, resources = capabilities.tools, capabilities.prompts, capabilities.resources

    def offered(wanted: Any, capability: Any, member: str) -> Any:
        if wanted is not True or capability is None or getattr(capability, member) is not True:
            return None
        return True

    uris = asked.resource_subscriptions
    return SubscriptionFilter(
        tools_list_changed=offered(asked.tools_list_changed, tools, "list_changed"),
        prompts_list_changed=offered(asked.prompts_list_changed, prompts, "list_changed"),
        resources_list_changed=offered(asked.resources_list_changed, resources, "list_changed"),
        resource_subscriptions=(
            list(uris)
            if isinstance(uris, list) and resources is not None and resources.subscribe is True
            else None
        ),
    )


async def listen(
    ctx: HandlerContext,
    request: SubscriptionsListenRequest,
    capabilities: ServerCapabilities,
    bus: SubscriptionBus,
    extension: ExtensionTasks,
    quota: ListenQuota,
) -> Any:
    """Serve one listen stream (see the module docstring) from ``bus``, honouring what
    ``capabilities`` offer; the tasks it follows are those of ``extension``; the streams its
    client holds are bounded by ``quota``."""
    honoured = honoured_filter(request.notifications, capabilities)
    task_ids: list[str] = []
    asked_tasks = request.notifications.task_ids
    if asked_tasks:
        meta = ctx.request_meta
        if meta is None or not ext.declares(meta.client_capabilities):
            raise ext.required_error(
                f"Task notifications need the {ext.EXTENSION_ID} extension, which the"
                " request's clientCapabilities do not declare"
            )
        task_ids = await extension.accepted_ids(ctx, asked_tasks)
        honoured.task_ids = task_ids
    wanted: tuple[tuple[ListKind, Any], ...] = (
        ("tools", honoured.tools_list_changed),
        ("prompts", honoured.prompts_list_changed),
        ("resources", honoured.resources_list_changed),
    )
    kinds = [kind for kind, asked in wanted if asked is True]
    uris = honoured.resource_subscriptions
    uris = uris if isinstance(uris, list) else []
    # Held from before the listener is made until after it is gone.
    with quota.taken(requestor_key(ctx), uris):
        try:
            listener = bus.subscribe(kinds, uris)
        except TooManyListeners as exc:
            raise InternalError(str(exc)) from None
        except ValueError as exc:
            raise InvalidParams(str(exc)) from None
        tag = {SUBSCRIPTION_ID_KEY: ctx.request_id}
        try:
            await ctx.notify(
                SubscriptionsAcknowledgedNotification(notifications=honoured, meta=tag)
            )
            async with trio.open_nursery() as nursery:
                if task_ids:
                    nursery.start_soon(watch_tasks, extension.supervisor, ctx, task_ids, tag)
                async for change in listener.changes():
                    await ctx.notify(_notification(change, tag))
                # The bus closed: the stream ends, task watchers with it.
                nursery.cancel_scope.cancel()
        finally:
            bus.unsubscribe(listener)
    return SubscriptionsListenResult(meta=dict(tag))


def _notification(change: Change, tag: dict[str, Any]) -> Notification:
    if change[0] == "updated":
        return ResourceUpdatedNotification(uri=change[1], meta=dict(tag))
    return _LIST_CHANGED[change[1]](meta=dict(tag))
