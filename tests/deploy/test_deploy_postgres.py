"""deploy/'s PostgreSQL, run for real on this machine's own binaries (never its shared server).

- ``postgres-entrypoint.sh``, the entry point of the image that stands in for the public
  postgres image in compose (Dockerfile.postgres), makes the user and the database on an empty
  data directory, lets a node migrate it with the password, refuses a wrong one, and on a
  second start keeps what is there;
- ``local-cluster.sh`` starts a private PostgreSQL beside its private Redis and hands every node
  the same HEARTS_DATABASE_URL: an account made through one node logs in through the other,
  its row is in that database, no node fell back to a SQLite file of its own, and stopping the
  script stops the database too.

Both need Debian's PostgreSQL (``make system-deps``); the second also redis-server and haproxy.
As root PostgreSQL runs as the postgres user, as the script and tests/support/postgres.py do.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pwd
import queue
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.record.migrate import check, head, migrate
from tests.support.postgres import postgres_bin

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
PG_BIN = postgres_bin()

needs_postgres = pytest.mark.skipif(PG_BIN is None, reason="PostgreSQL is not installed")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def _postgres_folder() -> Iterator[tuple[Path, list[str]]]:
    """A temp folder PostgreSQL may write to, and the prefix that runs a command as its user."""
    root = Path(tempfile.mkdtemp(prefix="hearts-test-entrypoint-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        account = pwd.getpwnam("postgres")
        os.chown(root, account.pw_uid, account.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    try:
        yield root, as_user
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _start_entrypoint(
    root: Path, as_user: list[str], port: int, env: dict[str, str]
) -> subprocess.Popen[str]:
    assert PG_BIN is not None
    sockets = root / "sockets"
    variables = [f"{k}={v}" for k, v in env.items()]
    return subprocess.Popen(
        [
            *as_user,
            "env",
            f"PGDATA={root / 'data'}",
            f"PG_BIN={PG_BIN}",
            *variables,
            str(DEPLOY / "postgres-entrypoint.sh"),
            # Here, unlike in a container: loopback only, a free port, a socket of its own.
            "-p",
            str(port),
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            f"unix_socket_directories={sockets}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _stop(root: Path, server: subprocess.Popen[str]) -> str:
    """SIGINT to the postmaster (what the image's STOPSIGNAL sends); its output."""
    pid_file = root / "data" / "postmaster.pid"
    if pid_file.exists():
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid_file.read_text().split()[0]), signal.SIGINT)
    try:
        out, _ = server.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        out, _ = server.communicate()
    return out


async def _until_migrated(url: str, server: subprocess.Popen[str]) -> str:
    deadline = time.monotonic() + 60
    while True:
        try:
            return await migrate(url)
        except Exception:  # not up yet (refused, or still starting)
            assert server.poll() is None, "the entry point exited"
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.3)


@needs_postgres
def test_the_postgres_entrypoint_makes_the_database_and_then_keeps_it() -> None:
    password = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
    port = _free_port()
    url = f"postgresql+asyncpg://hearts:{password}@127.0.0.1:{port}/hearts"
    with _postgres_folder() as (root, as_user):
        (root / "sockets").mkdir()
        if as_user:
            shutil.chown(root / "sockets", "postgres", "postgres")
        made = {"POSTGRES_USER": "hearts", "POSTGRES_DB": "hearts", "POSTGRES_PASSWORD": password}
        server = _start_entrypoint(root, as_user, port, made)
        try:
            assert asyncio.run(_until_migrated(url, server)) == head()
            wrong = url.replace(password, "not-the-password")
            with pytest.raises(Exception, match="password authentication failed"):
                asyncio.run(check(wrong))
        finally:
            out = _stop(root, server)
        assert "made a new database cluster" in out and "(user hearts, database hearts)" in out
        # Started again on the same data, without the password: nothing is made again, the
        # schema and the password are what they were.
        server = _start_entrypoint(root, as_user, port, {"POSTGRES_USER": "hearts"})
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    assert asyncio.run(check(url)) == head()
                    break
                except AssertionError:
                    raise
                except Exception:
                    assert server.poll() is None and time.monotonic() < deadline
                    time.sleep(0.3)
        finally:
            out = _stop(root, server)
        assert "made a new database cluster" not in out


# -- local-cluster.sh ------------------------------------------------------------------------


def _consecutive_free_ports(count: int) -> int:
    """A port p with p … p+count-1 all free on loopback (as local-cluster.sh needs)."""
    for _ in range(200):
        first = _free_port()
        if first + count > 65000:
            continue
        try:
            with contextlib.ExitStack() as stack:
                for port in range(first, first + count):
                    sock = stack.enter_context(socket.socket())
                    sock.bind(("127.0.0.1", port))
            return first
        except OSError:
            continue
    raise RuntimeError("no run of free ports")


