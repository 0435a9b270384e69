"""Where load goes: a private redis-server and N nodes started on loopback, or a given service.

``Cluster`` starts them in one temp dir for one run and stops them all at the end. Their store
of record is private too: a SQLite file in that temp dir (``HEARTS_DATA_DIR``; never the
user's data folder, and never a ``HEARTS_DATABASE_URL`` of the environment), or with
``postgres=True`` one database on a private PostgreSQL server (``tests/support/postgres.py``:
its own temp dir and free port, never the machine's shared server) that every node shares.
``require_loopback`` keeps every generator on this machine; ``warm_up`` pays each node's
one-off costs before the memory baseline. Shared by ``load_tests.load`` and ``load_tests.paced``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import ipaddress
import os
import resource
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import asyncpg
import redis

from load_tests.measures import descendants
from load_tests.scenarios import Endpoint
from protocol.client import HeartsClient, guest
from server.record.engine import DATA_DIR_VARIABLE, DATABASE_FILE, SQLITE
from tests.support.postgres import LocalPostgres

ROOT = Path(__file__).resolve().parent.parent
MAX_NODES = 8  # nodes a generator may start here
DATABASE = "hearts"  # the database the nodes share on a private PostgreSQL
DATABASE_URL_VARIABLE = "HEARTS_DATABASE_URL"  # server/config.py

# Nodes started here answer at once: no bots think, no pause between hands, so the server's own
# speed sets the pace (what load.py wants). ``Cluster(settings=…)`` replaces them.
FAST_SETTINGS = {
    "HEARTS_BOT_THINK": "0",
    "HEARTS_BETWEEN_HANDS": "0",
    "HEARTS_BOT_WORKERS": "0",
}


def _node_module() -> str:
    """The server, or the server under a CPU profile (``load_tests.profiled_node``)."""
    return "load_tests.profiled_node" if os.environ.get("HEARTS_LOAD_PROFILE") else "server"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def die_with_parent() -> None:
    """In the child before exec: SIGTERM it if this generator dies, so nothing outlives a run."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def raise_open_files_limit() -> int:
    """Soft RLIMIT_NOFILE up to the hard limit (children inherit it); the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


@dataclass
class Cluster:
    """A private redis-server and N server nodes on loopback, in one temp dir, for one run."""

    nodes: int
    # Server settings (HEARTS_* variables) for every node, over the environment.
    settings: dict[str, str] = field(default_factory=lambda: dict(FAST_SETTINGS))
    workdir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="hearts-load-")))
    redis_port: int = 0
    node_ports: list[int] = field(default_factory=list)
    redis_proc: subprocess.Popen[bytes] | None = None
    node_procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    # The nodes reach Redis by its Unix socket, as a node beside its Redis would be set up;
    # the harness's own probes keep the TCP port.
    redis_unix: bool = False
    # The store of record on a private PostgreSQL server (else SQLite in ``data_dir``).
    postgres: bool = False
    record_server: LocalPostgres | None = None

    @property
    def data_dir(self) -> Path:
        """The nodes' ``HEARTS_DATA_DIR``: inside the run's temp dir."""
        return self.workdir / "data"

    @property
    def database_url(self) -> str:
        """The store of record every node is given (or, without PostgreSQL, finds by itself)."""
        if self.record_server is not None:
            return self.record_server.url(DATABASE)
        return f"{SQLITE}:///{self.data_dir / DATABASE_FILE}"

    @property
    def database_pids(self) -> list[int]:
        """The private PostgreSQL's postmaster (its backends are its children), if running."""
        if self.record_server is None:
            return []
        try:
            return [int((self.record_server.data / "postmaster.pid").read_text().split()[0])]
        except (OSError, ValueError, IndexError):
            return []

    @property
    def redis_url(self) -> str:
        return f"redis://127.0.0.1:{self.redis_port}/0"

    @property
    def redis_socket(self) -> Path:
        return self.workdir / "redis.sock"

    @property
    def node_redis_url(self) -> str:
        """The ``REDIS_URL`` the nodes are given."""
        if self.redis_unix:
            return f"unix://{self.redis_socket}?db=0"
        return self.redis_url

    @property
    def endpoints(self) -> list[Endpoint]:
        return [
            Endpoint(f"http://127.0.0.1:{p}", f"ws://127.0.0.1:{p}/ws") for p in self.node_ports
        ]

    @property
    def node_pids(self) -> list[int]:
        return [p.pid for p in self.node_procs]

    def _spawn(self, name: str, command: list[str], env: dict[str, str] | None = None) -> Any:
        log = (self.workdir / f"{name}.log").open("wb")
        return subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            # Own session: a terminal's Ctrl-C reaches the generator, which stops them in order.
            start_new_session=True,
            preexec_fn=die_with_parent,
        )

    def log_tail(self, name: str, chars: int = 2000) -> str:
        path = self.workdir / f"{name}.log"
        return path.read_text(errors="replace")[-chars:] if path.exists() else ""

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise SystemExit("redis-server not found: apt-get install redis-server, or use --url")
        self.redis_port = free_port()
        # The production persistence (deploy/redis.conf: AOF everysec, rewritten from 512mb):
        # the AOF's write per command is part of what a move costs. No snapshots: nothing here
        # outlives the run.
        self.redis_proc = self._spawn(
            "redis",
            [binary, "--port", str(self.redis_port), "--bind", "127.0.0.1",
             "--dir", str(self.workdir), "--save", "", "--appendonly", "yes",
             "--appendfsync", "everysec", "--maxmemory-policy", "noeviction",
             "--auto-aof-rewrite-min-size", "512mb",
             # Redis notes its own stalls (a fork, an AOF write or fsync, a slow command) of
             # this many ms and more: the paced report prints them.
             "--latency-monitor-threshold", "20",
             "--unixsocket", str(self.redis_socket), "--unixsocketperm", "700"],
        )  # fmt: skip
        client = redis.Redis(port=self.redis_port, socket_connect_timeout=0.5)
        try:
            _wait("redis-server", 10, lambda: bool(client.ping()), self.redis_proc)
        finally:
            client.close()
        if self.postgres:
            self.record_server = LocalPostgres()  # kept first: stop() removes it if start fails
            self.record_server.start()
            asyncio.run(_create_database(self.record_server.dsn(), DATABASE))

        secret = secrets.token_hex(32)  # one per run, shared: a token from one node works on all
        inherited = {k: v for k, v in os.environ.items() if k != DATABASE_URL_VARIABLE}
        record = {DATABASE_URL_VARIABLE: self.database_url} if self.record_server else {}
        for i in range(self.nodes):
            port = free_port()
            env = {
                **inherited,
                DATA_DIR_VARIABLE: str(self.data_dir),  # the SQLite store of record, if any
                **record,
                "HOST": "127.0.0.1",
                "PORT": str(port),
                "REDIS_URL": self.node_redis_url,
                "HEARTS_SECRET": secret,
                "NODE_ID": f"load-node{i + 1}",
                "LOG_LEVEL": "WARNING",
                # Every load-test guest comes from this one address.
                "HEARTS_GUEST_LIMIT": "1000000",
                "HEARTS_SIGNUP_LIMIT": "1000000",
                **self.settings,
            }
            self.node_ports.append(port)
            self.node_procs.append(
                self._spawn(f"node{i + 1}", [sys.executable, "-m", _node_module()], env)
            )
        for i, (port, proc) in enumerate(zip(self.node_ports, self.node_procs, strict=True)):
            url = f"http://127.0.0.1:{port}/readyz"
            _wait(
                f"node{i + 1} ({self.workdir / f'node{i + 1}.log'})", 30, lambda u=url: _ok(u), proc
            )

    def stop(self) -> None:
        # Nodes first (SIGTERM drains them), then Redis. A node's helpers (the bot pool's
        # forkserver and resource tracker) can outlive it: they are ended by pid afterwards.
        helpers = {
            c: _cmdline(c) for p in self.node_procs for c in descendants(p.pid) if c != p.pid
        }
        for proc in self.node_procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.node_procs:
            _reap(proc, 15)
        for pid, command in helpers.items():
            if command and _cmdline(pid) == command:  # still that process, not a reused pid
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGTERM)
        if self.redis_proc is not None:
            if self.redis_proc.poll() is None:
                self.redis_proc.terminate()
            _reap(self.redis_proc, 10)
        if self.record_server is not None:
            self.record_server.stop()  # and its temp dir
        if os.environ.get("HEARTS_LOAD_KEEP"):  # keep the nodes' and Redis's logs to read
            print(f"load: logs kept in {self.workdir}", file=sys.stderr)
            return
        shutil.rmtree(self.workdir, ignore_errors=True)


