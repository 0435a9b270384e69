"""A node's CPU with nothing seated: what it costs to keep a node up (its scheduler passes, the
deadline sweeps, heartbeats, collections), the floor under every per-card figure.

    python -m load_tests.bench_idle [--nodes N] [--settle S] [--seconds S]

Starts a private redis-server and N nodes here (``load_tests.cluster``, the load runs' set-up),
waits ``--settle`` seconds, then reads the nodes' CPU time (user + system, /proc) over
``--seconds``. The last line is ``node_idle_cpu_ms_per_s: X``, per node.
"""

from __future__ import annotations

import argparse
import time

from load_tests.cluster import Cluster
from load_tests.measures import cpu_seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=1, choices=range(1, 9))
    parser.add_argument("--settle", type=float, default=5.0)
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args(argv)
    cluster = Cluster(nodes=args.nodes)
    cluster.start()
    try:
        time.sleep(max(0.0, min(args.settle, 60.0)))
        pids = [p.pid for p in cluster.node_procs]
        before, t0 = cpu_seconds(pids), time.monotonic()
        time.sleep(max(1.0, min(args.seconds, 300.0)))
        spent, elapsed = cpu_seconds(pids) - before, time.monotonic() - t0
    finally:
        cluster.stop()
    per_node = spent / elapsed / args.nodes * 1000
    print(f"nodes: {args.nodes}, {elapsed:.1f} s measured after {args.settle:g} s of settling")
    print(f"node_idle_cpu_ms_per_s: {per_node:.1f}")


if __name__ == "__main__":
    main()
