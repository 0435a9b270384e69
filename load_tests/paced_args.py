"""The paced generator's command line: its options, their bounds, and the nodes' settings.

Bounded on purpose: loopback targets only, at most 3,500 tables, 900 s, 16 generator processes
and 8 nodes; and no run that would pass the open-files limit (raised to the hard limit first).
"""

from __future__ import annotations

import argparse
import math

from load_tests.cluster import check_target, raise_open_files_limit
from load_tests.think import SERVER_BETWEEN_HANDS

MAX_TABLES = 3500
MAX_DURATION = 900.0
MAX_PROCS = 16
FD_SPARE = 200  # descriptors besides the sockets: Redis, logs, pipes, the loop
# The private PostgreSQL takes 50 connections (tests/support/postgres.py); a node's engine pool
# opens up to 15 (SQLAlchemy's 5 and 10 more on demand).
POSTGRES_NODES = 3
BOT_THINK = 0.8  # the server's default bot think time, scaled with the players


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m load_tests.paced",
        description="Paced, open-loop load: tables of people arriving at a rate.",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--url", help="a running service's WebSocket URL (loopback only)")
    where.add_argument("--start", type=int, metavar="N", help="start N nodes here (default 1)")
    parser.add_argument("--redis-url", help="with --url: its Redis, to count round trips")
    parser.add_argument(
        "--pid", type=int, action="append", default=[], help="with --url: a node's pid (repeat)"
    )
    parser.add_argument(
        "--tables", type=int, default=10, help=f"tables (with --ramp: the most), ≤ {MAX_TABLES}"
    )
    parser.add_argument("--arrival", type=float, default=5.0, help="tables arriving per second")
    parser.add_argument("--procs", type=int, default=1, help=f"generator processes, ≤ {MAX_PROCS}")
    parser.add_argument("--think", type=float, default=1.0, help="scale of every think time")
    parser.add_argument(
        "--duration", type=float, default=60.0, help=f"run time limit, s (≤ {MAX_DURATION:g})"
    )
    parser.add_argument("--ramp", action="store_true", help="add tables until p99 > 50 ms")
    parser.add_argument("--ramp-start", type=int, default=100, help="tables of the first step")
    parser.add_argument("--ramp-step", type=int, default=250, help="tables added per step")
    parser.add_argument("--ramp-hold", type=float, default=60.0, help="s each step is measured")
    parser.add_argument("--bots", action="store_true", help="one player and fill_bots per table")
    parser.add_argument("--spread", action="store_true", help="seats over all nodes started here")
    parser.add_argument(
        "--rejoin-host",
        action="store_true",
        help="the host moves to a /ws?room=CODE socket after open_room (for a room-hashing LB)",
    )
    parser.add_argument(
        "--redis-unix",
        action="store_true",
        help="with --start: the nodes reach the private Redis by its Unix socket, not TCP",
    )
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="with --start: the nodes share a private PostgreSQL as their store of record "
        "(else a SQLite file in the run's temp dir)",
    )
    parser.add_argument("--target", type=int, choices=(50, 100), default=50, help="game target")
    parser.add_argument("--seed", type=int, default=0, help="players' random choices")
    parser.add_argument("--plot", help="write a latency-over-time PNG here")
    parser.add_argument("--key-prefix", default="hearts", help="the store's key prefix")
    parser.add_argument("--scan-every", type=float, default=10.0, help="s between state scans")
    parser.add_argument("--no-deflate", action="store_true", help="offer no permessage-deflate")
    parser.add_argument("--no-verify", action="store_true", help="skip checking hand audits")
    codec = parser.add_mutually_exclusive_group()
    codec.add_argument("--binary", dest="json", action="store_false", help="msgpack (default)")
    codec.add_argument("--json", dest="json", action="store_true", help="JSON text frames")
    parser.set_defaults(json=False)
    args = parser.parse_args(argv)
    if not 1 <= args.tables <= MAX_TABLES:
        parser.error(f"--tables must be 1..{MAX_TABLES}")
    if not 0 < args.duration <= MAX_DURATION:
        parser.error(f"--duration must be in (0, {MAX_DURATION:g}]")
    if not 1 <= args.procs <= MAX_PROCS:
        parser.error(f"--procs must be 1..{MAX_PROCS}")
    if not 0 < args.arrival <= 1000:
        parser.error("--arrival must be in (0, 1000] tables/s")
    if not 0 < args.think <= 10:
        parser.error("--think must be in (0, 10]")
    if args.ramp_start < 1 or args.ramp_step < 1 or args.ramp_hold <= 0:
        parser.error("--ramp-start and --ramp-step must be ≥ 1, --ramp-hold > 0")
    if args.scan_every <= 0:
        parser.error("--scan-every must be > 0")
    check_target(parser, args, default_nodes=1)
    if args.postgres and args.url is not None:
        parser.error("--postgres goes with --start (a running service has its own database)")
    if args.postgres and args.start > POSTGRES_NODES:
        parser.error(f"--postgres serves at most {POSTGRES_NODES} nodes (its 50 connections)")
    limit = raise_open_files_limit()
    sockets = (1 if args.bots else 4) * args.tables
    if math.ceil(sockets / args.procs) + FD_SPARE > limit:
        parser.error(
            f"{sockets} sockets in {args.procs} process(es) pass the open-files limit {limit}: "
            "use more --procs"
        )
    if args.url is None and math.ceil(sockets / args.start) + FD_SPARE > limit:
        parser.error(f"{sockets} sockets on {args.start} node(s) pass the open-files limit {limit}")
    return args


def node_settings(args: argparse.Namespace) -> dict[str, str]:
    """The server's default clocks; its pauses scaled like the players' thinking."""
    return {
        "HEARTS_BETWEEN_HANDS": f"{SERVER_BETWEEN_HANDS * args.think:g}",
        "HEARTS_BOT_THINK": f"{BOT_THINK * args.think:g}",
        "HEARTS_MAX_CONNECTIONS": str(4 * MAX_TABLES + 1000),
    }
