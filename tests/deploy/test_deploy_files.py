"""deploy/: the files parse, agree with each other and name only settings the code reads.

The environment variable names are checked against the source of ``Settings.from_env`` (and of
``python -m matchmaker`` for the matchmaker's own), read with ``ast``, so a renamed setting
fails here instead of being silently ignored by every container.
"""

from __future__ import annotations

import ast
import copy
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from tests.support.local_haproxy import local_haproxy_cfg

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"

# Read by the image or the Python runtime, not by the service's settings.
RUNTIME_ENV = {
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONUNBUFFERED",
    "PIP_NO_CACHE_DIR",
    "PIP_DISABLE_PIP_VERSION_CHECK",
    "PATH",
}


def _env_names_read(path: Path, function: str | None, readers: set[str]) -> set[str]:
    """String constants passed first to env-reading calls (``env.get("X")``, ``_float("X")``…)
    inside ``function`` (or the whole module)."""
    tree = ast.parse(path.read_text())
    scopes: list[ast.AST] = [tree]
    if function is not None:
        scopes = [
            n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function
        ]
        assert scopes, f"{function} not found in {path}"
    names: set[str] = set()
    for scope in scopes:
        for node in ast.walk(scope):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            first = node.args[0]
            if (
                called in readers
                and isinstance(first, ast.Constant)
                and isinstance(first.value, str)
            ):
                names.add(first.value)
    return names


SERVER_ENV = _env_names_read(ROOT / "server" / "config.py", "from_env", {"get", "_float"})
MATCHMAKER_ENV = SERVER_ENV | _env_names_read(
    ROOT / "matchmaker" / "__main__.py", None, {"get", "_env_float", "_env_or"}
)


def test_the_settings_parser_sees_the_settings() -> None:
    # Guards the checks below against a parser that silently finds nothing.
    assert {"HOST", "PORT", "REDIS_URL", "HEARTS_SECRET", "HEARTS_MATCHMAKER"} <= SERVER_ENV
    assert {"HEARTS_GRACE_PLAY", "HEARTS_BOT_THINK", "NODE_ID", "LOG_LEVEL"} <= SERVER_ENV
    assert {"HEARTS_QUEUE_TTL", "HEARTS_MATCH_INTERVAL"} <= MATCHMAKER_ENV - SERVER_ENV


@pytest.fixture(scope="module")
def yaml() -> Any:
    return pytest.importorskip(
        "yaml", reason="PyYAML is not installed (it comes with uvicorn[standard]); not added"
    )


# -- the image -------------------------------------------------------------------------------


def test_dockerfile() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    instructions = [line for line in text.splitlines() if line and not line.startswith("#")]
    # The base is a build argument defaulting to the public image; every stage starts from it.
    assert instructions[0] == "ARG BASE=python:3.11-slim"
    stages = re.findall(r"^FROM (\S+)", text, re.M)
    assert stages and set(stages) == {"${BASE}"}
    # Dependencies in their own layer, from pyproject.toml alone; then the sources, without
    # dependencies (so an edit of the code does not reinstall them).
    deps = text.index("COPY pyproject.toml ./")
    sources = text.index("COPY server ./server")
    assert deps < text.index("/opt/hearts/bin/pip install . ") < sources
    assert sources < text.index("/opt/hearts/bin/pip install --no-deps .")
    assert "COPY --from=build /opt/hearts /opt/hearts" in text
    assert re.search(r"PATH=/opt/hearts/bin:", text), "python must be the venv's"
    assert re.search(r"^USER hearts$", text, re.M), "the server must not run as root"
    assert re.search(r"HOST=0\.0\.0\.0", text) and re.search(r"^EXPOSE 8000$", text, re.M)
    assert re.search(r"^HEALTHCHECK .*\n?.*/healthz", text, re.M)
    assert 'CMD ["python", "-m", "server"]' in text
    env_names = set(re.findall(r"^\s*(?:ENV\s+)?([A-Z_]+)=", text, re.M))
    assert env_names - RUNTIME_ENV <= SERVER_ENV
    # Every source directory the distribution packages is copied in, and let through.
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text()
    for package in ("protocol", "server", "matchmaker"):
        assert f"COPY {package} " in text and f"!{package}/" in ignore


