"""A real server process (``python -m server``) on a free port, for end-to-end tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEST_SECRET = "end-to-end-test-secret"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


_DATA_DIRS: dict[str | None, str] = {}


def data_dir_for(redis_url: str | None) -> str:
    """A fresh folder for the store of record's SQLite file, shared by the nodes of one Redis
    (as a deployment's nodes share one database) and kept across a node's restarts."""
    if redis_url is None:
        return tempfile.mkdtemp(prefix="hearts-e2e-data-")
    if redis_url not in _DATA_DIRS:
        _DATA_DIRS[redis_url] = tempfile.mkdtemp(prefix="hearts-e2e-data-")
    return _DATA_DIRS[redis_url]


class ServerProcess:
    def __init__(
        self,
        redis_url: str | None = None,
        port: int | None = None,
        argv: list[str] | None = None,
        **env: str,
    ) -> None:
        self.port = port or free_port()
        # What runs: ``python -m server`` unless told (e.g. the app under plain uvicorn).
        self.argv = argv or ["-m", "server"]
        self.env = {
            **os.environ,
            "HOST": "127.0.0.1",
            "PORT": str(self.port),
            "HEARTS_SECRET": TEST_SECRET,
            "HEARTS_BOT_THINK": "0",
            "HEARTS_BETWEEN_HANDS": "0",
            "HEARTS_BOT_WORKERS": "0",
            "LOG_LEVEL": "WARNING",
            # Tests make many guests from one address; the throttle tests set their own limits.
            "HEARTS_GUEST_LIMIT": "100000",
            "HEARTS_SIGNUP_LIMIT": "100000",
            "HEARTS_DATA_DIR": data_dir_for(redis_url),
            **env,
        }
        if redis_url:
            self.env["REDIS_URL"] = redis_url
        else:
            self.env.pop("REDIS_URL", None)
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = Path(f"/tmp/hearts-e2e-{self.port}.log")
        # The file is appended to (a restarted node keeps its log), and an earlier process on
        # this port may have written it: ``log()`` is what this one's processes wrote.
        self._log_from = self.log_path.stat().st_size if self.log_path.exists() else 0

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def start(self) -> ServerProcess:
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, *self.argv], cwd=ROOT, env=self.env, stdout=log, stderr=log
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.log_path.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(self.base + "/readyz", timeout=1) as resp:
                    if resp.status == 200:
                        return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("server did not become ready")

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs, as when a node dies."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()

    def log(self) -> str:
        if not self.log_path.exists():
            return ""
        with self.log_path.open("rb") as f:
            f.seek(self._log_from)
            return f.read().decode(errors="replace")
