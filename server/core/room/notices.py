"""When a player is to be told, by a push, that a room needs them: the push outbox, pure.

A push goes to a human seat none of whose sockets is open (an open tab tells its player itself):

- ``turn``: the seat's decision starts while it is away, or it goes away during its decision
  (a phone whose screen went off), in a correspondence game or a live one (then before the
  reconnect grace gives the seat to a bot: a push for a seat a bot took is dropped);
- ``waited``: a correspondence game has waited ``correspondence_wait`` (48 hours) on a seat;
  the other seats may end it now;
- ``ended``: a correspondence game is over.

The step that decides it records a notice in the room's outbox (``RoomState.push``), in the
same commit as the move that caused it, the way a finished game waits in ``unarchived``. From
its time on the room is due (``clocks.next_deadline``), and the tick of whichever node claims
it asks ``notices_due``, steps ``NoticesTaken`` in (the notices stay, with a lease that is
also the retry's backoff), commits, and only then hands them to the push sender
(``server/push/``). The sender's answer comes back as ``NoticesSent``, which takes them out.
A node killed anywhere in between leaves the notices in the room: the lease runs out and any
node takes them again. So a push is sent at least once; a repeat carries the same ``Topic``
and tag, and replaces the first on the device.

Never more than one push per room and player per ``interval``: a notice waits until the
player's last push is that old, and a newer notice for a player replaces a waiting one.

The outbox, ``RoomState.push``: None when empty, else ``{"q": [entry, ...], "ok": {player:
time before which no push goes to them}, "w": [decisions already announced as waited]}``,
an entry ``[player, kind, key, at, attempts, first]`` (``at``: when it is due; ``first``:
when it was made, for its time to live). Steps replace the dict, never change it in place
(``machine.clone`` shares it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from .clocks import deciding_seats
from .commands import Event
from .state import RoomState


class Step(Protocol):
    """What these functions use of a step in progress (``step.Step``, which calls them)."""

    state: RoomState
    now: float
    events: list[Event]

KINDS = ("turn", "waited", "ended")
MAX_RETRY = 900.0  # the longest wait between two attempts at one push


@dataclass(frozen=True, slots=True)
class PushPolicy:
    """The shell's numbers, passed in: at most one push per room and player per ``interval``
    seconds; a push not confirmed is offered again ``retry``, then twice as long, ... later."""

    interval: float = 60.0
    retry: float = 15.0


@dataclass(frozen=True, slots=True)
class Notice:
    """One push to send: what the sender needs, and nothing of anyone's cards."""

    room: str
    player: str
    kind: str  # "turn" | "waited" | "ended"
    key: str  # unique in the room: confirms exactly this notice (``NoticesSent``)
    pace: str  # "live" | "correspondence"
    table: str | None  # the host's name ("Your turn at Ann's table"), None: a quick-play table
    ttl: int  # seconds the push service may keep it for an offline device
    urgency: str  # RFC 8030: "high" | "normal" | "low"
    attempt: int  # 1 for the first


@dataclass(frozen=True, slots=True)
class NoticesDue:
    """What a tick hands on: notices to send, and keys of stale ones to drop unsent."""

    send: tuple[Notice, ...]
    drop: tuple[str, ...]


def _entries(state: RoomState) -> list[list[Any]]:
    return state.push["q"] if state.push else []


def _replace(run: Step, queue: list[list[Any]], ok: dict[str, float], waited: list[str]) -> None:
    ok = {p: t for p, t in ok.items() if t > run.now}
    run.state.push = {"q": queue, "ok": ok, "w": waited} if queue or ok or waited else None


def _parts(state: RoomState) -> tuple[list[list[Any]], dict[str, float], list[str]]:
    push = state.push or {}
    return list(push.get("q", [])), dict(push.get("ok", {})), list(push.get("w", []))


