"""mcptrio: a Trio-native, structured-concurrency runtime for the Model Context Protocol.

The names here are the curated public API; ``tests/test_exports.py`` guards them. They load
lazily, so that ``import mcptrio.protocol`` (the sans-IO core) does not import trio.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "Audio": "mcptrio.server.media",
    "Call": "mcptrio.server.middleware",
    "CallNext": "mcptrio.server.middleware",
    "CapabilityNotNegotiated": "mcptrio.protocol.errors",
    "Client": "mcptrio.client",
    "ClientError": "mcptrio.client",
    "ClientGroup": "mcptrio.client.group",
    "ConnectionClosed": "mcptrio.protocol.errors",
    "Context": "mcptrio.server.context",
    "Elicited": "mcptrio.server.context",
    "File": "mcptrio.server.media",
    "GroupTool": "mcptrio.client.group",
    "Image": "mcptrio.server.media",
    "InternalError": "mcptrio.protocol.errors",
    "InvalidParams": "mcptrio.protocol.errors",
    "InvalidRequest": "mcptrio.protocol.errors",
    "LifespanError": "mcptrio.server.lifespan",
    "LocalError": "mcptrio.protocol.errors",
    "McpError": "mcptrio.protocol.errors",
    "MemoryTaskStore": "mcptrio.stores.task_store",
    "MethodNotFound": "mcptrio.protocol.errors",
    "Middleware": "mcptrio.server.middleware",
    "OutcomeUnknown": "mcptrio.transports.http.engine.client_pool",
    "OutputValidationError": "mcptrio.client",
    "ParseError": "mcptrio.protocol.errors",
    "PathSegment": "mcptrio.server.path_parameters",
    "ProtocolError": "mcptrio.protocol.errors",
    "RelativePath": "mcptrio.server.path_parameters",
    "RequestContext": "mcptrio.runtime.context",
    "RequestTimeout": "mcptrio.protocol.errors",
    "ResourceNotFound": "mcptrio.protocol.errors",
    "Server": "mcptrio.server",
    "Session": "mcptrio.runtime.session",
    "Skill": "mcptrio.protocol.skills_extension",
    "SkillFile": "mcptrio.client.skills",
    "SkillVerificationError": "mcptrio.client.skills",
    "Skills": "mcptrio.server.skills",
    "SkillsError": "mcptrio.server.skill_files",
    "StoreUnavailable": "mcptrio.stores.errors",
    "Stores": "mcptrio.stores.bundle",
    "TaskHandle": "mcptrio.client.tasks",
    "TaskLimits": "mcptrio.tasks.supervisor",
    "TaskStore": "mcptrio.stores.task_store",
    "TaskSupervisor": "mcptrio.tasks.supervisor",
    "ToolError": "mcptrio.server.tools",
    "TransportError": "mcptrio.protocol.errors",
    "UnsupportedProtocolVersion": "mcptrio.protocol.errors",
    "asyncio_handler": "mcptrio.server.asyncio_handlers",
    "open_client": "mcptrio.client",
    "declare_skills": "mcptrio.client.skills",
    "AppView": "mcptrio.client.apps",
    "AppViewError": "mcptrio.client.apps",
    "declare_apps": "mcptrio.client.apps",
    "read_app_view": "mcptrio.client.apps",
    "server_supports_apps": "mcptrio.client.apps",
    "tool_view": "mcptrio.client.apps",
    "ResourceCsp": "mcptrio.protocol.apps_extension",
    "ResourceUi": "mcptrio.protocol.apps_extension",
    "ToolUi": "mcptrio.protocol.apps_extension",
    "client_supports_apps": "mcptrio.server.apps",
    "html_bundle": "mcptrio.server.apps",
    "html_file": "mcptrio.server.apps",
    "open_client_group": "mcptrio.client.group",
    "open_stores": "mcptrio.stores.bundle",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from .client import Client as Client
    from .client import ClientError as ClientError
    from .client import OutputValidationError as OutputValidationError
    from .client import open_client as open_client
    from .client.apps import AppView as AppView
    from .client.apps import AppViewError as AppViewError
    from .client.apps import declare_apps as declare_apps
    from .client.apps import read_app_view as read_app_view
    from .client.apps import server_supports_apps as server_supports_apps
    from .client.apps import tool_view as tool_view
    from .client.group import ClientGroup as ClientGroup
    from .client.group import GroupTool as GroupTool
    from .client.group import open_client_group as open_client_group
    from .client.skills import SkillFile as SkillFile
    from .client.skills import SkillVerificationError as SkillVerificationError
    from .client.skills import declare_skills as declare_skills
    from .client.tasks import TaskHandle as TaskHandle
    from .protocol.apps_extension import ResourceCsp as ResourceCsp
    from .protocol.apps_extension import ResourceUi as ResourceUi
    from .protocol.apps_extension import ToolUi as ToolUi
    from .protocol.errors import CapabilityNotNegotiated as CapabilityNotNegotiated
    from .protocol.errors import ConnectionClosed as ConnectionClosed
    from .protocol.errors import InternalError as InternalError
    from .protocol.errors import InvalidParams as InvalidParams
    from .protocol.errors import InvalidRequest as InvalidRequest
    from .protocol.errors import LocalError as LocalError
    from .protocol.errors import McpError as McpError
    from .protocol.errors import MethodNotFound as MethodNotFound
    from .protocol.errors import ParseError as ParseError
    from .protocol.errors import ProtocolError as ProtocolError
    from .protocol.errors import RequestTimeout as RequestTimeout
    from .protocol.errors import ResourceNotFound as ResourceNotFound
    from .protocol.errors import TransportError as TransportError
    from .protocol.errors import UnsupportedProtocolVersion as UnsupportedProtocolVersion
    from .protocol.skills_extension import Skill as Skill
    from .runtime.context import RequestContext as RequestContext
    from .runtime.session import Session as Session
    from .server import Server as Server
    from .server.apps import client_supports_apps as client_supports_apps
    from .server.apps import html_bundle as html_bundle
    from .server.apps import html_file as html_file
    from .server.asyncio_handlers import asyncio_handler as asyncio_handler
    from .server.context import Context as Context
    from .server.context import Elicited as Elicited
    from .server.lifespan import LifespanError as LifespanError
    from .server.media import Audio as Audio
    from .server.media import File as File
    from .server.media import Image as Image
    from .server.middleware import Call as Call
    from .server.middleware import CallNext as CallNext
    from .server.middleware import Middleware as Middleware
    from .server.path_parameters import PathSegment as PathSegment
    from .server.path_parameters import RelativePath as RelativePath
    from .server.skill_files import SkillsError as SkillsError
    from .server.skills import Skills as Skills
    from .server.tools import ToolError as ToolError
    from .stores.bundle import Stores as Stores
    from .stores.bundle import open_stores as open_stores
    from .stores.errors import StoreUnavailable as StoreUnavailable
    from .stores.task_store import MemoryTaskStore as MemoryTaskStore
    from .stores.task_store import TaskStore as TaskStore
    from .tasks.supervisor import TaskLimits as TaskLimits
    from .tasks.supervisor import TaskSupervisor as TaskSupervisor
    from .transports.http.engine.client_pool import OutcomeUnknown as OutcomeUnknown


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mcptrio' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return [*globals(), *__all__]
