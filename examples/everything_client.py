"""The client the official MCP conformance suite drives.

    conformance client --command "python examples/everything_client.py" --scenario initialize

The suite starts a mock server for each scenario, then runs this script with the server's URL
as the last argument and the scenario's name in ``MCP_CONFORMANCE_SCENARIO``. The script does
what the scenario expects and exits 0; the suite judges the exchange from the server's side.

Scenarios:

- ``initialize``: connect (the handshake is the test), ping, leave.
- ``tools_call``: call ``add_numbers`` with two numbers and check the sum comes back.
- ``elicitation-sep1034-client-defaults``: call every tool; the server's
  ``elicitation/create`` is accepted with the requested schema's ``default`` values (SEP-1034).
- ``sse-retry``: call ``test_reconnection``; the server closes the SSE stream of the call after
  a priming event with ``retry:``, and the Streamable HTTP transport resumes it with a GET
  carrying ``Last-Event-ID`` after that delay, where the answer arrives.
- ``json-schema-2020-12-preservation`` (suite 0.2): list the tools and send the
  ``inputSchema`` of ``json_schema_2020_12_tool`` back, as the client holds it, to
  ``json_schema_echo``; the server checks that no 2020-12 keyword was stripped or changed.

- ``auth/*``: connect through an :class:`~mcptrio.auth.client.OAuthClient`, list the tools and
  call the first. Most scenarios log in with the authorization-code grant, the authorization
  URL fetched headlessly (:class:`~mcptrio.auth.client.HeadlessUserAgent`: the suite's
  authorization server redirects at once); the client-credentials, workload-identity and
  enterprise-managed scenarios use their grants, with the credentials the suite hands over in
  ``MCP_CONFORMANCE_CONTEXT``. A scenario where the right client refuses (a resource or issuer
  that does not match) ends with the refusal on stderr and exit status 1.

An unknown scenario exits 2 with a message; a failure exits 1 with the error on stderr.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import Any

import trio

import mcptrio
from mcptrio.auth.client import (
    AuthorizationCode,
    AuthorizationError,
    ClientCredentials,
    ClientKey,
    ClientMetadata,
    ClientRegistration,
    EnterpriseManaged,
    Grant,
    HeadlessUserAgent,
    JwtBearer,
    OAuthClient,
)
from mcptrio.client import ClientIdentity, ElicitationMode, Handlers, Revisions, http
from mcptrio.client.skills import SkillVerificationError, declare_skills
from mcptrio.protocol.revisions import SUPPORTED
from mcptrio.protocol.types import (
    CallToolResult,
    CreateMessageResult,
    ElicitRequest,
    ElicitResult,
    ElicitValue,
    Implementation,
    Root,
    TextContent,
)
from mcptrio.runtime.context import RequestContext

CLIENT_INFO = Implementation(name="mcptrio-everything-client", version="0.1.0")
# Every scenario's mock server answers within milliseconds; the suite's own limit is 30 s.
TIMEOUT = 20.0
#: The defaults scenario is about form elicitation; no URL is ever opened here.
FORM_ONLY: tuple[ElicitationMode, ...] = ("form",)
#: The tool whose JSON Schema 2020-12 ``inputSchema`` must survive the client, and the tool the
#: client hands it back to (json-schema-2020-12-preservation).
SCHEMA_TOOL = "json_schema_2020_12_tool"
SCHEMA_ECHO_TOOL = "json_schema_echo"


class ScenarioFailed(Exception):
    """The server's answers were not what the scenario expects."""


def schema_defaults(schema: Mapping[str, Any]) -> dict[str, ElicitValue]:
    """The ``default`` of every property of an elicitation's ``requestedSchema`` that has one.

    Elicitation schemas are flat objects of primitives (strings, numbers, booleans, enums, and
    arrays of enum strings), so each default is used as it is.
    """
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return {}
    values: dict[str, ElicitValue] = {}
    for name, prop in properties.items():
        if isinstance(prop, Mapping) and "default" in prop:
            default = prop["default"]
            if isinstance(default, str | int | float | bool):
                values[name] = default
            elif isinstance(default, list) and all(isinstance(v, str) for v in default):
                values[name] = list(default)
    return values


