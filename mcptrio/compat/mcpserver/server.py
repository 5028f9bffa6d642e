"""``MCPServer``: the official SDK's server class, on mcptrio's engine.

An ``MCPServer`` is a :class:`mcptrio.Server` (``engine``) plus the SDK's way of describing
handlers. The SDK's API decides what clients see: the ``tools/list`` entries (pydantic's input
and output schemas, the docstring as description), the arguments' validation and its error
text, how a value becomes content, the resources' default MIME type. The engine does the rest:
sessions, both eras, transports, cancellation, progress, logging, elicitation. Each handler is
registered with the engine as a small function taking the raw request (``ctx.arguments``, the
URI's variables, the prompt's arguments) and mcptrio's context, which calls the user's function
the SDK's way; the engine's description of it is then replaced by the SDK's one.
"""

from __future__ import annotations

import base64
import inspect
import logging
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, Generic, Literal, TypeVar

from ...protocol.types import Annotations, Icon, ToolAnnotations
from ...server import Server
from ...server.context import Context as EngineContext
from ...server.resources import read_resource as engine_read_resource
from ...server.uri_template import UriTemplate
from .context import Context
from .engine_handlers import (
    completion_handler,
    prompt_definition,
    prompt_handler,
    resource_definition,
    resource_handler,
    tool_definition,
    tool_handler,
)
from .functions import context_parameter, read_function
from .resources import ReadResourceContents
from .unknown_names import UnknownNames
from .unmirrored import refuse_arguments, unmirrored_member

__all__ = ["MCPServer"]

log = logging.getLogger("mcptrio.compat")

LifespanT = TypeVar("LifespanT")
F = TypeVar("F", bound=Callable[..., Any])
Transport = Literal["stdio", "sse", "streamable-http"]


def _refuse_uncalled(decorator: str, first: object, usage: str) -> None:
    """The SDK's ``TypeError`` for ``@decorator`` applied without being called (its first
    argument is then the function)."""
    if callable(first):
        raise TypeError(
            f"The @{decorator} decorator was used incorrectly. Did you forget to call it? Use"
            f" {usage} instead of @{decorator}"
        )


