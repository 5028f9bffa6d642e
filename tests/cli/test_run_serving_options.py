"""``mcptrio run`` with a deployment's serving options: hosts let in by flag, variable or config
file (and a refusal logged with the setting that lets it in), the path, HTTPS, and an endpoint
protected by ``--auth jwt``, in one process and with workers (issue 39, item 1)."""

from __future__ import annotations

import json
import ssl
from pathlib import Path
from urllib.parse import urlsplit

import h11
import pytest
import trio
import trustme
from cli_runner import mcptrio
from test_run_workers import SERVER, STATELESS, supervised

DISCOVER = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "server/discover",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": STATELESS,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
    }
).encode()


async def discover(
    url: str, host: str | None = None, context: ssl.SSLContext | None = None
) -> tuple[int, dict[bytes, bytes], bytes]:
    """A stateless ``server/discover`` POSTed to ``url`` with ``Host: host`` (default: the
    URL's); the status, the headers and the body."""
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    stream: trio.abc.Stream = await trio.open_tcp_stream(parts.hostname, parts.port)
    if context is not None:
        stream = trio.SSLStream(stream, context, server_hostname=parts.hostname)
    client = h11.Connection(h11.CLIENT)
    headers = [
        ("Host", host or parts.netloc),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", STATELESS),
        ("Mcp-Method", "server/discover"),
        ("Content-Length", str(len(DISCOVER))),
    ]
    data = client.send(h11.Request(method="POST", target=parts.path, headers=headers))
    data += client.send(h11.Data(data=DISCOVER)) + client.send(h11.EndOfMessage())
    async with stream:
        await stream.send_all(data)
        status, answer_headers, body = 0, {}, b""
        while True:
            event = client.next_event()
            if event is h11.NEED_DATA:
                client.receive_data(await stream.receive_some())
            elif isinstance(event, h11.Response):
                status, answer_headers = event.status_code, dict(event.headers)
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                return status, answer_headers, body


@pytest.mark.parametrize("workers", [[], ["--workers", "2"]], ids=["one-process", "two-workers"])
async def test_a_host_is_refused_with_a_logged_reason_until_allowed(workers: list[str]) -> None:
    with trio.fail_after(60):
        async with supervised(*workers) as supervisor:
            status, _, body = await discover(supervisor.url, host="mcp.example.com")
            assert status == 403
            assert b"Host not allowed" in body
            with trio.fail_after(5):
                while "mcp.example.com" not in supervisor.log:  # noqa: ASYNC110
                    await trio.sleep(0.05)
            assert (
                "refused a request with Host 'mcp.example.com': not allowed"
                " (--allow-host / MCPTRIO_ALLOW_HOSTS / allowed_hosts)" in supervisor.log
            )
        async with supervised(*workers, "--allow-host", "mcp.example.com") as supervisor:
            status, _, _ = await discover(supervisor.url, host="mcp.example.com")
            assert status == 200
            # Loopback is still let in.
            assert (await discover(supervisor.url))[0] == 200


async def test_hosts_and_the_path_come_from_variables_or_a_config_file(tmp_path: Path) -> None:
    config = tmp_path / "serving.toml"
    config.write_text('[serve]\npath = "/api/mcp"\nallow_hosts = ["file.example.com"]\n')
    env = {"MCPTRIO_ALLOW_HOSTS": "env.example.com"}
    with trio.fail_after(60):
        async with supervised("--config", config, env=env) as supervisor:
            assert supervisor.url.endswith("/api/mcp")
            # The variable wins over the file: the file's host is not let in.
            assert (await discover(supervisor.url, host="env.example.com"))[0] == 200
            assert (await discover(supervisor.url, host="file.example.com"))[0] == 403
            old_path = supervisor.url.removesuffix("/api/mcp") + "/mcp"
            assert (await discover(old_path))[0] == 404


@pytest.mark.parametrize("workers", [[], ["--workers", "2"]], ids=["one-process", "two-workers"])
async def test_certfile_and_keyfile_serve_https(tmp_path: Path, workers: list[str]) -> None:
    ca = trustme.CA()
    certificate = ca.issue_cert("127.0.0.1")
    certificate.private_key_pem.write_to_path(str(tmp_path / "key.pem"))
    certificate.cert_chain_pems[0].write_to_path(str(tmp_path / "cert.pem"))
    client_context = ssl.create_default_context()
    ca.configure_trust(client_context)
    tls = ["--certfile", tmp_path / "cert.pem", "--keyfile", tmp_path / "key.pem"]
    with trio.fail_after(60):
        async with supervised(*workers, *tls) as supervisor:
            assert supervisor.url.startswith("https://127.0.0.1:")
            status, _, body = await discover(supervisor.url, context=client_context)
            assert status == 200
            assert json.loads(body)["result"]["supportedVersions"] == [STATELESS]


async def test_auth_jwt_protects_the_endpoint_with_its_metadata() -> None:
    with trio.fail_after(60):
        async with supervised(
            "--auth",
            "jwt",
            "--resource",
            "https://mcp.example.com/mcp",
            "--issuer",
            "https://auth.example.com",
            "--jwks-url",
            "https://auth.example.com/jwks",
            "--allow-host",
            "mcp.example.com",
        ) as supervisor:
            status, headers, _ = await discover(supervisor.url)
            assert status == 401
            challenge = headers[b"www-authenticate"].decode()
            assert challenge.startswith("Bearer ")
            assert (
                'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"'
                in challenge
            )


@pytest.mark.parametrize(
    ("options", "line"),
    [
        (
            ["--allow-host", "mcp.example.com"],
            "mcptrio: error: serving options are for HTTP and WebSocket: stdio has none",
        ),
        (
            ["--transport", "http", "--auth", "jwt", "--issuer", "https://auth.example.com"],
            "mcptrio: error: --auth jwt needs --resource, --jwks-url",
        ),
        (
            ["--transport", "http", "--certfile", "nowhere.pem", "--keyfile", "nowhere.pem"],
            "mcptrio: error: --certfile nowhere.pem / --keyfile nowhere.pem: No such file or"
            " directory",
        ),
    ],
)
async def test_serving_options_that_cannot_be_used_are_one_line(
    options: list[str], line: str
) -> None:
    with trio.fail_after(60):
        ran = await mcptrio("run", SERVER, *options)
    assert ran.code == 2
    assert ran.stderr.strip().splitlines() == [line]