async def accept_with_defaults(ctx: RequestContext, request: ElicitRequest) -> ElicitResult:
    """Accept a form elicitation with the defaults its schema offers (what a user pressing OK
    on an untouched form would send); decline anything else."""
    if request.mode == "url" or not isinstance(request.requested_schema, dict):
        return ElicitResult(action="decline")
    return ElicitResult(action="accept", content=schema_defaults(request.requested_schema))


def text_of(result: CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


async def initialize(url: str) -> None:
    async with mcptrio.open_client(url, identity=ClientIdentity(info=CLIENT_INFO)) as client:
        # The handshake is the test; a ping shows the session works after it. Only what the
        # server declared may be asked for (this scenario's server declares nothing).
        await client.ping(timeout=TIMEOUT)
        if client.server_capabilities.tools is not None:
            await client.list_tools(timeout=TIMEOUT)


async def tools_call(url: str) -> None:
    # Its server may be of either era (2025-06-18 ... 2026-07-28): the client probes.
    async with open_both_eras(url) as client:
        tools = {tool.name for tool in (await client.list_tools(timeout=TIMEOUT)).tools}
        if "add_numbers" not in tools:
            raise ScenarioFailed(f"the server has no add_numbers tool (it has {sorted(tools)})")
        result = await client.call_tool("add_numbers", {"a": 5, "b": 3}, timeout=TIMEOUT)
        if result.is_error is True or "8" not in text_of(result):
            raise ScenarioFailed(f"add_numbers(5, 3) answered {text_of(result)!r}")


async def elicitation_defaults(url: str) -> None:
    async with mcptrio.open_client(
        url,
        identity=ClientIdentity(info=CLIENT_INFO),
        handlers=Handlers(elicitation=accept_with_defaults, elicitation_modes=FORM_ONLY),
    ) as client:
        tools = (await client.list_tools(timeout=TIMEOUT)).tools
        if not tools:
            raise ScenarioFailed("the server lists no tool to call")
        for tool in tools:
            result = await client.call_tool(tool.name, {}, timeout=TIMEOUT)
            if result.is_error is True:
                raise ScenarioFailed(f"{tool.name} failed: {text_of(result)!r}")


async def sse_retry(url: str) -> None:
    async with mcptrio.open_client(url, identity=ClientIdentity(info=CLIENT_INFO)) as client:
        tools = {tool.name for tool in (await client.list_tools(timeout=TIMEOUT)).tools}
        if "test_reconnection" not in tools:
            raise ScenarioFailed(f"the server has no test_reconnection tool ({sorted(tools)})")
        result = await client.call_tool("test_reconnection", {}, timeout=TIMEOUT)
        if result.is_error is True:
            raise ScenarioFailed(f"test_reconnection failed: {text_of(result)!r}")


async def json_schema_preservation(url: str) -> None:
    async with mcptrio.open_client(url, identity=ClientIdentity(info=CLIENT_INFO)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools(timeout=TIMEOUT)).tools}
        focal, echo = tools.get(SCHEMA_TOOL), tools.get(SCHEMA_ECHO_TOOL)
        if focal is None or echo is None:
            raise ScenarioFailed(f"the server lacks {SCHEMA_TOOL} or {SCHEMA_ECHO_TOOL}")
        # The schema as the client holds it goes back verbatim: the server compares it with the
        # one it listed, so anything the client stripped or rewrote shows.
        result = await client.call_tool(
            SCHEMA_ECHO_TOOL, {"schema": focal.input_schema}, timeout=TIMEOUT
        )
        if result.is_error is True:
            raise ScenarioFailed(f"{SCHEMA_ECHO_TOOL} failed: {text_of(result)!r}")


# ---------------------------------------------------------------- the stateless era (2026-07-28)

#: The scenarios of 2026-07-28 let the client probe (server/discover) before it falls back.
BOTH_ERAS = Revisions(supported=SUPPORTED)


async def answer_with_samples(ctx: RequestContext, request: Any) -> CreateMessageResult:
    return CreateMessageResult(role="assistant", content=TextContent(text="Paris"), model="m")


STATELESS_HANDLERS = Handlers(
    elicitation=accept_with_defaults,
    sampling=answer_with_samples,
    roots=[Root(uri="file:///conformance")],
)