class MCPServer(Generic[LifespanT]):
    """The official SDK's ``MCPServer``: the same constructor, decorators and ``run``."""

    def __init__(
        self,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        instructions: str | None = None,
        website_url: str | None = None,
        icons: list[Icon] | None = None,
        version: str = "",
        auth_server_provider: Any = None,
        token_verifier: Any = None,
        *,
        tools: Any = None,
        resources: Any = None,
        extensions: Any = None,
        debug: bool = False,
        log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "INFO",
        warn_on_duplicate_resources: bool = True,
        warn_on_duplicate_tools: bool = True,
        warn_on_duplicate_prompts: bool = True,
        dependencies: list[str] | None = None,
        lifespan: Callable[[MCPServer[LifespanT]], AbstractAsyncContextManager[LifespanT]]
        | None = None,
        auth: Any = None,
        resource_security: Any = None,
        request_state_security: Any = None,
        cache_hints: Any = None,
        subscriptions: Any = None,
        middleware: Any = None,
    ) -> None:
        refuse_arguments(
            "MCPServer()",
            auth_server_provider=auth_server_provider,
            token_verifier=token_verifier,
            tools=tools,
            resources=resources,
            extensions=extensions,
            auth=auth,
            resource_security=resource_security,
            request_state_security=request_state_security,
            cache_hints=cache_hints,
            subscriptions=subscriptions,
            middleware=middleware,
        )
        self._warn_on_duplicates = {
            "Tool": warn_on_duplicate_tools,
            "Resource": warn_on_duplicate_resources,
            "Prompt": warn_on_duplicate_prompts,
        }
        self.debug = debug
        self.log_level = log_level
        self.dependencies = list(dependencies or ())
        engine_lifespan = None if lifespan is None else (lambda _engine: lifespan(self))
        #: The mcptrio server that serves this one.
        self.engine = Server(
            name or "mcp-server",
            version,
            title=title,
            description=description,
            icons=icons,
            website_url=website_url,
            instructions=instructions,
            lifespan=engine_lifespan,
            # The SDK's server offers the three lists even while they are empty.
            declare=("tools", "resources", "prompts"),
        )
        self.engine.add_middleware(UnknownNames(self.engine))

    def __getattr__(self, name: str) -> Any:
        raise unmirrored_member("MCPServer", name)

    def _taken(self, kind: str, key: str, registered: Mapping[str, Any]) -> bool:
        """Whether ``key`` is registered already: the SDK then keeps the first one, and warns
        unless told not to."""
        if key not in registered:
            return False
        if self._warn_on_duplicates[kind]:
            log.warning("%s already exists: %s", kind, key)
        return True

    def context_of(self, engine: EngineContext) -> Context:
        """The SDK's ``Context`` for the request mcptrio's ``engine`` context answers."""
        return Context(engine, self)

    @property
    def name(self) -> str:
        return self.engine.info.name

    @property
    def title(self) -> str | None:
        return self.engine.info.title

    @property
    def description(self) -> str | None:
        return self.engine.info.description

    @property
    def instructions(self) -> str | None:
        return self.engine.instructions

    @property
    def website_url(self) -> str | None:
        return self.engine.info.website_url

    @property
    def icons(self) -> list[Icon] | None:
        return self.engine.info.icons

    @property
    def version(self) -> str:
        return self.engine.info.version

    # ------------------------------------------------------------------ tools

    def add_tool(
        self,
        fn: Callable[..., Any],
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
        structured_output: bool | None = None,
    ) -> None:
        """Register ``fn`` as a tool, described and called as the SDK does."""
        tool_name = name or getattr(fn, "__name__", None)
        if not tool_name or tool_name == "<lambda>":
            raise ValueError("You must provide a name for lambda functions")
        if self._taken("Tool", tool_name, self.engine.tools):
            return
        function = read_function(fn, Context, structured_output=structured_output)
        registered = self.engine.add_tool(
            tool_handler(self.context_of, tool_name, function),
            name=tool_name,
            input_schema=function.input_schema,
        )
        registered._definition = tool_definition(
            tool_name,
            title=title,
            description=description or fn.__doc__ or "",
            function=function,
            annotations=annotations,
            icons=icons,
            meta=meta,
        )

    def remove_tool(self, name: str) -> None:
        """Remove the tool ``name``; ``ToolError`` if there is none."""
        if not self.engine.remove_tool(name):
            from .exceptions import ToolError

            raise ToolError(f"Unknown tool: {name}")

    def tool(
        self,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
        structured_output: bool | None = None,
    ) -> Callable[[F], F]:
        """``@server.tool()``: register the function as a tool (see :meth:`add_tool`)."""
        _refuse_uncalled("tool", name, "@tool()")

        def decorator(fn: F) -> F:
            self.add_tool(fn, name, title, description, annotations, icons, meta, structured_output)
            return fn

        return decorator

    # ------------------------------------------------------------------ resources

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        icons: list[Icon] | None = None,
        annotations: Annotations | None = None,
        meta: dict[str, Any] | None = None,
        security: Any = None,
    ) -> Callable[[F], F]:
        """``@server.resource(uri)``: a resource, or a template when ``uri`` has variables."""
        _refuse_uncalled("resource", uri, "@resource('uri')")
        refuse_arguments("MCPServer.resource()", security=security)
        variables = set(UriTemplate(uri).variables)

        def decorator(fn: F) -> F:
            context_name = context_parameter(fn, Context)
            parameters = set(inspect.signature(fn).parameters) - {context_name}
            if variables and variables != parameters:
                raise ValueError(
                    f"Mismatch between URI parameters {variables} and function parameters"
                    f" {parameters}"
                )
            if not variables and parameters:
                raise ValueError(
                    f"Resource {uri!r} has no URI template variables, but the handler declares"
                    f" parameters {parameters}. Add matching {{...}} variables to the URI or"
                    " remove the parameters."
                )
            if not variables and context_name is not None:
                raise ValueError(
                    f"Resource {uri!r} has no URI template variables, but the handler declares a"
                    " Context parameter. Context injection for static resources is not"
                    " supported. Add a template variable to the URI or remove the Context"
                    " parameter."
                )
            resource_name = name or fn.__name__
            taken = self.engine.templates if variables else self.engine.resources
            if self._taken("Resource", uri, taken):
                return fn
            function = read_function(fn, Context, structured_output=False)
            kind = mime_type or "text/plain"
            handler = resource_handler(
                self.context_of, uri, function, kind, meta, sorted(variables)
            )
            registered = self.engine.add_resource(handler, uri, name=resource_name)
            registered._definition = resource_definition(
                uri,
                template=bool(variables),
                name=resource_name,
                title=title,
                description=description or fn.__doc__ or "",
                mime_type=kind,
                icons=icons,
                annotations=annotations,
                meta=meta,
            )
            return fn

        return decorator

    async def read_resource(self, uri: str, context: Context) -> list[ReadResourceContents]:
        """Read a resource of this server as ``resources/read`` would."""
        engine = self.engine
        result = await engine_read_resource(
            engine.resources, engine.templates, context.engine, str(uri)
        )
        out: list[ReadResourceContents] = []
        for item in result.contents:
            if item.text is not None:
                content: str | bytes = item.text
            else:
                content = base64.b64decode(item.blob or "")
            out.append(ReadResourceContents(content, item.mime_type, item.meta))
        return out

    # ------------------------------------------------------------------ prompts

    def prompt(
        self,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[Icon] | None = None,
    ) -> Callable[[F], F]:
        """``@server.prompt()``: register the function as a prompt."""
        _refuse_uncalled("prompt", name, "@prompt()")

        def decorator(fn: F) -> F:
            prompt_name = name or fn.__name__
            if self._taken("Prompt", prompt_name, self.engine.prompts):
                return fn
            function = read_function(fn, Context, structured_output=False)
            schema = function.input_schema
            properties: dict[str, Any] = schema.get("properties", {})
            required = set(schema.get("required", ()))
            arguments = [
                (argument, spec.get("description"), argument in required)
                for argument, spec in properties.items()
            ]
            registered = self.engine.add_prompt(
                prompt_handler(self.context_of, prompt_name, function, arguments),
                name=prompt_name,
            )
            registered._definition = prompt_definition(
                prompt_name,
                title=title,
                description=description or fn.__doc__ or "",
                arguments=arguments,
                icons=icons,
            )
            return fn

        return decorator

    def remove_prompt(self, name: str) -> None:
        """Remove the prompt ``name``; ``ValueError`` if there is none."""
        if not self.engine.remove_prompt(name):
            raise ValueError(f"Unknown prompt: {name}")

    # ------------------------------------------------------------------ completion

    def completion(self) -> Callable[[F], F]:
        """``@server.completion()``: the handler of ``completion/complete``, called as
        ``handler(ref, argument, context)`` and returning a ``Completion`` or ``None``."""

        def decorator(fn: F) -> F:
            self.engine.completion(completion_handler(fn))
            return fn

        return decorator

    # ------------------------------------------------------------------ running

    def run(self, transport: Transport = "stdio", **settings: Any) -> None:
        """Run the server as the whole program: ``"stdio"`` or ``"streamable-http"`` (``host``,
        ``port`` and ``streamable_http_path`` as in the SDK; 127.0.0.1:8000/mcp by default)."""
        if transport == "stdio":
            refuse_arguments("MCPServer.run('stdio')", **settings)
            self.engine.run("stdio")
        elif transport == "streamable-http":
            host = settings.pop("host", "127.0.0.1")
            port = settings.pop("port", 8000)
            path = settings.pop("streamable_http_path", "/mcp")
            refuse_arguments("MCPServer.run('streamable-http')", **settings)
            self.engine.run("http", host=host, port=port, path=path)
        elif transport == "sse":
            refuse_arguments("MCPServer.run()", transport="sse")
        else:
            raise ValueError(f"Unknown transport: {transport}")

    async def run_stdio_async(self) -> None:
        """Serve over this process's stdin and stdout, in the running trio program."""
        await self.engine.serve_stdio()
