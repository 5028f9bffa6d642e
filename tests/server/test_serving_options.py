"""The serving options of a deployment: the command line over environment variables over the
``[serve]`` table of a TOML file over the defaults, each mistake one line naming where it was
set (issue 39, item 1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcptrio.server.serving_options import SETTINGS, ServingOptions, ServingOptionsError
from mcptrio.transports.http.endpoints.security import DEFAULT_ALLOWED_HOSTS


def test_the_defaults_are_loopback_only_at_mcp_without_tls_or_auth() -> None:
    options = ServingOptions.gather({}, environ={})
    assert options == ServingOptions()
    security = options.security()
    assert security.origin_host.allowed_hosts == DEFAULT_ALLOWED_HOSTS
    assert security.authenticator is None
    assert options.ssl_context() is None


def test_the_command_line_wins_over_the_environment_which_wins_over_the_file(
    tmp_path: Path,
) -> None:
    config = tmp_path / "serving.toml"
    config.write_text(
        '[serve]\npath = "/from-file"\nallow_hosts = ["file.example.com"]\n'
        'allow_origins = ["https://file.example.com"]\n'
    )
    environ = {"MCPTRIO_PATH": "/from-env", "MCPTRIO_ALLOW_HOSTS": "a.example.com, b.example.com"}
    options = ServingOptions.gather({"path": "/from-flag"}, environ, str(config))
    assert options.path == "/from-flag"
    assert options.allow_hosts == ("a.example.com", "b.example.com")
    assert options.allow_origins == ("https://file.example.com",)
    hosts = options.security().origin_host.allowed_hosts
    assert hosts == (*DEFAULT_ALLOWED_HOSTS, "a.example.com", "b.example.com")


def test_the_config_file_may_come_from_the_environment(tmp_path: Path) -> None:
    config = tmp_path / "serve.toml"
    config.write_text('[serve]\npath = "/api/mcp"\n')
    options = ServingOptions.gather({}, {"MCPTRIO_CONFIG": str(config)})
    assert options.path == "/api/mcp"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("[serve]\nallow_host = ['x']\n", "unknown [serve] setting 'allow_host'"),
        ("[serve]\npath = 3\n", "[serve] path in"),
        ("[serve]\nallow_hosts = 'x'\nscopes = [1]\n", "[serve] scopes in"),
        ("serve = 1\n", "[serve] must be a table"),
        ("[serve\n", "Expected"),
    ],
)
def test_a_bad_config_file_is_one_line_naming_it(
    tmp_path: Path, document: str, message: str
) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(document)
    with pytest.raises(ServingOptionsError) as raised:
        ServingOptions.gather({}, {}, str(config))
    text = str(raised.value)
    assert "\n" not in text
    assert text.startswith(f"--config {config}") or f"in {config}" in text
    assert message in text


def test_a_config_file_that_is_not_there_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ServingOptionsError, match=r"--config .*missing.toml: No such file"):
        ServingOptions.gather({}, {}, str(tmp_path / "missing.toml"))


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"auth": "jwt"}, "--auth jwt needs --resource, --issuer, --jwks-url"),
        (
            {"auth": "introspection", "resource": "https://m.example.com/mcp"},
            "--auth introspection needs --issuer, --introspection-url, --client-id,"
            " MCPTRIO_AUTH_CLIENT_SECRET",
        ),
        ({"certfile": "cert.pem"}, "certfile and keyfile go together: give both, or neither"),
        ({"path": "mcp"}, "path 'mcp': give a path starting with /"),
    ],
)
def test_incomplete_options_name_what_is_missing(given: dict[str, str], message: str) -> None:
    with pytest.raises(ServingOptionsError) as raised:
        ServingOptions.gather(given, {})
    assert str(raised.value) == message


def test_jwt_auth_makes_a_bearer_authenticator_for_the_resource() -> None:
    options = ServingOptions.gather(
        {
            "auth": "jwt",
            "resource": "https://mcp.example.com/mcp",
            "issuer": "https://auth.example.com",
            "jwks_url": "https://auth.example.com/jwks",
            "scopes": ["mcp:read"],
        },
        {},
    )
    authenticator = options.security().authenticator
    assert authenticator is not None
    assert authenticator.resource == "https://mcp.example.com/mcp"  # type: ignore[attr-defined]
    assert authenticator.authorization_servers == ["https://auth.example.com"]  # type: ignore[attr-defined]
    assert authenticator.scopes == frozenset({"mcp:read"})  # type: ignore[attr-defined]
    assert authenticator.verifier.audience == "https://mcp.example.com/mcp"  # type: ignore[attr-defined]


def test_a_certificate_that_cannot_be_loaded_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "cert.pem").write_text("not a certificate")
    (tmp_path / "key.pem").write_text("not a key")
    options = ServingOptions(certfile=str(tmp_path / "cert.pem"), keyfile=str(tmp_path / "key.pem"))
    with pytest.raises(ServingOptionsError) as raised:
        options.ssl_context()
    assert str(raised.value).startswith(f"--certfile {tmp_path / 'cert.pem'} / --keyfile ")
    assert "\n" not in str(raised.value)


def test_every_setting_has_a_variable_and_all_but_the_secret_a_flag() -> None:
    names = {field for field in ServingOptions.__dataclass_fields__}
    assert {setting.name for setting in SETTINGS} == names
    assert all(setting.variable.startswith("MCPTRIO_") for setting in SETTINGS)
    assert [setting.name for setting in SETTINGS if not setting.flag] == ["client_secret"]


def test_the_reference_page_lists_every_setting() -> None:
    page = Path(__file__).parents[2] / "docs" / "reference" / "serving-options.md"
    text = page.read_text()
    for setting in SETTINGS:
        assert f"`{setting.name}`" in text and f"`{setting.variable}`" in text
        if setting.flag:
            assert f"`{setting.flag}`" in text


def test_dev_auth_becomes_jwt_against_its_own_server_once_it_runs() -> None:
    options = ServingOptions(auth="dev", scopes=("mcp",))
    with pytest.raises(ServingOptionsError, match="resolved when serving starts"):
        options.security()
    resolved = options.with_issuer("http://127.0.0.1:9001", "http://127.0.0.1:8000/mcp")
    authenticator = resolved.security().authenticator
    assert resolved.auth == "jwt"
    assert resolved.jwks_url == "http://127.0.0.1:9001/jwks"
    assert authenticator.resource == "http://127.0.0.1:8000/mcp"  # type: ignore[attr-defined]
    assert authenticator.authorization_servers == ["http://127.0.0.1:9001"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("transport", "host", "port", "message"),
    [
        ("http", "0.0.0.0", 8000, "serves loopback only, not --host 0.0.0.0"),
        ("http", "192.168.1.4", 8000, "serves loopback only, not --host 192.168.1.4"),
        ("http", "127.0.0.1", 0, "needs a fixed --port"),
        ("websocket", "127.0.0.1", 8000, "protects HTTP"),
    ],
)
def test_dev_auth_is_refused_where_it_cannot_protect(
    transport: str, host: str, port: int, message: str
) -> None:
    with pytest.raises(ServingOptionsError, match=message):
        ServingOptions(auth="dev").check_served(transport, host, port)


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "[::1]", "localhost", "127.0.0.2"])
def test_dev_auth_serves_any_loopback_host(host: str) -> None:
    ServingOptions(auth="dev").check_served("http", host, 8000)


def test_the_endpoint_url_names_the_host_and_port_unless_a_resource_is_given() -> None:
    from mcptrio.server.development_authorization import endpoint_resource

    assert endpoint_resource(ServingOptions(), "::1", 8000) == "http://[::1]:8000/mcp"
    assert endpoint_resource(ServingOptions(path="/x"), "localhost", 80) == "http://localhost:80/x"
    given = ServingOptions(resource="http://dev.example/mcp")
    assert endpoint_resource(given, "127.0.0.1", 0) == "http://dev.example/mcp"
