"""Paced, open-loop load: tables of people arriving at a rate, thinking as people do.

    python -m load_tests.paced --start 1 --tables 20 --arrival 5 --duration 60
    python -m load_tests.paced --start 1 --tables 4 --think 0.05 --duration 8 --plot /tmp/p.png
    python -m load_tests.paced --start 2 --procs 3 --ramp --ramp-start 250 --ramp-step 250 \\
        --tables 3500 --arrival 50 --duration 900 --plot ramp.png
    python -m load_tests.paced --url ws://127.0.0.1:8000/ws --redis-url redis://127.0.0.1:6390/0 \\
        --pid PID [--pid PID …] --tables 100

Unlike ``load_tests.load`` (closed loop: every answer at once, the server sets the pace), the
players here think (``load_tests.think``: lognormal pauses, a few seconds to pass, a second or
two per card; ``--think`` scales them), so the offered load is set by the number of tables,
and latency is what a person at a table would see. Tables arrive at ``--arrival`` tables a
second, spread over ``--procs`` generator processes (``load_tests.paced_worker``), each with its
own lean socket players (``load_tests.paced_table``: four humans per table, or ``--bots``: a
host and three server bots). Without ``--url`` it starts a private redis-server and N nodes
here (``load_tests.cluster``), with the server's default clocks and its pause between hands
and bot think time scaled by ``--think``. This module is the command line; the run itself is
``load_tests.paced_run``, its options ``load_tests.paced_args``, its report lines and plot
``load_tests.paced_report``.

Measured: send → ok of every move, send → the last seat's ``card_played`` of every play; node
CPU and Redis round trips per card, node memory per seated socket, the largest room state in
the store, hands dealt with a stand-in secret. ``--ramp`` adds tables step by step
(``--ramp-start``, ``--ramp-step``, each held ``--ramp-hold`` s once seated) until the p99 of
either latency passes 50 ms or ``--tables``/``--duration`` is reached, and ends with
``tables_held_p99_50ms: N``; a plain run ends with ``paced_latency_ms_p99: X``.
Bounded: loopback targets only, at most 3,500 tables, 900 s, 16 generator processes, 8 nodes.
Ctrl-C or SIGTERM stop the run cleanly and print what was measured so far (exit code 130).

The nodes started here keep their store of record in the run's temp dir (SQLite), or with
``--postgres`` in one database of a private PostgreSQL server; the report also says how long
finished games waited for their row there (``load_tests.paced_archive``:
``archive_lag_ms_p99``, bucket-interpolated from the nodes' histograms, ``archived_games``,
``archived_games_in_database``, ``archive_outbox_rooms``).
"""

from __future__ import annotations

import signal
import sys
from typing import Any

from load_tests.cluster import Cluster, endpoint_for, stop_on_sigterm
from load_tests.paced_args import node_settings, parse_args
from load_tests.paced_run import PacedRun, Target


def print_node_logs(cluster: Cluster) -> None:
    for i in range(len(cluster.node_procs)):
        tail = cluster.log_tail(f"node{i + 1}", 4000)
        if tail:
            print(f"--- node{i + 1} log (its end) ---\n{tail}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    cluster: Cluster | None = None
    run: PacedRun | None = None

    def ask_stop(signum: int, frame: Any) -> None:
        if run is not None:
            run.stop_asked = True

    try:
        if args.url is not None:
            target = Target([endpoint_for(args.url)], args.pid, args.redis_url, args.url)
        else:
            cluster = Cluster(
                args.start,
                settings=node_settings(args),
                redis_unix=args.redis_unix,
                postgres=args.postgres,
            )
            with stop_on_sigterm():
                cluster.start()
            database = "PostgreSQL" if args.postgres else "SQLite"
            target = Target(
                cluster.endpoints,
                cluster.node_pids,
                cluster.redis_url,
                f"{args.start} node(s) started here, private redis-server (AOF everysec"
                + (", the nodes on its Unix socket)" if args.redis_unix else ")")
                + f", private {database} store of record",
                (cluster.database_url, database),
                cluster.database_pids,
            )
        run = PacedRun(args, target)
        signal.signal(signal.SIGINT, ask_stop)
        signal.signal(signal.SIGTERM, ask_stop)
        code = run.execute()
        if code == 1 and cluster is not None:  # errors or stand-ins: what the nodes logged
            print_node_logs(cluster)
        return code
    except KeyboardInterrupt:
        print("interrupted while starting", file=sys.stderr)
        return 130
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        if cluster is not None:
            print_node_logs(cluster)
        return 2
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if cluster is not None:
            cluster.stop()


if __name__ == "__main__":
    sys.exit(main())
