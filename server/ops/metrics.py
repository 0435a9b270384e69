"""Prometheus metrics of one node (served at /metrics).

Each node exports its own figures; Prometheus sums them across nodes. Only counters, gauges and
histograms that an operator acts on: connections, rooms, moves, latency, store trouble.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector

from server.ops.tallies import Tally, TallyCollector, TimedCounts

REGISTRY = CollectorRegistry(auto_describe=True)

CONNECTIONS = Gauge("hearts_connections", "Open WebSocket connections", registry=REGISTRY)
# The process's memory, CPU and open files (process_*): steady growth of
# process_resident_memory_bytes at a steady load is a leak, frozen objects included
# (server/ops/gc_pacing.py). Not gc.get_freeze_count(): it walks the whole frozen list, holding
# the event loop at every scrape.
ProcessCollector(registry=REGISTRY)
ROOMS_WATCHED = Gauge("hearts_rooms_watched", "Rooms with a socket on this node", registry=REGISTRY)
# Counted at every command, commit, store call and write: plain numbers (server.ops.tallies).
COMMANDS = TimedCounts(
    ("hearts_commands", "Client commands by type and outcome", ("type", "outcome")),
    (
        "hearts_command_seconds",
        "Time from a command's frame to its answer (includes the store commit)",
        "type",
    ),
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)
COMMITS = Tally("hearts_commits", "Room steps committed to the store")
CONFLICTS = Counter(
    "hearts_commit_conflicts_total",
    "Compare-and-set conflicts (the step was re-run)",
    registry=REGISTRY,
)
ACTOR_LOADS = Counter(
    "hearts_actor_loads_total",
    "Rooms loaded from the store into an actor (a miss, an eviction or another node's commit)",
    registry=REGISTRY,
)
STORE_CALLS = Tally(
    "hearts_store_calls",
    "Calls from this node to Redis (a command, a script or a pipeline; commits sent together "
    "in one pipeline count one each)",
)
UNREPLICATED_COMMITS = Counter(
    "hearts_unreplicated_commits_total",
    "Commits acknowledged after WAIT timed out with fewer replicas than asked for "
    "(HEARTS_REDIS_WAIT_REPLICAS): a failover could lose them",
    registry=REGISTRY,
)
STORE_ERRORS = Counter("hearts_store_errors_total", "Store calls that failed", registry=REGISTRY)
TICKS = Counter("hearts_ticks_total", "Deadline ticks run by this node", registry=REGISTRY)
BOT_SECONDS = Histogram(
    "hearts_bot_decision_seconds",
    "Bot decision time: the search alone, where it ran (a pool process or a bot worker)",
    ["level"],
    buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1.0),
    registry=REGISTRY,
)
# Bots as jobs (server/play/bot_jobs.py): from the room's ask to the answer in the node, of
# which the wait for a free worker; and the cheaper moves played when time ran short.
BOT_WAIT_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.5)
BOT_ANSWER = Histogram(
    "hearts_bot_answer_seconds",
    "From a room's ask to the bot's move in hand (queue, search and transit; at most the "
    "deadline, HEARTS_BOT_DEADLINE)",
    ["level"],
    buckets=BOT_WAIT_BUCKETS,
    registry=REGISTRY,
)
BOT_QUEUE_WAIT = Histogram(
    "hearts_bot_queue_wait_seconds",
    "From a room's ask to a worker starting on it (answers that came back only)",
    buckets=BOT_WAIT_BUCKETS,
    registry=REGISTRY,
)
BOT_QUEUE_LENGTH = Gauge(
    "hearts_bot_queue_length",
    "Bot jobs asked and not yet answered: this node's own (the pool), or the whole stream's "
    "(the queue of bot workers; the same figure on every node: take the max, not the sum)",
    registry=REGISTRY,
)
BOT_FALLBACKS = Counter(
    "hearts_bot_fallback_moves_total",
    "Bot moves of the cheaper level instead of the seat's: deadline (the node stopped "
    "waiting), late (a worker took the job past its deadline), unavailable (the queue could "
    "not be reached), unknown_level, error (the search failed), bad_view",
    ["reason"],
    registry=REGISTRY,
)
HINT_FALLBACKS = Counter(
    "hearts_hint_fallbacks_total",
    "Hints of the cheaper level instead of the one asked (same reasons as the moves')",
    ["reason"],
    registry=REGISTRY,
)
LOOP_LAG = Histogram(
    "hearts_event_loop_lag_seconds",
    "How late the node's event loop ran a timer due every 50 ms (a stall delays every table)",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
    registry=REGISTRY,
)
GC_PAUSES = Histogram(
    "hearts_gc_pause_seconds",
    "Cyclic garbage collections, each a stop of the event loop and so of every table "
    "(server/ops/gc_pacing.py)",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
    registry=REGISTRY,
)
# Fine around the 2 s aim, so a p99 interpolated from the buckets (load_tests.paced) is read
# to within a few hundred ms there.
ARCHIVE_LAG_BUCKETS = (
    0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0, 60.0, 300.0
)  # fmt: skip
ARCHIVE_LAG = Histogram(
    "hearts_archive_lag_seconds",
    "From a game's last commit to its row in the store of record (server/league/archiving.py)",
    buckets=ARCHIVE_LAG_BUCKETS,
    registry=REGISTRY,
)
PUSHES = Counter(
    "hearts_pushes_total",
    "Web Push requests to push services by outcome (delivered, gone, refused, failed, blocked)",
    ["outcome"],
    registry=REGISTRY,
)
PUSH_SECONDS = Histogram(
    "hearts_push_request_seconds",
    "One Web Push request, from resolving the push service to its answer (server/push/)",
    buckets=ARCHIVE_LAG_BUCKETS,
    registry=REGISTRY,
)
FRAMES_OUT = Tally("hearts_frames_sent", "Frames written to clients")
REGISTRY.register(TallyCollector([COMMITS, STORE_CALLS, FRAMES_OUT], [COMMANDS]))


def command_done(kind: str, outcome: str, seconds: float) -> None:
    """Count one answered command and its time."""
    COMMANDS.add((kind, outcome), seconds)