def scenario_context() -> dict[str, Any]:
    """What the suite hands a scenario in ``MCP_CONFORMANCE_CONTEXT`` (JSON), if anything."""
    raw = os.environ.get("MCP_CONFORMANCE_CONTEXT")
    value = json.loads(raw) if raw else {}
    return value if isinstance(value, dict) else {}


def open_both_eras(url: str) -> Any:
    return mcptrio.open_client(
        url,
        identity=ClientIdentity(info=CLIENT_INFO),
        revisions=BOTH_ERAS,
        handlers=STATELESS_HANDLERS,
    )


async def every_feature(url: str) -> None:
    """List and use one of everything the server offers (its requests carry their headers)."""
    async with open_both_eras(url) as client:
        caps = client.server_capabilities
        if caps.tools is not None:
            tools = (await client.list_tools(timeout=TIMEOUT)).tools
            for tool in tools[:1]:
                await client.call_tool(tool.name, {}, timeout=TIMEOUT, validate_output=False)
        if caps.resources is not None:
            resources = (await client.list_resources(timeout=TIMEOUT)).resources
            for resource in resources[:1]:
                await client.read_resource(resource.uri, timeout=TIMEOUT)
        if caps.prompts is not None:
            prompts = (await client.list_prompts(timeout=TIMEOUT)).prompts
            for prompt in prompts[:1]:
                await client.get_prompt(prompt.name, timeout=TIMEOUT)


async def call_every_listed_tool(url: str) -> None:
    """Call each tool the client keeps (one with invalid x-mcp-header is left out), in turn and
    then two at once."""
    async with open_both_eras(url) as client:
        tools = (await client.list_tools(timeout=TIMEOUT)).tools
        for tool in tools:
            await client.call_tool(tool.name, {}, timeout=TIMEOUT, validate_output=False)
        async with trio.open_nursery() as nursery:
            for tool in tools[:2]:
                nursery.start_soon(
                    partial(client.call_tool, tool.name, {}, timeout=TIMEOUT, validate_output=False)
                )


async def call_the_given_tools(url: str) -> None:
    """Call the tools the scenario names, with its arguments (x-mcp-header ones in headers)."""
    async with open_both_eras(url) as client:
        await client.list_tools(timeout=TIMEOUT)
        for call in scenario_context().get("toolCalls", []):
            await client.call_tool(
                call["name"], call.get("arguments", {}), timeout=TIMEOUT, validate_output=False
            )


def open_with_skills(url: str) -> Any:
    """A client that opts in to the skills extension (SEP-2640)."""
    return mcptrio.open_client(
        url,
        identity=ClientIdentity(info=CLIENT_INFO, capabilities=declare_skills()),
        revisions=BOTH_ERAS,
        handlers=STATELESS_HANDLERS,
    )


async def list_skills_only(url: str) -> None:
    """Build the skill registry from skills/list alone: nothing is read before a skill is
    loaded (lazy retrieval)."""
    async with open_with_skills(url) as client:
        names = [skill.name async for skill in client.iter_skills(timeout=TIMEOUT)]
        print(f"skills listed, none loaded: {names}")


async def load_first_skill(url: str) -> None:
    """List the skills, load the first (its SKILL.md, verified), then read its other files.
    A verification failure stops the load before any other file is read: that is the
    scenario's point, so it ends this client normally."""
    async with open_with_skills(url) as client:
        skills = [skill async for skill in client.iter_skills(timeout=TIMEOUT)]
        for skill in skills[:1]:
            try:
                await client.load_skill(skill, timeout=TIMEOUT)
            except SkillVerificationError as exc:
                print(f"skill {skill.uri} refused: {exc}")
                return
            assert isinstance(skill.resources, list)
            for resource in skill.resources:
                if resource.uri != skill.uri:
                    await client.read_skill_file(skill, resource.uri, timeout=TIMEOUT)


async def list_only(url: str) -> None:
    """List the tools (their schemas are read, never a network $ref followed)."""
    async with open_both_eras(url) as client:
        await client.list_tools(timeout=TIMEOUT)


# ---------------------------------------------------------------- authorization (auth/*)

