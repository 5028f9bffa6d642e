"""The official SDK's ``Context``, over mcptrio's :class:`~mcptrio.Context`.

A handler of an :class:`~.server.MCPServer` that annotates a parameter ``Context`` (this class)
receives one per request, with the SDK's method names and signatures; each call is the engine's
(progress, logging, elicitation, notifications). ``engine`` is mcptrio's own context, for what
the SDK has no name for.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Generic, Literal, Protocol, TypeAlias, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema
from typing_extensions import TypeAliasType

from ...protocol.types import ClientCapabilities, LoggingLevel
from ...server import Server
from ...server.context import Context as EngineContext
from ...server.context import Elicited
from .resources import ReadResourceContents
from .unmirrored import unmirrored_member

__all__ = [
    "AcceptedElicitation",
    "AcceptedUrlElicitation",
    "CancelledElicitation",
    "Context",
    "DeclinedElicitation",
    "ElicitationResult",
    "RequestContext",
    "UrlElicitationResult",
]

SchemaT = TypeVar("SchemaT", bound=BaseModel)


class AcceptedElicitation(BaseModel, Generic[SchemaT]):
    """The user accepted: ``data`` is the answer, validated by the schema."""

    action: Literal["accept"] = "accept"
    data: SchemaT


class DeclinedElicitation(BaseModel):
    """The user declined."""

    action: Literal["decline"] = "decline"


class CancelledElicitation(BaseModel):
    """The user dismissed the question."""

    action: Literal["cancel"] = "cancel"


class AcceptedUrlElicitation(BaseModel):
    """The user agreed to open the URL."""

    action: Literal["accept"] = "accept"


ElicitationResult = TypeAliasType(
    "ElicitationResult",
    AcceptedElicitation[SchemaT] | DeclinedElicitation | CancelledElicitation,
    type_params=(SchemaT,),
)
UrlElicitationResult: TypeAlias = (
    AcceptedUrlElicitation | DeclinedElicitation | CancelledElicitation
)


def elicitation_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The ``requestedSchema`` the SDK renders for ``schema``."""
    return schema.model_json_schema(schema_generator=_ElicitationSchema)


class _ElicitationSchema(GenerateJsonSchema):
    """The SDK's rendering: ``T | None`` is ``T`` (the spec's primitives have no null) and a
    ``None`` default is left out."""

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        result = super().default_schema(schema)
        if result.get("default") is None:
            result.pop("default", None)
        return result


class RequestContext:
    """What ``ctx.request_context`` holds in the SDK that a handler reads: the lifespan's value
    and the request's id and ``_meta``."""

    __slots__ = ("_engine",)

    def __init__(self, engine: EngineContext) -> None:
        self._engine = engine

    @property
    def lifespan_context(self) -> Any:
        """What the server's lifespan yielded."""
        return self._engine.lifespan

    @property
    def request_id(self) -> str | int:
        return self._engine.request_id

    @property
    def meta(self) -> Any:
        return self._engine.request_meta


class ServingServer(Protocol):
    """What a ``Context`` needs of the :class:`~.server.MCPServer` answering the request."""

    @property
    def engine(self) -> Server: ...

    async def read_resource(self, uri: str, context: Context) -> list[ReadResourceContents]: ...


class Context:
    """The request being answered, as the official SDK's handlers see it."""

    __slots__ = ("_server", "engine")

    def __init__(self, engine: EngineContext, server: ServingServer) -> None:
        #: mcptrio's context of the same request.
        self.engine = engine
        self._server = server

    def __getattr__(self, name: str) -> Any:
        raise unmirrored_member("Context", name)

    @property
    def mcp_server(self) -> ServingServer:
        """The ``MCPServer`` answering the request."""
        return self._server

    @property
    def request_context(self) -> RequestContext:
        return RequestContext(self.engine)

    @property
    def request_id(self) -> str:
        return str(self.engine.request_id)

    @property
    def protocol_version(self) -> str | None:
        return self.engine.revision

    @property
    def client_capabilities(self) -> ClientCapabilities | None:
        return self.engine.client_capabilities

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        await self.engine.report_progress(progress, total, message)

    async def log(self, level: LoggingLevel, data: Any, *, logger_name: str | None = None) -> None:
        await self.engine.log(level, data, logger=logger_name)

    async def debug(self, data: Any, *, logger_name: str | None = None) -> None:
        await self.log("debug", data, logger_name=logger_name)

    async def info(self, data: Any, *, logger_name: str | None = None) -> None:
        await self.log("info", data, logger_name=logger_name)

    async def warning(self, data: Any, *, logger_name: str | None = None) -> None:
        await self.log("warning", data, logger_name=logger_name)

    async def error(self, data: Any, *, logger_name: str | None = None) -> None:
        await self.log("error", data, logger_name=logger_name)

    async def read_resource(self, uri: Any) -> Iterable[ReadResourceContents]:
        """The contents of a resource of this server, read as ``resources/read`` would."""
        return await self._server.read_resource(str(uri), self)

    async def elicit(
        self, message: str, schema: type[SchemaT], *, key: str | None = None
    ) -> ElicitationResult[SchemaT]:
        """Ask the user for an answer shaped by ``schema`` (a pydantic model of primitives);
        ``key`` names the question in the stateless era (mcptrio's ``Context.elicit``)."""
        return await self.ask(message, schema, elicitation_schema(schema), key=key)

    async def ask(
        self,
        message: str,
        schema: type[SchemaT],
        requested: dict[str, Any],
        *,
        key: str | None = None,
    ) -> ElicitationResult[SchemaT]:
        """:meth:`elicit` with the ``requestedSchema`` already rendered."""
        answer: Elicited[dict[str, Any]] = await self.engine.elicit(message, requested, key=key)
        if answer.action == "accept":
            if answer.content is None:
                raise ValueError("Received an accepted elicitation with no content")
            try:
                return AcceptedElicitation(data=schema.model_validate(answer.content))
            except ValidationError as exc:
                raise ValueError(
                    "Received an accepted elicitation whose content does not match the requested"
                    " schema"
                ) from exc
        if answer.action == "decline":
            return DeclinedElicitation()
        return CancelledElicitation()

    async def elicit_url(self, message: str, url: str, elicitation_id: str) -> UrlElicitationResult:
        """Send the user to ``url`` for what must not pass through the client."""
        answer = await self.engine.elicit_url(message, url, elicitation_id)
        if answer.action == "accept":
            return AcceptedUrlElicitation()
        if answer.action == "decline":
            return DeclinedElicitation()
        return CancelledElicitation()

    async def notify_tools_changed(self) -> None:
        self._server.engine.subscriptions.publish(("list_changed", "tools"))

    async def notify_prompts_changed(self) -> None:
        self._server.engine.subscriptions.publish(("list_changed", "prompts"))

    async def notify_resources_changed(self) -> None:
        self._server.engine.subscriptions.publish(("list_changed", "resources"))

    async def notify_resource_updated(self, uri: Any) -> None:
        self._server.engine.notify_resource_updated(str(uri))
