"""Prometheus metrics of one node (served at /metrics).

Each node exports its own figures; Prometheus sums them across nodes. Only counters, gauges and
histograms that an operator acts on: connections, rooms, moves, latency, store trouble.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

REGISTRY = CollectorRegistry(auto_describe=True)

CONNECTIONS = Gauge("hearts_connections", "Open WebSocket connections", registry=REGISTRY)
ROOMS_WATCHED = Gauge("hearts_rooms_watched", "Rooms with a socket on this node", registry=REGISTRY)
COMMANDS = Counter(
    "hearts_commands_total",
    "Client commands by type and outcome",
    ["type", "outcome"],
    registry=REGISTRY,
)
COMMAND_SECONDS = Histogram(
    "hearts_command_seconds",
    "Time from a command's frame to its answer (includes the store commit)",
    ["type"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
    registry=REGISTRY,
)
COMMITS = Counter("hearts_commits_total", "Room steps committed to the store", registry=REGISTRY)
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
STORE_CALLS = Counter(
    "hearts_store_calls_total",
    "Calls from this node to Redis (a command, a script or a pipeline; commits sent together "
    "in one pipeline count one each)",
    registry=REGISTRY,
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
    "Bot decision time",
    ["level"],
    buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1.0),
    registry=REGISTRY,
)
FRAMES_OUT = Counter("hearts_frames_sent_total", "Frames written to clients", registry=REGISTRY)


# A command's two series, by (type, outcome): both are few (the protocol's commands and error
# codes), and looking a child up by its labels takes a lock and builds a key on every command.
_COMMAND_SERIES: dict[tuple[str, str], tuple[Counter, Histogram]] = {}


def command_done(kind: str, outcome: str, seconds: float) -> None:
    """Count one answered command and its time."""
    series = _COMMAND_SERIES.get((kind, outcome))
    if series is None:
        series = COMMANDS.labels(kind, outcome), COMMAND_SECONDS.labels(kind)
        _COMMAND_SERIES[(kind, outcome)] = series
    series[0].inc()
    series[1].observe(seconds)
