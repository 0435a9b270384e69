"""deploy/'s Redis Cluster variant: the files parse, agree with each other and with the code."""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

import pytest

from server.config import Settings, choose_redis_url
from server.store.redis.client.connect import cluster_url, connect, is_cluster_url
from tests.deploy.test_deploy_files import DEPLOY, MATCHMAKER_ENV, SERVER_ENV


def test_the_cluster_settings_are_read() -> None:
    assert {"REDIS_CLUSTER_URL", "HEARTS_REDIS_WAIT_REPLICAS", "HEARTS_REDIS_WAIT_MS"} <= SERVER_ENV
    assert "REDIS_CLUSTER_URL" in MATCHMAKER_ENV


def test_redis_cluster_url_wins_and_selects_the_cluster_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert choose_redis_url(None, "redis://r:6379/0") == "redis://r:6379/0"
    assert choose_redis_url("redis://a:1,b:2", "redis://r:6379/0") == "redis+cluster://a:1,b:2"
    assert choose_redis_url(None, "") is None
    assert cluster_url("rediss://u:p@a:1") == "rediss+cluster://u:p@a:1"
    with pytest.raises(ValueError):
        cluster_url("unix:///tmp/redis.sock")
    assert is_cluster_url("redis+cluster://a:1") and not is_cluster_url("redis://a:1")
    monkeypatch.setenv("REDIS_CLUSTER_URL", "redis://a:1")
    monkeypatch.setenv("HEARTS_REDIS_WAIT_REPLICAS", "1")
    settings = Settings.from_env()
    assert settings.redis_url == "redis+cluster://a:1" and settings.redis_wait_replicas == 1


def test_a_cluster_url_lists_its_seeds() -> None:
    client = connect("redis+cluster://10.0.0.1:7000,10.0.0.2:7001")
    seeds = {(n.host, n.port) for n in client.nodes_manager.startup_nodes.values()}
    assert seeds == {("10.0.0.1", 7000), ("10.0.0.2", 7001)}


@pytest.fixture(scope="module")
def yaml() -> Any:
    module = pytest.importorskip("yaml", reason="PyYAML is not installed")

    class ComposeLoader(module.SafeLoader):  # type: ignore[name-defined,misc]
        """Compose's merge tags (!override, !reset) as plain values."""

    for tag in ("!override", "!reset"):
        ComposeLoader.add_multi_constructor(
            tag, lambda loader, _suffix, node: loader.construct_object(node, deep=True)
        )
        ComposeLoader.add_constructor(
            tag,
            lambda loader, node: (
                loader.construct_mapping(node, deep=True)
                if isinstance(node, module.MappingNode)
                else loader.construct_sequence(node, deep=True)
                if isinstance(node, module.SequenceNode)
                else loader.construct_scalar(node)
            ),
        )
    module.ComposeLoader = ComposeLoader
    return module


def test_compose_cluster_override(yaml: Any) -> None:
    base = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]
    over = yaml.load((DEPLOY / "compose.cluster.yaml").read_text(), Loader=yaml.ComposeLoader)
    services = over["services"]
    assert services["redis"]["profiles"], "the single Redis must not start with the cluster"
    redis_nodes = [name for name in services if name.startswith("redis-") and name[6:].isdigit()]
    assert len(redis_nodes) == 6
    for name in redis_nodes:
        assert services[name]["command"][-2:] == ["--cluster-announce-hostname", name]
    create = " ".join(services["redis-cluster-init"]["command"])
    assert "redis-cli --cluster create" in create and "--cluster-replicas 1" in create
    clients = [name for name in base if name.startswith("node") or name == "matchmaker"]
    for name in clients:
        env = services[name]["environment"]
        assert set(env) <= SERVER_ENV | MATCHMAKER_ENV
        seeds = env["REDIS_CLUSTER_URL"].removeprefix("redis://").split(",")
        assert {s.split(":")[0] for s in seeds} == set(redis_nodes)
        assert "redis-cluster-init" in services[name]["depends_on"]
        # The override replaces depends_on: a node must still wait for PostgreSQL, and keeps the
        # base's HEARTS_DATABASE_URL (environment maps merge); the matchmaker needs neither.
        if name.startswith("node"):
            assert services[name]["depends_on"]["postgres"] == {"condition": "service_healthy"}
            assert "HEARTS_DATABASE_URL" in base[name]["environment"]
            assert "HEARTS_DATABASE_URL" not in env  # not replaced by the override
        else:
            assert "postgres" not in services[name]["depends_on"]


def test_the_k8s_cluster_config_is_a_copy_of_redis_cluster_conf(yaml: Any) -> None:
    docs = list(yaml.safe_load_all((DEPLOY / "k8s-cluster" / "redis-cluster.yaml").read_text()))
    config = next(d for d in docs if d["kind"] == "ConfigMap")
    assert config["data"]["redis.conf"] == (DEPLOY / "redis-cluster.conf").read_text()
    statefulset = next(d for d in docs if d["kind"] == "StatefulSet")
    assert statefulset["spec"]["replicas"] == 6
    conf = (DEPLOY / "redis-cluster.conf").read_text()
    for line in ("cluster-enabled yes", "appendonly yes", "maxmemory-policy noeviction"):
        assert f"\n{line}\n" in conf


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_the_k8s_cluster_overlay_builds(yaml: Any) -> None:
    built = subprocess.run(
        ["kubectl", "kustomize", str(DEPLOY / "k8s-cluster")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert built.returncode == 0, built.stderr
    objects = {(d["kind"], d["metadata"]["name"]) for d in yaml.safe_load_all(built.stdout)}
    assert ("StatefulSet", "redis-cluster") in objects and ("Job", "redis-cluster-init") in objects
    assert ("StatefulSet", "redis") not in objects, "the single Redis must be left out"
    # The store of record is the base's, unchanged: the same PostgreSQL on a Redis Cluster.
    assert {("StatefulSet", "postgres"), ("Service", "postgres")} <= objects
    server = next(
        d
        for d in yaml.safe_load_all(built.stdout)
        if (d["kind"], d["metadata"]["name"]) == ("Deployment", "hearts-server")
    )
    env = {e["name"] for e in server["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert "HEARTS_DATABASE_URL" in env
    config = next(
        d for d in yaml.safe_load_all(built.stdout) if d["metadata"]["name"] == "hearts-config"
    )
    assert config["data"]["REDIS_CLUSTER_URL"].count("redis-cluster-") == 3