def notice(run: Step, seat: int, kind: str) -> None:
    """Seat ``seat``'s player is to be told ``kind``, if none of their sockets is open."""
    st = run.state
    s = st.seats[seat]
    if s is None or s.player is None or s.conns:
        return
    player = s.player
    queue, ok, waited = _parts(st)
    queue = [e for e in queue if e[0] != player]  # the newest replaces a waiting one
    key = f"{kind}:{st.seq + len(run.events)}"
    queue.append([player, kind, key, max(run.now, ok.get(player, 0.0)), 0, run.now])
    _replace(run, queue, ok, waited)


def notice_waited(run: Step) -> None:
    """A correspondence game that has waited its wait on a seat: tell the other seats (once
    per decision) that they may end it."""
    st = run.state
    wait = st.options.clocks.correspondence_wait
    stalled = [
        f"{i}:{s.turn_since}"
        for i in deciding_seats(st)
        if (s := st.seats[i]) is not None
        and not s.is_bot
        and s.turn_since is not None
        and run.now >= s.turn_since + wait
    ]
    _, _, waited = _parts(st)
    new = [key for key in stalled if key not in waited]
    if not new:
        return
    stalled_seats = {int(key.split(":")[0]) for key in stalled}
    for i in range(4):
        if i not in stalled_seats:
            notice(run, i, "waited")
    queue, ok, _ = _parts(run.state)
    _replace(run, queue, ok, stalled)  # the decisions now announced (older ones are over)


def _relevant(state: RoomState, player: str, kind: str) -> bool:
    i = state.seat_of(player)
    if i is None:
        return False  # a bot took the seat, or the player left
    seat = state.seats[i]
    assert seat is not None
    if seat.conns:
        return False  # back at the table: the page tells them itself
    if kind == "turn":
        return i in deciding_seats(state)
    if kind == "waited":
        return state.status == "playing"
    return True


def ttl_of(kind: str, pace: str) -> int:
    if kind == "turn" and pace == "live":
        return 120  # a live seat not back within minutes is a bot's
    return 24 * 3600


def _urgency(kind: str, pace: str) -> str:
    if kind == "turn":
        return "high" if pace == "live" else "normal"
    return "normal" if kind == "waited" else "low"


def table_name(state: RoomState) -> str | None:
    """The host's name as seated (a friends' table), else None."""
    if state.host is None:
        return None
    for seat in state.seats:
        if seat is not None and state.host in (seat.player, seat.original):
            return seat.name.removesuffix(" (bot)")
    return None


def notices_due(state: RoomState, now: float) -> NoticesDue | None:
    """The notices due at ``now``: those still worth sending, and stale ones to drop."""
    send: list[Notice] = []
    drop: list[str] = []
    pace = state.options.pace
    for player, kind, key, at, attempts, first in _entries(state):
        if at > now:
            continue
        if not _relevant(state, player, kind) or now - first > ttl_of(kind, pace):
            drop.append(key)
            continue
        send.append(
            Notice(
                state.id,
                player,
                kind,
                key,
                pace,
                table_name(state),
                ttl_of(kind, pace),
                _urgency(kind, pace),
                attempts + 1,
            )
        )
    return NoticesDue(tuple(send), tuple(drop)) if send or drop else None


def notices_taken(run: Step, keys: tuple[str, ...], drop: tuple[str, ...], retry: float) -> None:
    """The shell took these notices (and dropped those): each stays, leased until its retry."""
    queue, ok, waited = _parts(run.state)
    kept: list[list[Any]] = []
    for player, kind, key, at, attempts, first in queue:
        if key in drop:
            continue
        if key in keys:
            at = run.now + min(retry * 2**attempts, MAX_RETRY)
            attempts += 1
        kept.append([player, kind, key, at, attempts, first])
    _replace(run, kept, ok, waited)


def notices_sent(run: Step, done: tuple[tuple[str, str], ...], interval: float) -> None:
    """These (player, key) pushes were delivered (or can never be): they leave the outbox, and
    their players get no other push from this room for ``interval``."""
    queue, ok, waited = _parts(run.state)
    keys = {key for _, key in done}
    for player, _ in done:
        ok[player] = run.now + interval
    kept = [
        [p, kind, key, max(at, ok.get(p, 0.0)), attempts, first]
        for p, kind, key, at, attempts, first in queue
        if key not in keys
    ]
    _replace(run, kept, ok, waited)