def _post(url: str, body: dict[str, Any], token: str = "") -> dict[str, Any]:
    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, json.dumps(body).encode(), headers)
    with urllib.request.urlopen(request, timeout=10) as answer:
        result: dict[str, Any] = json.loads(answer.read())
        return result


def _get(url: str, token: str) -> dict[str, Any]:
    request = urllib.request.Request(url, headers={"authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        result: dict[str, Any] = json.loads(answer.read())
        return result


async def _database_facts(url: str, name: str) -> tuple[str, list[str], int]:
    """The schema's revision, the names of accounts called ``name``, and how many sessions of
    the database's user other than this one are open."""
    import asyncpg

    connection = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        revision = await connection.fetchval("SELECT version_num FROM alembic_version")
        names = [r["name"] for r in await connection.fetch(
            "SELECT name FROM accounts WHERE name = $1", name
        )]  # fmt: skip
        others = await connection.fetchval(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND usename = current_user"
            " AND pid <> pg_backend_pid()"
        )
    finally:
        await connection.close()
    return str(revision), names, int(others)


@pytest.mark.e2e
@needs_postgres
@pytest.mark.skipif(
    shutil.which("redis-server") is None or shutil.which("haproxy") is None,
    reason="redis-server or haproxy is not installed",
)
def test_local_cluster_nodes_share_one_postgres(tmp_path: Path) -> None:
    lb = _consecutive_free_ports(3)  # the balancer, then node1 and node2
    data_dir = tmp_path / "data"  # where a node without the URL would make its SQLite file
    env = dict(os.environ, HEARTS_DATA_DIR=str(data_dir), HEARTS_BOT_WORKERS="0")
    env.pop("HEARTS_DATABASE_URL", None)
    script = subprocess.Popen(
        ["bash", str(DEPLOY / "local-cluster.sh"), "-n", "2", "-p", str(lb)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
        start_new_session=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()

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
            assert line is not None, f"the script ended: {''.join(printed)}{script.stderr.read()}"  # type: ignore[union-attr]
            printed.append(line)
        text = "".join(printed)
        match = re.search(r"^  postgres +(\S+) +pid (\d+)$", text, re.M)
        assert match, text
        database_url, postmaster = match.group(1), int(match.group(2))
        work = Path(re.search(r"^  logs +(\S+)", text, re.M).group(1))  # type: ignore[union-attr]
        cluster_env = (work / "cluster.env").read_text()
        assert f"DATABASE_URL={database_url}\n" in cluster_env
        # Its own server: a free port on loopback, never the machine's shared 5432.
        assert re.match(
            r"postgresql\+asyncpg://hearts:[0-9a-f]+@127\.0\.0\.1:\d+/hearts$", database_url
        )
        assert not database_url.endswith(":5432/hearts")

        # An account made through node1 logs in through node2, and node2 knows node1's session.
        node1, node2 = f"http://127.0.0.1:{lb + 1}", f"http://127.0.0.1:{lb + 2}"
        made = _post(
            f"{node1}/api/signup", {"name": "Shared Ann", "password": "a long pass phrase"}
        )
        again = _post(
            f"{node2}/api/login", {"name": "Shared Ann", "password": "a long pass phrase"}
        )
        assert again["player"] == made["player"] and again["account"] is True
        assert _get(f"{node2}/api/me", made["token"])["player"] == made["player"]
        with pytest.raises(urllib.error.HTTPError):
            _post(f"{node2}/api/login", {"name": "Shared Ann", "password": "not the pass phrase"})

        # The row is in the script's PostgreSQL, migrated to the newest revision; both nodes
        # hold sessions there; neither made a SQLite file of its own.
        revision, names, others = asyncio.run(_database_facts(database_url, "Shared Ann"))
        assert revision == head()
        assert names == ["Shared Ann"]
        assert others >= 2, "each node keeps a pooled session open"
        assert not data_dir.exists() or not any(data_dir.iterdir())
    finally:
        if script.poll() is None:
            os.kill(script.pid, signal.SIGTERM)
        try:
            script.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(script.pid, signal.SIGKILL)
            script.wait()
    # Stopped in order, the database with the rest, and the temp dir removed (no failure).
    assert script.returncode == 143, script.stderr.read()  # type: ignore[union-attr]
    assert _ends(postmaster), "PostgreSQL was left running"
    assert not work.exists()


def _ends(pid: int, within: float = 5.0) -> bool:
    """The process is gone (or a zombie its new parent has yet to reap) within ``within`` s."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.1)
    return False
