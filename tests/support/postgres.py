"""A private PostgreSQL for tests and benchmarks: Debian's binaries, a temp dir, a free port.

Never the machine's shared server (127.0.0.1:5432): ``LocalPostgres`` runs ``initdb`` into a
fresh temp dir and starts its own ``postgres`` on a free 127.0.0.1 port, with its Unix socket in
that temp dir, trust authentication for the superuser ``hearts``, and durability off (fsync,
synchronous commit, full-page writes: a scratch server; the figures that matter here, bytes on
disk, do not depend on them). ``stop()`` kills it and removes the dir. ``halt()`` and
``resume()`` stop it as an outage would and start it again, same port, same data.

As root: PostgreSQL refuses to run as root, so the server's commands run as the unprivileged
``postgres`` user (``runuser -u postgres --``; Debian's postgresql package creates the user) and
the temp dir is handed to it. As anyone else they run as that user.

The binaries: ``initdb`` and ``pg_ctl`` on PATH, else the newest ``/usr/lib/postgresql/*/bin``
(Debian keeps them off PATH). ``make system-deps`` installs the package when neither is found.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

SUPERUSER = "hearts"
RUN_AS = "postgres"  # when root


def postgres_bin() -> Path | None:
    """The folder holding ``initdb``, ``pg_ctl`` and ``postgres``, or None."""
    found = shutil.which("initdb")
    if found is not None and shutil.which("pg_ctl") is not None:
        return Path(os.path.realpath(found)).parent
    folders = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"), key=lambda f: int(Path(f).parent.name)
    )
    return Path(folders[-1]) if folders and Path(folders[-1], "initdb").exists() else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalPostgres:
    """One throwaway PostgreSQL server; ``url(database)`` for SQLAlchemy (asyncpg)."""

    def __init__(self) -> None:
        folder = postgres_bin()
        if folder is None:
            raise RuntimeError("PostgreSQL is not installed (apt-get install postgresql)")
        self.bin = folder
        self.root = Path(tempfile.mkdtemp(prefix="hearts-test-pg-"))
        self.data = self.root / "data"
        self.sockets = self.root / "sockets"
        self.port = 0
        self._options = ""  # the server's command-line options, kept for ``resume``
        self._as_user: list[str] = []
        if os.geteuid() == 0:
            account = pwd.getpwnam(RUN_AS)  # KeyError: no postgres user to run it as
            self._as_user = ["runuser", "-u", RUN_AS, "--"]
            os.chown(self.root, account.pw_uid, account.pw_gid)
        self.sockets.mkdir()
        if self._as_user:
            os.chown(self.sockets, account.pw_uid, account.pw_gid)

    def _run(self, *command: str) -> None:
        done = subprocess.run(
            [*self._as_user, *command], capture_output=True, text=True, check=False, timeout=120
        )
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")

    def start(self) -> None:
        self._run(
            str(self.bin / "initdb"),
            "-D", str(self.data),
            "-U", SUPERUSER,
            "-A", "trust",
            "-E", "UTF8",
            "--locale=C",
            "--no-sync",
        )  # fmt: skip
        last = ""
        for _attempt in range(3):  # the free port can be taken between probing and binding
            self.port = _free_port()
            options = (
                f"-p {self.port} -c listen_addresses=127.0.0.1"
                f" -c unix_socket_directories={self.sockets}"
                " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
                " -c max_connections=50 -c shared_buffers=32MB"
            )
            try:
                self._pg_ctl_start(options)
                return
            except RuntimeError as exc:
                last = f"{exc}\n{self.log.read_text() if self.log.exists() else ''}"
                time.sleep(0.1)
        raise RuntimeError(f"could not start a private PostgreSQL: {last}")

    @property
    def log(self) -> Path:
        return self.root / "postgres.log"

    def _pg_ctl_start(self, options: str) -> None:
        self._run(
            str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.log),
            "-o", options, "-w", "-t", "30", "start",
        )  # fmt: skip
        self._options = options

    def halt(self) -> None:
        """Stop the server as an outage would (``pg_ctl stop -m fast``: every client is
        disconnected, and new connections are refused); its data and port stay, for
        ``resume``."""
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def resume(self) -> None:
        """Start the server again after ``halt``: the same port, options and data."""
        if not self._options:
            raise RuntimeError("resume() is for a server that start() started")
        self._pg_ctl_start(self._options)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+asyncpg://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def dsn(self, database: str = "postgres") -> str:
        """The same, for asyncpg itself."""
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        if self.data.exists() and self.port:
            # not running (it failed to start): nothing to stop
            with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
                self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")
        shutil.rmtree(self.root, ignore_errors=True)