@pytest.mark.parametrize(
    ("dockerfile", "config", "user"),
    [
        ("Dockerfile.redis", "/usr/local/etc/redis/redis.conf", "redis"),
        ("Dockerfile.haproxy", "/usr/local/etc/haproxy/haproxy.cfg", "haproxy"),
    ],
)
def test_local_redis_and_haproxy_images_stand_in_for_the_public_ones(
    dockerfile: str, config: str, user: str, compose: dict[str, Any]
) -> None:
    """Built on the local base from Debian's packages, they read the config where compose mounts
    it (the public images' paths), and run as the package's own user."""
    text = (DEPLOY / dockerfile).read_text()
    assert re.search(r"^ARG BASE=\S+", text, re.M) and re.search(r"^FROM \$\{BASE\}", text, re.M)
    assert re.search(r"apt-get install -y --no-install-recommends \S+", text)
    assert re.search(rf"^USER {user}$", text, re.M)
    assert config in text
    mounts = [v for s in compose["services"].values() for v in s.get("volumes", [])]
    assert any(m.split(":")[1] == config for m in mounts)


# -- compose ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compose(yaml: Any) -> dict[str, Any]:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def _is_server(service: dict[str, Any]) -> bool:
    return "build" in service and "command" not in service


def test_compose_nodes_share_the_secret_and_redis(compose: dict[str, Any]) -> None:
    services = compose["services"]
    nodes = {name: s for name, s in services.items() if _is_server(s)}
    assert len(nodes) == 3
    for key in ("HEARTS_SECRET", "REDIS_URL"):
        values = {s["environment"][key] for s in nodes.values()}
        assert len(values) == 1, f"every node must have the same {key}"
    assert "${HEARTS_SECRET:?" in next(iter(nodes.values()))["environment"]["HEARTS_SECRET"]
    redis_url = urlparse(next(iter(nodes.values()))["environment"]["REDIS_URL"])
    assert redis_url.hostname in services and redis_url.port == 6379
    ids = {s["environment"]["NODE_ID"] for s in nodes.values()}
    assert len(ids) == 3