#: The Client ID Metadata Document URL the suite's authorization servers accept as a client id.
CIMD_URL = "https://conformance-test.local/client-metadata.json"
#: Nothing listens here: the headless user agent reads the redirect's Location instead.
REDIRECT_URI = "http://localhost:3000/callback"
#: Enterprise-managed authorization (0.1.16 named it cross-app access).
ENTERPRISE_SCENARIOS = (
    "auth/enterprise-managed-authorization",
    "auth/cross-app-access-complete-flow",
)


def oauth_for(scenario: str, context: Mapping[str, Any]) -> OAuthClient:
    """The OAuth client a scenario calls for, with the credentials its context hands over."""
    client_id = context.get("client_id")
    secret = context.get("client_secret")
    grant: Grant
    key = None
    method: str | None = None
    if scenario == "auth/client-credentials-jwt":
        grant, method = ClientCredentials(), "private_key_jwt"
        key = ClientKey(context["private_key_pem"], context.get("signing_algorithm", "ES256"))
    elif scenario == "auth/client-credentials-basic":
        grant, method = ClientCredentials(), "client_secret_basic"
    elif scenario in ENTERPRISE_SCENARIOS:
        grant = EnterpriseManaged(
            idp_token_endpoint=context["idp_token_endpoint"],
            identity_assertion=context["idp_id_token"],
            idp_client_id=context["idp_client_id"],
        )
        method = "client_secret_basic"
    elif scenario == "auth/wif-jwt-bearer":
        grant, method = JwtBearer(context["valid_jwt"]), "none"
    else:
        grant = AuthorizationCode(HeadlessUserAgent(REDIRECT_URI))
    credentials = []
    if isinstance(client_id, str):
        credentials.append(
            ClientRegistration(
                client_id=client_id,
                client_secret=secret if isinstance(secret, str) else None,
                token_endpoint_auth_method=method,
            )
        )
    return OAuthClient(
        grant,
        client=ClientMetadata(client_name="mcptrio-everything-client", metadata_url=CIMD_URL),
        credentials=credentials,
        key=key,
        timeout=TIMEOUT,
    )


async def authorized(url: str) -> None:
    """Log in as the scenario says, list the tools and call the first."""
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    oauth = oauth_for(scenario, scenario_context())
    async with mcptrio.open_client(
        http(url, auth=oauth),
        identity=ClientIdentity(info=CLIENT_INFO),
        revisions=BOTH_ERAS,
        handlers=STATELESS_HANDLERS,
    ) as client:
        tools = (await client.list_tools(timeout=TIMEOUT)).tools
        for tool in tools[:1]:
            await client.call_tool(tool.name, {}, timeout=TIMEOUT, validate_output=False)


SCENARIOS: dict[str, Callable[[str], Awaitable[None]]] = {
    "initialize": initialize,
    "tools_call": tools_call,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "sse-retry": sse_retry,
    "json-schema-2020-12-preservation": json_schema_preservation,
    "request-metadata": every_feature,
    "http-standard-headers": every_feature,
    "http-custom-headers": call_the_given_tools,
    "http-invalid-tool-headers": call_every_listed_tool,
    "sep-2322-client-request-state": call_every_listed_tool,
    "json-schema-ref-no-deref": list_only,
    "sep-2640-client-no-prefetch": list_skills_only,
    "sep-2640-client-verify-digest": load_first_skill,
    "sep-2640-client-verify-size": load_first_skill,
    "sep-2640-client-verify-frontmatter": load_first_skill,
}


def main(argv: list[str]) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if len(argv) < 2:
        print("usage: everything_client.py SERVER_URL (scenario in MCP_CONFORMANCE_SCENARIO)")
        return 2
    run = SCENARIOS.get(scenario) or (authorized if scenario.startswith("auth/") else None)
    if run is None:
        known = ", ".join(SCENARIOS)
        print(f"unknown scenario {scenario!r}; this client knows: {known}", file=sys.stderr)
        return 2
    try:
        trio.run(run, argv[-1])
    except (ScenarioFailed, mcptrio.McpError, AuthorizationError) as exc:
        print(f"scenario {scenario} failed: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s", stream=sys.stderr)
    sys.exit(main(sys.argv))
