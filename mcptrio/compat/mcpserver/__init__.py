"""The official Python SDK's ``mcp.server.mcpserver`` (version 2.3.0), on mcptrio's engine.

Change the import line of a server written for the SDK::

    from mcp.server.mcpserver import MCPServer, Context      # before
    from mcptrio.compat.mcpserver import MCPServer, Context  # after

and it runs on mcptrio: the same decorators, the same ``Context`` methods, the same schemas,
results and error texts on the wire, in both eras of the protocol. A name of the SDK's package
that is not mirrored raises :class:`~.unmirrored.Unmirrored` saying what to use instead (see
``docs/how-to/migrate-from-the-official-sdk.md``).
"""

from __future__ import annotations

from typing import Any

from ...protocol.types import (
    Annotations as Annotations,
)
from ...protocol.types import (
    CallToolResult as CallToolResult,
)
from ...protocol.types import (
    CompleteArgument as CompleteArgument,
)
from ...protocol.types import (
    CompleteContext as CompleteContext,
)
from ...protocol.types import (
    Completion as Completion,
)
from ...protocol.types import (
    Icon as Icon,
)
from ...protocol.types import (
    PromptReference as PromptReference,
)
from ...protocol.types import (
    ResourceTemplateReference as ResourceTemplateReference,
)
from ...protocol.types import (
    ToolAnnotations as ToolAnnotations,
)
from .context import AcceptedElicitation as AcceptedElicitation
from .context import CancelledElicitation as CancelledElicitation
from .context import Context as Context
from .context import DeclinedElicitation as DeclinedElicitation
from .context import ElicitationResult as ElicitationResult
from .media import Audio as Audio
from .media import Image as Image
from .messages import AssistantMessage as AssistantMessage
from .messages import Message as Message
from .messages import UserMessage as UserMessage
from .resolve import Elicit as Elicit
from .resolve import ListRoots as ListRoots
from .resolve import Resolve as Resolve
from .resolve import Sample as Sample
from .server import MCPServer as MCPServer
from .unmirrored import UNMIRRORED_NAMES, unmirrored_name
from .unmirrored import Unmirrored as Unmirrored

__all__ = [
    "AcceptedElicitation",
    "Annotations",
    "AssistantMessage",
    "Audio",
    "CallToolResult",
    "CancelledElicitation",
    "CompleteArgument",
    "CompleteContext",
    "Completion",
    "Context",
    "DeclinedElicitation",
    "Elicit",
    "ElicitationResult",
    "Icon",
    "Image",
    "ListRoots",
    "MCPServer",
    "Message",
    "PromptReference",
    "Resolve",
    "ResourceTemplateReference",
    "Sample",
    "ToolAnnotations",
    "Unmirrored",
    "UserMessage",
]


def __getattr__(name: str) -> Any:
    if name in UNMIRRORED_NAMES:
        raise unmirrored_name(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