def test_compose_images_default_to_public_ones_and_can_be_local(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert services["redis"]["image"] == "${REDIS_IMAGE:-redis:7-alpine}"
    assert services["haproxy"]["image"] == "${HAPROXY_IMAGE:-haproxy:2.8}"
    for name, service in services.items():
        if "build" in service:
            assert service["image"] == "${HEARTS_IMAGE:-hearts-live:local}", name
            assert service["build"]["args"] == {"BASE": "${HEARTS_BASE:-python:3.11-slim}"}
            assert service["build"]["dockerfile"] == "deploy/Dockerfile"


def _compose_variables() -> set[str]:
    return set(re.findall(r"\$\{([A-Z_]+)", (DEPLOY / "compose.yaml").read_text()))


def test_smoke_script_sets_every_compose_variable() -> None:
    script = (DEPLOY / "smoke.sh").read_text()
    exported = set(re.findall(r"\b([A-Z_]+)=", script[script.index("export HEARTS_SECRET") :]))
    assert _compose_variables() <= exported | {"HEARTS_SECRET"}


@pytest.mark.skipif(
    shutil.which("docker-compose") is None, reason="docker-compose is not installed"
)
@pytest.mark.parametrize("local", [False, True], ids=["public-images", "local-images"])
def test_docker_compose_accepts_the_file(local: bool, tmp_path: Path) -> None:
    """Debian's docker-compose (1.29, the oldest one the README names) parses and resolves it;
    this needs no engine."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "HEARTS_SECRET": "x" * 64,
        "POSTGRES_PASSWORD": "0123abcd" * 8,
    }
    if local:
        env |= {
            "HEARTS_BASE": "hearts-base:bookworm",
            "HEARTS_IMAGE": "hearts-live:local",
            "REDIS_IMAGE": "hearts-redis:local",
            "POSTGRES_IMAGE": "hearts-postgres:local",
            "HAPROXY_IMAGE": "hearts-haproxy:local",
            "HEARTS_LISTEN": "127.0.0.1:18000",
        }
    command = ["docker-compose", "-p", "hearts-check", "-f", str(DEPLOY / "compose.yaml"), "config"]
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    redis = "hearts-redis:local" if local else "redis:7-alpine"
    postgres = "hearts-postgres:local" if local else "postgres:15"
    assert f"image: {redis}" in result.stdout and f"image: {postgres}" in result.stdout
    url = f"postgresql+asyncpg://hearts:{env['POSTGRES_PASSWORD']}@postgres:5432/hearts"
    assert result.stdout.count(f"HEARTS_DATABASE_URL: {url}") == 3  # one per node
    # Without either secret it refuses to start at all, with a sentence saying why.
    for secret in ("HEARTS_SECRET", "POSTGRES_PASSWORD"):
        without = {k: v for k, v in env.items() if k != secret}
        refused = subprocess.run(command, capture_output=True, text=True, env=without, timeout=60)
        assert refused.returncode != 0 and secret in refused.stderr


def test_compose_env_names_are_settings(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        env = set(service.get("environment") or {})
        if _is_server(service):
            assert env <= SERVER_ENV, f"{name}: unknown settings {env - SERVER_ENV}"
        elif "matchmaker" in service.get("command", []):
            assert env <= MATCHMAKER_ENV, f"{name}: unknown settings {env - MATCHMAKER_ENV}"


def test_compose_redis_matchmaker_and_balancer(compose: dict[str, Any]) -> None:
    services = compose["services"]
    redis = services["redis"]
    assert any(v.startswith("./redis.conf:") for v in redis["volumes"])
    assert any(":/data" in v for v in redis["volumes"]), "the AOF needs a volume"
    assert "/usr/local/etc/redis/redis.conf" in redis["command"]
    matchmaker = services["matchmaker"]
    assert matchmaker["command"] == ["python", "-m", "matchmaker"]
    assert matchmaker["healthcheck"] == {"disable": True}  # no HTTP to check
    lb = services["haproxy"]
    assert any(v.startswith("./haproxy.cfg:") for v in lb["volumes"])
    # HAProxy's backend names exactly the compose nodes, on the port they listen on.
    nodes = sorted(name for name, s in services.items() if _is_server(s))
    cfg = (DEPLOY / "haproxy.cfg").read_text()
    servers = re.findall(r"^\s*server (\S+) (\S+):(\d+)", cfg, re.M)
    assert sorted(host for _, host, _ in servers) == nodes
    assert {port for *_, port in servers} == {"8000"}


# -- PostgreSQL ------------------------------------------------------------------------------


def _interpolated(value: str) -> str:
    """A compose value with each ``${NAME...}`` replaced by ``<NAME>``: parseable as a URL."""
    return re.sub(r"\$\{([A-Z_]+)[^}]*\}", r"<\1>", value)


def test_compose_nodes_share_one_postgres(compose: dict[str, Any]) -> None:
    """Every node has the same HEARTS_DATABASE_URL, naming the postgres service, its user and
    database, and the password the service is made with; every node waits until it is healthy.
    The matchmaker needs no database (it finishes no game), so it neither has one nor waits."""
    services = compose["services"]
    postgres = services["postgres"]
    assert postgres["image"] == "${POSTGRES_IMAGE:-postgres:15}"
    env = postgres["environment"]
    assert env["POSTGRES_PASSWORD"].startswith("${POSTGRES_PASSWORD:?")
    # Its data on a named volume, where the image keeps it.
    volume, mount = postgres["volumes"][0].split(":")[:2]
    assert mount == "/var/lib/postgresql/data" and volume in compose["volumes"]
    check = postgres["healthcheck"]["test"]
    assert check[:2] == ["CMD", "pg_isready"]
    assert check[check.index("-U") + 1] == env["POSTGRES_USER"]
    assert check[check.index("-d") + 1] == env["POSTGRES_DB"]
    assert "ports" not in postgres, "the database is reached over the compose network only"
    nodes = {name: s for name, s in services.items() if _is_server(s)}
    urls = {s["environment"]["HEARTS_DATABASE_URL"] for s in nodes.values()}
    assert len(urls) == 1, "every node must have the same store of record"
    url = urlparse(_interpolated(urls.pop()))
    assert url.scheme == "postgresql+asyncpg"
    assert (url.hostname, url.port) == ("postgres", 5432)
    assert url.username == env["POSTGRES_USER"] and url.path == "/" + env["POSTGRES_DB"]
    assert url.password == "<POSTGRES_PASSWORD>"
    for name, node in nodes.items():
        assert node["depends_on"]["postgres"] == {"condition": "service_healthy"}, name
    matchmaker = services["matchmaker"]
    assert "HEARTS_DATABASE_URL" not in matchmaker["environment"]
    assert "postgres" not in matchmaker["depends_on"]


def test_the_database_url_is_what_the_node_reads() -> None:
    assert {"HEARTS_DATABASE_URL"} <= SERVER_ENV
    from server.record.engine import make_engine

    # The compose URL, with a password in its documented form (hex), makes an asyncpg engine.
    engine = make_engine("postgresql+asyncpg://hearts:" + "ab12" * 16 + "@postgres:5432/hearts")
    assert engine.dialect.name == "postgresql" and engine.dialect.driver == "asyncpg"


def test_local_postgres_image_stands_in_for_the_public_one(compose: dict[str, Any]) -> None:
    """Dockerfile.postgres: Debian's PostgreSQL 15 (the public image's major version) on the
    local base, its data where compose mounts the volume, its entry point copied in, not root,
    pg_isready on PATH for the healthcheck, stopped with SIGINT as the public image is; and
    smoke.sh builds it with the entry point in its context."""
    text = (DEPLOY / "Dockerfile.postgres").read_text()
    assert re.search(r"^ARG BASE=\S+", text, re.M) and re.search(r"^FROM \$\{BASE\}", text, re.M)
    assert re.search(r"apt-get install -y --no-install-recommends postgresql-15\b", text)
    assert re.search(r"^USER postgres$", text, re.M)
    assert re.search(r"^STOPSIGNAL SIGINT$", text, re.M)
    assert "PATH=/usr/lib/postgresql/15/bin:" in text
    mount = compose["services"]["postgres"]["volumes"][0].split(":")[1]
    assert re.search(rf"^VOLUME {mount}$", text, re.M)
    assert re.search(r"^COPY postgres-entrypoint.sh (\S+)$", text, re.M)
    assert "ENTRYPOINT [" in text
    smoke = (DEPLOY / "smoke.sh").read_text()
    assert re.search(
        r"^build hearts-postgres:local Dockerfile.postgres -C deploy .*postgres-entrypoint.sh",
        smoke,
        re.M,
    )
    assert (DEPLOY / "postgres-entrypoint.sh").stat().st_mode & 0o111


# -- Redis -----------------------------------------------------------------------------------


def _directives(text: str) -> list[str]:
    lines = (line.strip() for line in text.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def test_redis_conf_keeps_rooms_across_restarts() -> None:
    directives = _directives((DEPLOY / "redis.conf").read_text())
    assert "appendonly yes" in directives
    assert "appendfsync everysec" in directives
    assert "maxmemory-policy noeviction" in directives


# -- HAProxy ---------------------------------------------------------------------------------


def test_haproxy_cfg_shape() -> None:
    directives = _directives((DEPLOY / "haproxy.cfg").read_text())
    # Sockets name their room (/ws?room=CODE): hashed, consistently, so a room's seats meet.
    assert "balance url_param room" in directives
    assert "hash-type consistent" in directives
    assert any("/readyz" in d for d in directives)
    assert any(d.startswith("timeout tunnel") for d in directives)
    # No stickiness: any node serves any player.
    assert not any(d.split()[0] in ("cookie", "stick", "stick-table") for d in directives)
    # local-cluster.sh rewrites these marked lines; they must stay marked.
    text = (DEPLOY / "haproxy.cfg").read_text()
    for marker in ("# @lb-bind", "# @stats-bind", "# @servers"):
        assert marker in text


@pytest.mark.skipif(shutil.which("haproxy") is None, reason="haproxy is not installed")
def test_haproxy_cfg_passes_haproxy_check() -> None:
    result = subprocess.run(
        ["haproxy", "-c", "-f", str(DEPLOY / "haproxy.cfg")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    # The compose service names do not resolve here: warnings, not errors (init-addr none).
    assert result.returncode == 0, result.stdout + result.stderr


class _StubNode:
    """An HTTP server that answers 200 to everything (so /readyz passes): a node to route to."""

    def __init__(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Ok(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.skipif(shutil.which("haproxy") is None, reason="haproxy is not installed")
def test_haproxy_routes_a_room_to_one_node_and_moves_only_a_dead_nodes_rooms(
    tmp_path: Path,
) -> None:
    nodes = [_StubNode() for _ in range(3)]
    lb = _free_port()
    cfg = tmp_path / "haproxy.cfg"
    cfg.write_text(local_haproxy_cfg(lb, _free_port(), [n.port for n in nodes]))
    proxy = subprocess.Popen(
        ["haproxy", "-db", "-f", str(cfg)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )

    def node_for(path: str) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{lb}{path}", timeout=5) as r:
            return str(r.headers["X-Hearts-Node"])

    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                node_for("/readyz")
                break
            except OSError:
                assert time.monotonic() < deadline, "haproxy did not start"
                time.sleep(0.1)
        time.sleep(2.5)  # every node's health checks have passed (rise 2, inter 1s)
        rooms = [f"room{i:02d}" for i in range(30)]
        placed = {room: node_for(f"/ws?room={room}") for room in rooms}
        # One room, one node, every time; the rooms spread over all three.
        assert all(node_for(f"/ws?room={room}") == placed[room] for room in rooms[:10])
        assert set(placed.values()) == {"node1", "node2", "node3"}
        # Without a room (the HTTP API, quick play): round-robin over every node.
        assert {node_for("/api/ladder") for _ in range(6)} == {"node1", "node2", "node3"}
        # node1 dies: its rooms go elsewhere at once, every other room stays where it was.
        nodes[0].stop()
        moved = {room: node_for(f"/ws?room={room}") for room in rooms}
        for room in rooms:
            if placed[room] == "node1":
                assert moved[room] in ("node2", "node3")
            else:
                assert moved[room] == placed[room], room
    finally:
        proxy.terminate()
        proxy.wait(10)
        for n in nodes[1:]:
            n.stop()


# -- the local cluster script ----------------------------------------------------------------


SCRIPTS = ["local-cluster.sh", "smoke.sh", "postgres-entrypoint.sh"]


@pytest.mark.parametrize("name", SCRIPTS)
def test_scripts_parse(name: str) -> None:
    script = DEPLOY / name
    result = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert script.stat().st_mode & 0o111, f"{name} should be executable"


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed")
@pytest.mark.parametrize("name", SCRIPTS)
def test_scripts_shellcheck(name: str) -> None:
    result = subprocess.run(["shellcheck", str(DEPLOY / name)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


# -- Kubernetes ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def k8s(yaml: Any) -> dict[tuple[str, str], dict[str, Any]]:
    """Every object of deploy/k8s, by (kind, name)."""
    objects: dict[tuple[str, str], dict[str, Any]] = {}
    for path in sorted(K8S.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                key = (doc["kind"], doc["metadata"]["name"])
                assert key not in objects, f"{key} defined twice"
                objects[key] = doc
    return objects


def test_kustomization_lists_every_manifest(yaml: Any) -> None:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    files = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(kustomization["resources"]) == files


def _container(obj: dict[str, Any]) -> dict[str, Any]:
    containers = obj["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


def _env_names(container: dict[str, Any], k8s: dict[tuple[str, str], Any]) -> set[str]:
    """The settings a container is given: its env and its ConfigMaps' keys, less the variables
    that are there only to be interpolated into another one's value (``$(NAME)``)."""
    env = container.get("env", [])
    names = {e["name"] for e in env}
    for source in container.get("envFrom", []):
        names |= set(k8s[("ConfigMap", source["configMapRef"]["name"])]["data"])
    values = " ".join(str(e.get("value", "")) for e in env)
    return {name for name in names if f"$({name})" not in values}