async def _create_database(dsn: str, name: str) -> None:
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute(f'CREATE DATABASE "{name}"')
    finally:
        await connection.close()


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


def _ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


def _wait(what: str, seconds: float, ready: Any, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with code {proc.returncode}")
        with contextlib.suppress(Exception):
            if ready():
                return
        time.sleep(0.05)
    raise RuntimeError(f"{what} was not ready within {seconds:.0f} s")


def _reap(proc: subprocess.Popen[bytes], seconds: float) -> None:
    try:
        proc.wait(seconds)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def require_loopback(url: str, what: str) -> None:
    """Load goes to this machine only: every address the host resolves to must be loopback."""
    host = urlparse(url).hostname
    if not host:
        raise SystemExit(f"{what}: no host in {url!r}")
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except OSError as e:
        raise SystemExit(f"{what}: cannot resolve {host!r}: {e}") from None
    if not addresses or not all(ipaddress.ip_address(a).is_loopback for a in addresses):
        raise SystemExit(
            f"{what}: {host} is not a loopback address; this tool loads only 127/8, ::1"
        )


def endpoint_for(url: str) -> Endpoint:
    parsed = urlparse(url)
    if parsed.scheme not in ("ws", "wss"):
        raise SystemExit(f"--url must be ws:// or wss://, not {url!r}")
    http = f"{'https' if parsed.scheme == 'wss' else 'http'}://{parsed.netloc}"
    return Endpoint(http, url if parsed.path else url.rstrip("/") + "/ws")


async def warm_up(endpoints: list[Endpoint], binary: bool) -> None:
    """One guest and one socket per endpoint before the memory baseline: the first connection's
    one-off costs (lazy imports, first buffers) are not charged to the load's connections."""
    for endpoint in endpoints:
        ident = await guest(endpoint.http, "warm-up")
        client = await HeartsClient.connect(endpoint.ws, ident["token"], binary=binary)
        await client.request("ping")
        await client.close()


@contextlib.contextmanager
def stop_on_sigterm() -> Iterator[None]:
    """While processes start (no event loop yet): SIGTERM ends the run like Ctrl-C."""

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def check_target(
    parser: argparse.ArgumentParser, args: argparse.Namespace, *, default_nodes: int
) -> None:
    """The options every generator shares: nodes started here (--start), or a running service
    (--url, with --redis-url and --pid to measure it), loopback only."""
    if args.url is None:
        args.start = default_nodes if args.start is None else args.start
        if not 1 <= args.start <= MAX_NODES:
            parser.error(f"--start must be 1..{MAX_NODES}")
        if args.redis_url or args.pid:
            parser.error("--redis-url and --pid go with --url (with --start they are known)")
        return
    require_loopback(args.url, "--url")
    if args.redis_url:
        require_loopback(args.redis_url, "--redis-url")
    for pid in args.pid:
        if not Path(f"/proc/{pid}").exists():
            parser.error(f"--pid {pid}: no such process")
