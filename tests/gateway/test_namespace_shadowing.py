"""Upstream names that would let one upstream's tool shadow another's through the separator
(``a`` with ``b_c`` and ``a_b`` with ``c`` are both ``a_b_c``) are refused when configured."""

from __future__ import annotations

from typing import Any

import pytest
import trio

import mcptrio
from mcptrio.gateway import ConfigError, Gateway, Upstream, parse_config


def server_with(tool: str, said: list[str]) -> mcptrio.Server:
    server = mcptrio.Server(tool)

    async def call(api_key: str) -> str:
        said.append(f"{tool} got {api_key}")
        return "ok"

    server.add_tool(call, name=tool)
    return server


@pytest.mark.parametrize("order", ["prefix first", "prefix last"])
async def test_an_upstream_named_after_another_plus_the_separator_is_refused(order: str) -> None:
    said: list[str] = []
    upstreams = [
        Upstream(name="a", target=server_with("b_c", said), in_process=False),
        Upstream(name="a_b", target=server_with("c", said), in_process=False),
    ]
    if order == "prefix last":
        upstreams.reverse()
    with pytest.raises(ValueError, match=r"^Upstreams 'a' and 'a_b': .*'a_b_c'") as refused:
        Gateway(upstreams=upstreams)
    assert "\n" not in str(refused.value)


def test_namespaces_that_make_a_prefix_of_one_another_are_refused() -> None:
    gateway = Gateway(upstreams=[Upstream(name="x", namespace="gh", target=mcptrio.Server("x"))])
    with pytest.raises(ValueError, match=r"^Upstreams 'x' and 'y': the namespace 'gh_pr' begins"):
        gateway.add_upstream(Upstream(name="y", namespace="gh_pr", target=mcptrio.Server("y")))
    assert list(gateway.upstreams) == ["x"]


def test_a_rename_into_another_upstreams_namespace_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^Upstream 'x' renames 'search' to 'gh_search'.*'gh'"):
        Gateway(
            upstreams=[
                Upstream(name="gh", target=mcptrio.Server("gh")),
                Upstream(name="x", target=mcptrio.Server("x"), rename={"search": "gh_search"}),
            ]
        )
    with pytest.raises(ValueError, match=r"^Upstreams 'x' and 'y' both rename a tool to 'find'"):
        Gateway(
            upstreams=[
                Upstream(name="x", target=mcptrio.Server("x"), rename={"search": "find"}),
                Upstream(name="y", target=mcptrio.Server("y"), rename={"lookup": "find"}),
            ]
        )


@pytest.mark.parametrize(
    ("servers", "message"),
    [
        ({"a": {}, "a_b": {}}, r"^Upstreams 'a' and 'a_b': the namespace 'a_b' begins with 'a_'"),
        (
            {"one": {"namespace": "n"}, "two": {"namespace": "n"}},
            r"^Upstreams 'one' and 'two' have the same namespace 'n'",
        ),
    ],
)
def test_a_config_whose_names_could_shadow_is_an_error_naming_both(
    servers: dict[str, dict[str, Any]], message: str
) -> None:
    config = {"mcpServers": {name: {"command": "srv", **e} for name, e in servers.items()}}
    with pytest.raises(ConfigError, match=message):
        parse_config(config)


async def test_namespaces_that_only_share_a_beginning_serve_every_tool() -> None:
    said: list[str] = []
    gateway = Gateway(
        upstreams=[
            Upstream(name="a", target=server_with("b_c", said), in_process=False),
            Upstream(name="ab", target=server_with("c", said), in_process=False),
            Upstream(name="a-b", target=server_with("c", said), in_process=False),
        ]
    )
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(gateway.serve_upstreams)
            async with mcptrio.open_client(gateway) as client:
                names = sorted(t.name for t in (await client.list_tools()).tools)
                assert names == ["a-b_c", "a_b_c", "ab_c"]
                await client.call_tool("a_b_c", {"api_key": "k1"})
                assert said == ["b_c got k1"]
            nursery.cancel_scope.cancel()