def _interpolate(env: list[dict[str, Any]], name: str, known: dict[str, str]) -> str:
    """``name``'s value as the kubelet makes it: each ``$(VAR)`` replaced by ``known[VAR]``,
    which must be defined earlier in the list (later ones are left as written, silently)."""
    order = [e["name"] for e in env]
    entry = next(e for e in env if e["name"] == name)
    value = str(entry["value"])
    for var in re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", value):
        assert var in order[: order.index(name)], f"$({var}) is used before it is defined"
        value = value.replace(f"$({var})", known[var])
    return value


def test_k8s_server_deployment(k8s: dict[tuple[str, str], dict[str, Any]]) -> None:
    deployment = k8s[("Deployment", "hearts-server")]
    assert deployment["spec"]["replicas"] == 3
    pod = deployment["spec"]["template"]["spec"]
    server = _container(deployment)
    assert server["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert server["livenessProbe"]["httpGet"]["path"] == "/healthz"
    pause = server["lifecycle"]["preStop"]["exec"]["command"]
    assert pause[0] == "sleep"
    # The pause, then uvicorn's graceful shutdown (5 s), fit inside the grace period.
    assert pod["terminationGracePeriodSeconds"] >= int(pause[1]) + 10
    env = {e["name"]: e for e in server["env"]}
    assert env["HOST"]["value"] == "0.0.0.0"
    secret_ref = env["HEARTS_SECRET"]["valueFrom"]["secretKeyRef"]
    secret = k8s[("Secret", secret_ref["name"])]
    assert secret_ref["key"] in secret["stringData"]
    names = _env_names(server, k8s)
    assert names <= SERVER_ENV, f"unknown settings {names - SERVER_ENV}"
    assert {"REDIS_URL", "HEARTS_SECRET"} <= names


def test_k8s_service_and_ingress(k8s: dict[tuple[str, str], dict[str, Any]]) -> None:
    pod_labels = k8s[("Deployment", "hearts-server")]["spec"]["template"]["metadata"]["labels"]
    service = k8s[("Service", "hearts-server")]
    assert service["spec"]["selector"].items() <= pod_labels.items()
    assert "sessionAffinity" not in service["spec"]  # any node serves any player
    ingress = k8s[("Ingress", "hearts")]
    annotations = ingress["metadata"]["annotations"]
    for key in ("proxy-read-timeout", "proxy-send-timeout"):
        assert int(annotations[f"nginx.ingress.kubernetes.io/{key}"]) >= 600
    backends = [
        p["backend"]["service"]["name"]
        for rule in ingress["spec"]["rules"]
        for p in rule["http"]["paths"]
    ]
    assert backends == ["hearts-server"]


def test_k8s_redis(k8s: dict[tuple[str, str], dict[str, Any]]) -> None:
    statefulset = k8s[("StatefulSet", "redis")]
    redis = _container(statefulset)
    config_path = redis["args"][-1]
    mounts = {m["name"]: m["mountPath"] for m in redis["volumeMounts"]}
    assert config_path.startswith(mounts["config"] + "/")
    assert mounts["data"] == "/data"
    assert statefulset["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == "data"
    # The ConfigMap is a copy of deploy/redis.conf: the same directives.
    copy = k8s[("ConfigMap", "redis-config")]["data"][config_path.rsplit("/", 1)[1]]
    assert _directives(copy) == _directives((DEPLOY / "redis.conf").read_text())
    # The nodes' REDIS_URL names this Service.
    url = urlparse(k8s[("ConfigMap", "hearts-config")]["data"]["REDIS_URL"])
    assert ("Service", url.hostname) in k8s and url.port == 6379


def test_k8s_matchmaker(k8s: dict[tuple[str, str], dict[str, Any]]) -> None:
    deployment = k8s[("Deployment", "hearts-matchmaker")]
    assert deployment["spec"]["replicas"] == 1
    container = _container(deployment)
    assert container["command"] == ["python", "-m", "matchmaker"]
    assert container["image"] == _container(k8s[("Deployment", "hearts-server")])["image"]
    names = _env_names(container, k8s)
    assert names <= MATCHMAKER_ENV, f"unknown settings {names - MATCHMAKER_ENV}"
    assert "REDIS_URL" in names
    # It finishes no game, so it never writes to the store of record.
    assert "HEARTS_DATABASE_URL" not in names


def _secret_ref(entry: dict[str, Any]) -> tuple[str, str]:
    ref = entry["valueFrom"]["secretKeyRef"]
    return ref["name"], ref["key"]


def test_k8s_postgres(k8s: dict[tuple[str, str], dict[str, Any]]) -> None:
    """A PostgreSQL StatefulSet with its data on a PersistentVolumeClaim, its password from the
    Secret, a readiness probe that asks PostgreSQL itself; a Service in front of it."""
    statefulset = k8s[("StatefulSet", "postgres")]
    assert statefulset["spec"]["replicas"] == 1
    postgres = _container(statefulset)
    assert postgres["image"] == "postgres:15"
    claims = {c["metadata"]["name"]: c for c in statefulset["spec"]["volumeClaimTemplates"]}
    mounts = {m["name"]: m["mountPath"] for m in postgres["volumeMounts"]}
    assert mounts["data"] == "/var/lib/postgresql/data" and "data" in claims
    assert claims["data"]["spec"]["accessModes"] == ["ReadWriteOnce"]
    assert claims["data"]["spec"]["resources"]["requests"]["storage"]
    env = {e["name"]: e for e in postgres["env"]}
    # PGDATA inside the volume (not its root, which may hold lost+found).
    assert env["PGDATA"]["value"].startswith(mounts["data"] + "/")
    secret_name, key = _secret_ref(env["POSTGRES_PASSWORD"])
    assert key in k8s[("Secret", secret_name)]["stringData"]
    assert postgres["readinessProbe"]["exec"]["command"][0] == "pg_isready"
    assert postgres["lifecycle"]["preStop"]["exec"]["command"][:2] == ["pg_ctl", "stop"]
    service = k8s[("Service", "postgres")]
    pod_labels = statefulset["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= pod_labels.items()
    assert statefulset["spec"]["serviceName"] == "postgres"
    assert [p["port"] for p in service["spec"]["ports"]] == [5432]


def test_k8s_nodes_reach_postgres_with_the_secrets_password(
    k8s: dict[tuple[str, str], dict[str, Any]],
) -> None:
    """Every node Deployment has HEARTS_DATABASE_URL, built from the Secret's password by
    interpolation, so no ConfigMap holds it; the URL names the postgres Service, its port, and
    the user and database the StatefulSet makes. The init container that waits for the
    database reads the same URL."""
    postgres_env = {e["name"]: e for e in _container(k8s[("StatefulSet", "postgres")])["env"]}
    for (kind, _name), obj in k8s.items():
        if kind == "ConfigMap":
            assert "HEARTS_DATABASE_URL" not in obj["data"]
            assert not any("PASSWORD" in key for key in obj["data"])
    nodes = [
        obj
        for (kind, _name), obj in k8s.items()
        if kind == "Deployment" and "command" not in _container(obj)
    ]
    assert nodes, "no server Deployment found"
    for deployment in nodes:
        server = _container(deployment)
        assert "HEARTS_DATABASE_URL" in _env_names(server, k8s)
        env = {e["name"]: e for e in server["env"]}
        assert _secret_ref(env["POSTGRES_PASSWORD"]) == _secret_ref(
            postgres_env["POSTGRES_PASSWORD"]
        )
        url = urlparse(
            _interpolate(server["env"], "HEARTS_DATABASE_URL", {"POSTGRES_PASSWORD": "pw"})
        )
        assert url.scheme == "postgresql+asyncpg" and url.password == "pw"
        service = k8s[("Service", url.hostname)]
        assert url.port == service["spec"]["ports"][0]["port"]
        assert url.username == postgres_env["POSTGRES_USER"]["value"]
        assert url.path == "/" + postgres_env["POSTGRES_DB"]["value"]
        # The wait for the database reads the very same URL.
        (init,) = deployment["spec"]["template"]["spec"]["initContainers"]
        database_env = [
            e for e in server["env"] if e["name"] in ("POSTGRES_PASSWORD", "HEARTS_DATABASE_URL")
        ]
        assert init["env"] == database_env
        assert init["image"] == server["image"] and "HEARTS_DATABASE_URL" in init["command"][-1]


def test_the_wait_for_the_database_waits_and_then_goes_on(
    k8s: dict[tuple[str, str], dict[str, Any]], tmp_path: Path
) -> None:
    """The init container's script, run here: it waits while nothing listens at the URL's host
    and port, and ends once something does."""
    (init,) = k8s[("Deployment", "hearts-server")]["spec"]["template"]["spec"]["initContainers"]
    assert init["command"][:2] == ["python", "-c"]
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    url = f"postgresql+asyncpg://hearts:$(POSTGRES_PASSWORD)@127.0.0.1:{port}/hearts"
    waiting = subprocess.Popen(
        [sys.executable, "-c", init["command"][2]],
        env={"HEARTS_DATABASE_URL": url, "PATH": "/usr/bin:/bin"},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(1.5)
        assert waiting.poll() is None, "it went on while nothing listened"
        listener.listen()
        assert waiting.wait(timeout=10) == 0
        assert waiting.stdout is not None and "waiting for 127.0.0.1" in waiting.stdout.read()
    finally:
        waiting.kill()
        listener.close()


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_the_k8s_base_builds_with_postgres(yaml: Any) -> None:
    built = subprocess.run(
        ["kubectl", "kustomize", str(K8S)], capture_output=True, text=True, timeout=60
    )
    assert built.returncode == 0, built.stderr
    objects = {(d["kind"], d["metadata"]["name"]) for d in yaml.safe_load_all(built.stdout)}
    assert {("StatefulSet", "postgres"), ("Service", "postgres")} <= objects


@pytest.fixture(scope="module")
def kubernetes_validate() -> Any:
    return pytest.importorskip("kubernetes_validate")


def test_k8s_manifests_pass_the_kubernetes_schema(
    kubernetes_validate: Any, k8s: dict[tuple[str, str], dict[str, Any]]
) -> None:
    """Strict: an unknown field (a typo in a probe, a misplaced key) fails, not just a bad type."""
    version = kubernetes_validate.latest_version()
    for (kind, name), obj in k8s.items():
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except kubernetes_validate.ValidationError as e:
            pytest.fail(f"{kind}/{name}: {e.message} at {list(e.path)}")


def test_the_schema_check_can_fail(
    kubernetes_validate: Any, k8s: dict[tuple[str, str], dict[str, Any]]
) -> None:
    version = kubernetes_validate.latest_version()
    deployment = copy.deepcopy(k8s[("Deployment", "hearts-server")])
    deployment["spec"]["replicas"] = "three"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, version, strict=True)
    deployment = copy.deepcopy(k8s[("Deployment", "hearts-server")])
    deployment["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGett"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, version, strict=True)
