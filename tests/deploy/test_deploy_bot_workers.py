"""deploy/: the bot workers. Compose and Kubernetes run them as a service of their own, scaled on
its own, with only the settings ``python -m server.bot_worker`` reads; the nodes send them
their bot decisions (HEARTS_BOT_QUEUE=redis); local-cluster.sh starts N of them for real."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from queue import Queue
from typing import Any

import pytest
import redis

from server.bots_queue.wire import GROUP, QueueKeys
from server.config import BOT_QUEUES
from tests.deploy.test_deploy_files import (
    DEPLOY,
    K8S,
    ROOT,
    SERVER_ENV,
    _container,
    _env_names,
    _env_names_read,
    _is_server,
)
from tests.deploy.test_deploy_postgres import _consecutive_free_ports, needs_postgres
from tests.support.client_bots import new_player, open_table, play_to_the_end

BOT_WORKER_ENV = _env_names_read(ROOT / "server" / "bot_worker.py", None, {"get"})
COMMAND = ["python", "-m", "server.bot_worker"]


@pytest.fixture(scope="module")
def yaml() -> Any:
    return pytest.importorskip("yaml", reason="PyYAML is not installed")


def test_the_workers_settings_parser_sees_its_settings() -> None:
    assert {"REDIS_URL", "REDIS_CLUSTER_URL", "NODE_ID", "LOG_LEVEL"} <= BOT_WORKER_ENV
    assert "HEARTS_BOT_CLAIM_IDLE" in BOT_WORKER_ENV
    assert {"HEARTS_BOT_QUEUE", "HEARTS_BOT_DEADLINE"} <= SERVER_ENV
    assert "redis" in BOT_QUEUES


def test_compose_runs_bot_workers_the_nodes_ask(yaml: Any) -> None:
    services = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]
    worker = services["bot-worker"]
    assert worker["command"] == COMMAND
    nodes = {name: s for name, s in services.items() if _is_server(s)}
    node = next(iter(nodes.values()))
    assert worker["image"] == node["image"] and worker["build"] == node["build"]
    env = worker["environment"]
    assert set(env) <= BOT_WORKER_ENV, f"unknown settings {set(env) - BOT_WORKER_ENV}"
    assert env["REDIS_URL"] == node["environment"]["REDIS_URL"]
    assert "HEARTS_DATABASE_URL" not in env and "postgres" not in worker["depends_on"]
    assert worker["depends_on"]["redis"] == {"condition": "service_healthy"}
    # Scalable with --scale: no fixed name, no published port; no HTTP to check.
    assert "container_name" not in worker and "ports" not in worker
    assert worker["healthcheck"] == {"disable": True}
    assert worker["stop_signal"] == "SIGTERM"
    for name, s in nodes.items():
        assert s["environment"]["HEARTS_BOT_QUEUE"] == "redis", name


def test_compose_cluster_gives_the_workers_the_cluster(yaml: Any) -> None:
    text = (DEPLOY / "compose.cluster.yaml").read_text()
    # The override's !override tags, read as plain values: only the environment matters here.
    over = yaml.safe_load(text.replace("!override", ""))["services"]
    node_env = over["node1"]["environment"]
    assert over["bot-worker"]["environment"] == node_env
    assert set(node_env) <= BOT_WORKER_ENV
    assert "redis-cluster-init" in over["bot-worker"]["depends_on"]


@pytest.mark.skipif(
    shutil.which("docker-compose") is None, reason="docker-compose is not installed"
)
def test_docker_compose_scales_the_workers(tmp_path: Path) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "HEARTS_SECRET": "x" * 64,
        "POSTGRES_PASSWORD": "0123abcd" * 8,
    }
    command = ["docker-compose", "-p", "hearts-check", "-f", str(DEPLOY / "compose.yaml")]
    result = subprocess.run(
        [*command, "config", "--services"], capture_output=True, text=True, env=env, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "bot-worker" in result.stdout.split()
    config = subprocess.run(
        [*command, "config"], capture_output=True, text=True, env=env, timeout=60
    )
    assert config.stdout.count("HEARTS_BOT_QUEUE: redis") == 3  # one per node


def _k8s(yaml: Any) -> dict[tuple[str, str], dict[str, Any]]:
    objects: dict[tuple[str, str], dict[str, Any]] = {}
    for path in sorted(K8S.glob("*.yaml")):
        if path.name != "kustomization.yaml":
            for doc in yaml.safe_load_all(path.read_text()):
                if doc:
                    objects[(doc["kind"], doc["metadata"]["name"])] = doc
    return objects


def test_k8s_bot_worker_deployment(yaml: Any) -> None:
    k8s = _k8s(yaml)
    deployment = k8s[("Deployment", "hearts-bot-worker")]
    assert deployment["spec"]["replicas"] >= 1
    container = _container(deployment)
    assert container["command"] == COMMAND
    assert container["image"] == _container(k8s[("Deployment", "hearts-server")])["image"]
    names = _env_names(container, k8s)
    # The shared ConfigMap holds the nodes' settings too; the worker reads only its own.
    assert names <= SERVER_ENV | BOT_WORKER_ENV, f"unknown {names - SERVER_ENV - BOT_WORKER_ENV}"
    assert "REDIS_URL" in names and "NODE_ID" in names
    assert "HEARTS_DATABASE_URL" not in names
    assert container["resources"]["requests"]["cpu"] == "1"  # one search at a time: one core
    assert "readinessProbe" not in container and "ports" not in container
    pod = deployment["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert k8s[("ConfigMap", "hearts-config")]["data"]["HEARTS_BOT_QUEUE"] == "redis"
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    assert "bot-worker.yaml" in kustomization["resources"]


def test_k8s_bot_worker_passes_the_schema(yaml: Any) -> None:
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    deployment = _k8s(yaml)[("Deployment", "hearts-bot-worker")]
    kubernetes_validate.validate(deployment, kubernetes_validate.latest_version(), strict=True)


# -- local-cluster.sh --bot-workers, for real -------------------------------------------------


def _run_local_cluster(lb: int, workers: int, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            "bash",
            str(DEPLOY / "local-cluster.sh"),
            "-n",
            "1",
            "-p",
            str(lb),
            "--bot-workers",
            str(workers),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
        start_new_session=True,
    )


class _Node:
    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.ws = f"ws://127.0.0.1:{port}/ws"


@pytest.mark.e2e
@needs_postgres
@pytest.mark.skipif(
    shutil.which("redis-server") is None or shutil.which("haproxy") is None,
    reason="redis-server or haproxy is not installed",
)
def test_local_cluster_starts_bot_workers_the_node_asks(tmp_path: Path) -> None:
    lb = _consecutive_free_ports(2)
    env = dict(os.environ, HEARTS_DATA_DIR=str(tmp_path / "data"), HEARTS_BOT_THINK="0")
    env.pop("HEARTS_DATABASE_URL", None)
    script = _run_local_cluster(lb, 2, env)
    lines: Queue[str | None] = Queue()

    def pump() -> None:
        assert script.stdout is not None
        for line in script.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    printed: list[str] = []
    try:
        deadline = time.monotonic() + 120
        while not printed or "stops everything" not in printed[-1]:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            assert line is not None, "".join(printed) + script.stderr.read()  # type: ignore[union-attr]
            printed.append(line)
        text = "".join(printed)
        match = re.search(r"^  bot workers 2, pids (\d+) (\d+) ", text, re.M)
        assert match, text
        pids = [int(p) for p in match.groups()]
        url = re.search(r"^  redis +(\S+)$", text, re.M).group(1)  # type: ignore[union-attr]
        client = redis.Redis.from_url(url)
        assert all(Path(f"/proc/{pid}").exists() for pid in pids)

        async def a_game() -> dict[str, Any]:
            node = _Node(lb + 1)
            host = await new_player(node, "Local")
            try:
                await open_table(node, host, {"target": 50})
                await host.request("fill_bots", level="strong")
                await host.request("start")
                return await play_to_the_end(host, timeout=120)
            finally:
                await host.close()

        over = asyncio.run(a_game())
        assert max(over["scores"]) >= 50
        # The node's bots went through the queue, to the script's workers.
        consumers: Any = client.xinfo_consumers(QueueKeys().jobs, GROUP)
        names = {c["name"].decode() for c in consumers}
        assert names and names <= {"local-bot-worker1", "local-bot-worker2"}, names
        groups: Any = client.xinfo_groups(QueueKeys().jobs)
        assert groups[0]["entries-read"] > 0 and groups[0]["pending"] == 0
        client.close()
    finally:
        if script.poll() is None:
            os.kill(script.pid, signal.SIGTERM)
        try:
            script.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(script.pid, signal.SIGKILL)
            script.wait()
    assert script.returncode == 143, script.stderr.read()  # type: ignore[union-attr]
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text()
