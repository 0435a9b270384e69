"""deploy/haproxy.cfg run for real in front of local processes, as deploy/local-cluster.sh does."""

from __future__ import annotations

import re
import subprocess
import time
import urllib.request
from pathlib import Path

from tests.support.server_process import free_port

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def local_haproxy_cfg(lb: int, stats: int, ports: list[int]) -> str:
    """deploy/haproxy.cfg with local addresses on its marked lines (as local-cluster.sh does):
    the nodes are named node1, node2, … in the order of ``ports``."""
    out = []
    for line in (DEPLOY / "haproxy.cfg").read_text().splitlines():
        if "# @lb-bind" in line:
            line = f"    bind 127.0.0.1:{lb}"
        elif "# @stats-bind" in line:
            line = f"    bind 127.0.0.1:{stats}"
        elif re.match(r"\s*server node\d+ ", line):
            continue
        elif "# @servers" in line:
            line += "".join(
                f"\n    server node{i + 1} 127.0.0.1:{port}" for i, port in enumerate(ports)
            )
        out.append(line)
    return "\n".join(out) + "\n"


class LocalHaproxy:
    """HAProxy on a free loopback port in front of nodes listening on ``ports``."""

    def __init__(self, workdir: Path, ports: list[int]) -> None:
        self.port = free_port()
        self.config = workdir / "haproxy.cfg"
        self.config.write_text(local_haproxy_cfg(self.port, free_port(), ports))
        self.node_count = len(ports)
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def start(self, timeout: float = 15.0) -> LocalHaproxy:
        """Start it and wait until its health checks have found every node up."""
        self.proc = subprocess.Popen(
            ["haproxy", "-db", "-f", str(self.config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout
        seen: set[str] = set()
        # Round-robin without ?room=: every node answers in turn once its checks passed.
        while len(seen) < self.node_count:
            if time.monotonic() > deadline:
                raise RuntimeError(f"haproxy routed only to {sorted(seen)}")
            try:
                with urllib.request.urlopen(self.base + "/readyz", timeout=2) as r:
                    seen.add(str(r.headers["X-Hearts-Node"]))
            except OSError:
                time.sleep(0.1)
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
