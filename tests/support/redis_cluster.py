"""A private Redis Cluster for tests and benchmarks: 3 primaries and 3 replicas on free ports.

``LocalCluster.start()`` runs six ``redis-server --cluster-enabled yes`` in a temp dir, joins
them with ``redis-cli --cluster create … --cluster-replicas 1`` and waits for
``cluster_state:ok``. A small ``cluster-node-timeout`` (1 s) makes a replica take over about
two seconds after its primary is killed, so failover tests stay short.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

import redis
from redis.backoff import NoBackoff
from redis.crc import key_slot
from redis.retry import Retry

NODE_TIMEOUT_MS = 1000


def _ephemeral_floor() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _free_port(taken: list[int]) -> int:
    """A port whose cluster bus port (port + 10000) is free too, both below the kernel's
    ephemeral range: there no client socket of the test run can take either between this
    check and the node's bind. Ports come from below 20000, so no bus port is another's port."""
    top = min(20000, _ephemeral_floor() - 10000)
    while True:
        port = random.randrange(10000, top)
        if port not in taken and _bindable(port) and _bindable(port + 10000):
            return port


def _wait(check: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        try:
            last = check()  # type: ignore[operator]
            if last:
                return
        except (redis.RedisError, OSError) as exc:
            last = exc
        time.sleep(0.1)
    raise RuntimeError(f"timed out waiting for {what}: {last!r}")


@dataclass
class LocalCluster:
    primaries: int = 3
    replicas_per_primary: int = 1
    workdir: str = ""
    ports: list[int] = field(default_factory=list)
    processes: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def url(self) -> str:
        """The cluster URL the stores take (every node listed as a seed)."""
        return "redis+cluster://" + ",".join(f"127.0.0.1:{p}" for p in self.ports)

    def _spawn(self, port: int) -> subprocess.Popen[bytes]:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed (apt-get install redis-server)")
        node_dir = f"{self.workdir}/{port}"
        os.makedirs(node_dir, exist_ok=True)
        return subprocess.Popen(
            [
                binary,
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--dir",
                node_dir,
                "--save",
                "",
                "--appendonly",
                "no",
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                f"{node_dir}/nodes.conf",
                "--cluster-node-timeout",
                str(NODE_TIMEOUT_MS),
                # A primary that lost its replica keeps serving; a failover test wants it.
                "--cluster-require-full-coverage",
                "no",
                "--cluster-allow-reads-when-down",
                "no",
                # Replicas sync at once (the default waits 5 s for more replicas), and one may
                # take over however long it lost touch: a loaded test machine is slow.
                "--repl-diskless-sync-delay",
                "0",
                "--cluster-replica-validity-factor",
                "0",
                "--logfile",
                f"{node_dir}/redis.log",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def start(self) -> LocalCluster:
        self.workdir = tempfile.mkdtemp(prefix="hearts-test-cluster-")
        count = self.primaries * (1 + self.replicas_per_primary)
        while len(self.ports) < count:
            self.ports.append(_free_port(self.ports))
        for port in self.ports:
            self.processes[port] = self._spawn(port)
        for index in range(count):
            self._await_node(index)
        cli = shutil.which("redis-cli")
        if cli is None:
            raise RuntimeError("redis-cli is not installed")
        subprocess.run(
            [
                cli,
                "--cluster",
                "create",
                *(f"127.0.0.1:{p}" for p in self.ports),
                "--cluster-replicas",
                str(self.replicas_per_primary),
                "--cluster-yes",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=60,
        )
        _wait(self.healthy, 30, "cluster_state:ok on every node")
        _wait(self.replicas_in_sync, 30, "every replica in sync with its primary")
        return self

    def _await_node(self, index: int, attempts: int = 3) -> None:
        """Wait for the node at ``ports[index]`` to answer; one that exited (its port was
        taken after all) is started again on a new port."""
        for _attempt in range(attempts):
            port = self.ports[index]
            process = self.processes[port]
            # A read timeout and no retries (redis-py's own take 9 s): a port taken by another
            # listener accepts the connection and never answers, and the wait must look again
            # whether the node is still running.
            client = redis.Redis(
                port=port,
                socket_connect_timeout=0.2,
                socket_timeout=0.5,
                retry=Retry(NoBackoff(), 0),
            )
            try:
                # An exited node ends the wait too: it is started again below.
                up = lambda p=process, c=client: p.poll() is not None or c.ping()  # noqa: E731
                _wait(up, 10, f"redis-server on {port}")
            finally:
                client.close()
            if process.poll() is None:
                return
            del self.processes[port]
            self.ports[index] = _free_port(self.ports)
            self.processes[self.ports[index]] = self._spawn(self.ports[index])
        raise RuntimeError(f"redis-server on {self.ports[index]} did not answer")

    def replicas_in_sync(self) -> bool:
        up = 0
        for port in self.alive():
            client = redis.Redis(port=port, decode_responses=True)
            try:
                info = client.info("replication")
            finally:
                client.close()
            if info["role"] == "slave":
                if info.get("master_link_status") != "up":
                    return False
                up += 1
        return up == self.primaries * self.replicas_per_primary

    def _info(self, port: int) -> dict[str, str]:
        client = redis.Redis(port=port, socket_connect_timeout=0.2, decode_responses=True)
        try:
            info = client.cluster("INFO")  # redis-py parses it into a dict
        finally:
            client.close()
        return {str(k): str(v) for k, v in info.items()}

    def alive(self) -> list[int]:
        return [p for p, proc in self.processes.items() if proc.poll() is None]

    def healthy(self) -> bool:
        """Every live node says the cluster is ok and knows a primary for every slot."""
        return all(self._info(p).get("cluster_state") == "ok" for p in self.alive()) and all(
            self.owner_port(slot) in self.alive() for slot in (0, 8000, 16383)
        )

    def owner_port(self, slot: int) -> int:
        """The port of the primary serving ``slot``, as a live node sees it."""
        client = redis.Redis(port=self.alive()[0], decode_responses=True)
        try:
            slots = client.execute_command("CLUSTER SLOTS")  # type: ignore[no-untyped-call]
            for start, end, primary, *_ in slots:
                if start <= slot <= end:
                    return int(primary[1])
        finally:
            client.close()
        raise LookupError(slot)

    def owner_of_key(self, key: str) -> int:
        return self.owner_port(key_slot(key.encode()))

    def replica_of(self, primary: int) -> int:
        """The port of a replica of the primary on ``primary``."""
        client = redis.Redis(port=primary, decode_responses=True)
        try:
            info = client.info("replication")
        finally:
            client.close()
        return int(info["slave0"]["port"])

    def freeze(self, port: int) -> None:
        """SIGSTOP a node: it stops reading its sockets, as a badly lagging node would."""
        self.processes[port].send_signal(signal.SIGSTOP)

    def thaw(self, port: int) -> None:
        self.processes[port].send_signal(signal.SIGCONT)

    def kill(self, port: int) -> None:
        """``kill -9`` one node."""
        process = self.processes[port]
        process.kill()
        process.wait()

    def restart(self, port: int) -> None:
        """Bring a killed node back (it rejoins, as a replica if it was failed over)."""
        self.processes[port] = self._spawn(port)
        client = redis.Redis(port=port, socket_connect_timeout=0.2)
        _wait(client.ping, 10, f"redis-server on {port}")
        client.close()

    def wait_healthy(self, timeout: float = 30) -> None:
        _wait(self.healthy, timeout, "cluster_state:ok")

    def flush(self) -> None:
        """Empty every primary (data and cached scripts)."""
        for port in self.alive():
            client = redis.Redis(port=port)
            try:
                if client.execute_command("ROLE")[0] == b"master":  # type: ignore[no-untyped-call]
                    client.flushall()
                client.script_flush()
            finally:
                client.close()

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.send_signal(signal.SIGCONT)  # a frozen node dies too
                process.kill()
                process.wait()
        shutil.rmtree(self.workdir, ignore_errors=True)
