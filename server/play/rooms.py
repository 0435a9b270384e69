"""The room service: the thin I/O shell around the pure room state machine.

Each command runs on the room's actor (``server.play.actors``): the decoded state this node holds,
stepped and committed as version v+1 with its events, its next deadline and any finished hand's
records in one compare-and-set. On a conflict (another node committed first) the actor reloads
and the step runs again on the fresh state. Events are published by the store only after the
commit, so nobody sees a move that is not stored.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any

import msgpack

from protocol.errors import HeartsError
from protocol.packer import pack
from server.core.bots.moves import Move
from server.core.room.clocks import next_deadline
from server.core.room.commands import (
    ArchivedGame,
    Command,
    Event,
    GamesArchived,
    NoticesSent,
    NoticesTaken,
    RoomError,
    ShiftClocks,
    Tick,
)
from server.core.room.due import BotTurn, bot_moved, due, due_bots
from server.core.room.machine import new_room, step
from server.core.room.notices import Notice, PushPolicy, notices_due
from server.core.room.state import RoomState, TableOptions
from server.league.archiving import GAME_RECORD, game_value
from server.ops import metrics
from server.play.actors import Actor, Actors
from server.play.bot_jobs import Bots, ask_together
from server.store import Archive, RoomStore, StoredEvent, StoreUnavailable

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 25
ARCHIVE_RETRY = 2.0  # a finished game the store of record could not take is offered again then
ARCHIVE_LEASE = 15.0  # a game handed to the archive is offered again after this if not taken
DEFAULT_RETENTION = 24 * 3600.0  # a room not in play expires this long after its last commit
ARCHIVED_EVENTS = {"hand_over": "over", "hand_audit": "audit"}  # event -> record kind


def encode_event(event: Event) -> bytes:
    return pack([event.audience, event.type, event.data])


def decode_event(data: bytes) -> Event:
    audience, kind, fields = msgpack.unpackb(data, raw=False)
    return Event(audience, kind, fields)


def new_room_code() -> str:
    """Unguessable: 72 random bits, URL-safe."""
    return secrets.token_urlsafe(9)


def archive_of(state: RoomState, events: list[Event]) -> Archive | None:
    """The records a step produced for the archive of the room's game: each finished hand's,
    and the game's own record when the game ended (the store of record's outbox entry,
    ``server/league/archiving.py``)."""
    records: dict[str, bytes] = {}
    for e in events:  # one pass: every commit of every card comes through here
        kind = ARCHIVED_EVENTS.get(e.type)
        if kind is not None:
            records[f"{e.data['hand']}:{kind}"] = pack(e.data)
        elif e.type == "game_over":
            records[GAME_RECORD] = pack(game_value(state))
    return Archive(state.game_id, records) if records else None


ArchiveGames = Callable[[str, Sequence[str]], Awaitable[tuple[ArchivedGame, ...] | None]]
"""Hands a room's finished games to the store of record: those it took, or None to retry."""

DeliverPushes = Callable[[Sequence[Notice]], Awaitable[tuple[tuple[str, str], ...]]]
"""Sends notices of a room's push outbox: the ``(player, key)`` of those done."""


class RoomService:
    """Runs commands on rooms and commits each step; tells its collaborators what it committed.

    ``on_commit(room, next_deadline)`` after every commit (the scheduler's alarm);
    ``on_events(room, first_seq, events)`` with a commit's events, numbered from the first
    (this node's sockets get them at once); ``on_unknown(room)`` after a commit whose outcome
    is unknown (the store did not answer: if it was applied after all, its events reach nobody
    through ``on_events``, so the room's sockets are caught up from the store instead);
    ``archive(room, game_ids)`` when finished games are due for the store of record;
    ``push(notices)`` with the notices a tick took from a room's push outbox, after that tick
    committed, in a task of its own (``server/push/sender.py``); without it they are dropped.
    """

    def __init__(
        self,
        store: RoomStore,
        bots: Bots,
        clock: Callable[[], float] = time.time,
        *,
        actors: Actors | None = None,
        retention: float = DEFAULT_RETENTION,
        on_commit: Callable[[str, float | None], None] | None = None,
        on_events: Callable[[str, int, list[Event]], None] | None = None,
        on_unknown: Callable[[str], None] | None = None,
        archive: ArchiveGames | None = None,
        push: DeliverPushes | None = None,
        push_policy: PushPolicy | None = None,
    ) -> None:
        self.store = store
        self.bots = bots
        self.clock = clock  # wall clock of NTP-synchronized nodes: never a persisted monotonic()
        self.actors = actors if actors is not None else Actors()
        self.retention = retention
        self.on_commit = on_commit
        self.on_events = on_events
        self.on_unknown = on_unknown
        self.archive = archive
        self.push = push
        self.push_policy = push_policy or PushPolicy()
        self._pushing: set[asyncio.Task[None]] = set()
        self.outage: tuple[float, float] | None = None  # the last outage (ended, delta)

    async def start(self) -> None:
        """Learn the last whole-service outage, whose downtime every room gets back on its
        next step (after the scheduler's ``recover_downtime`` recorded any new one)."""
        self.outage = await self.store.last_outage()

    def _catch_up(self, state: RoomState, now: float) -> tuple[RoomState, list[Event]]:
        """Give the room back the last outage's downtime before anything else happens."""
        if self.outage is None or state.outage_seen >= self.outage[0]:
            return state, []
        return step(state, ShiftClocks(*self.outage), now)

    async def create(
        self, *, kind: str, host: str | None, host_name: str | None, options: TableOptions
    ) -> RoomState:
        while True:
            room_id = new_room_code()
            state, events = new_room(
                room_id,
                kind=kind,
                host=host,
                host_name=host_name,
                options=options,
                seed=secrets.token_bytes(32),
                now=self.clock(),
            )
            stored = [StoredEvent(k + 1, encode_event(e)) for k, e in enumerate(events)]
            data = state.to_bytes()
            if host is not None:
                await self.store.index_seats(room_id, [host], ())  # before: never missing
            if await self.store.create_room(room_id, data, stored, next_deadline(state)):
                self.actors.get(room_id).keep(state, data, 1)
                return state

    # -- the actor's state ------------------------------------------------------------------

    async def _reload(self, actor: Actor) -> RoomState:
        """Fetch the room from the store into the actor (the caller holds its lock)."""
        try:
            snap = await self.store.load_room(actor.room_id)
        except StoreUnavailable as e:
            raise RoomError("store_unavailable") from e
        if snap is None:
            actor.drop()
            raise RoomError("room_not_found", "No room has that code.")
        state = RoomState.from_bytes(snap.state)
        actor.keep(state, snap.state, snap.version)
        metrics.ACTOR_LOADS.inc()
        return state

    async def load(self, room_id: str, *, fresh: bool = False) -> RoomState | None:
        """The room's state: this node's copy if it is known to be current, else the store's.

        ``fresh`` always asks the store (a socket entering the room must not get a view older
        than the events it will be sent from then on).
        """
        actor = self.actors.get(room_id)
        async with actor.lock:
            if actor.fresh and not fresh:
                return actor.state
            try:
                return await self._reload(actor)
            except RoomError as e:
                if e.code == "room_not_found":
                    return None
                raise

    async def apply(self, room_id: str, command: Command) -> tuple[RoomState, list[Event]]:
        """Run one command to a committed state; a HeartsError if the room refuses it."""
        actor = self.actors.get(room_id)
        async with actor.lock:
            for _ in range(MAX_ATTEMPTS):
                cached = actor.fresh
                state = actor.state if cached else await self._reload(actor)
                assert state is not None
                now = self.clock()
                shifted, early = self._catch_up(state, now)
                try:
                    new, events = step(shifted, command, now)
                except HeartsError:
                    if not cached:
                        raise
                    # The copy may be behind another node's commit (fan-out lags, or broke in
                    # a failover): a refusal is decided on the store's state, never on a guess.
                    actor.drop()
                    continue
                events = early + events
                data = new.to_bytes()
                if not events and data == actor.data:
                    return new, events  # nothing changed: nothing to store
                if await self._commit(actor, new, events, data):
                    return new, events
            raise RoomError("busy", "The room is busy; try again.")

    async def _commit(self, actor: Actor, new: RoomState, events: list[Event], data: bytes) -> bool:
        """Compare-and-set from the actor's version; on success the actor holds ``new``."""
        assert actor.state is not None
        first = actor.state.seq + 1
        stored = [StoredEvent(first + k, encode_event(e)) for k, e in enumerate(events)]
        deadline = next_deadline(new)
        # A room lives while in play and while its outbox holds a game; then it may lapse.
        ttl = None if new.status == "playing" or new.unarchived else self.retention
        changed = _seating_changed(actor.state, new)
        before, after = (_players(actor.state), _players(new)) if changed else ((), ())
        if changed:  # the players' index: a room is added before, taken out after
            joined = [p for p in after if p is not None and p not in before]
            try:
                if joined:
                    await self.store.index_seats(actor.room_id, joined, ())
            except StoreUnavailable as e:
                raise RoomError("store_unavailable") from e
        try:
            ok = await self.store.commit(
                actor.room_id, actor.version, data, stored, deadline, archive_of(new, events), ttl
            )
        except StoreUnavailable as e:
            metrics.STORE_ERRORS.inc()
            actor.drop()
            # The script may have run and only its reply been lost (store/rooms.py).
            if self.on_unknown is not None:
                self.on_unknown(actor.room_id)
            raise RoomError("outcome_unknown") from e
        except Exception:
            metrics.STORE_ERRORS.inc()
            actor.drop()
            raise
        if not ok:
            metrics.CONFLICTS.inc()
            actor.drop()  # another node moved first: reload and step again
            return False
        metrics.COMMITS.inc()
        actor.keep(new, data, actor.version + 1)
        if self.on_commit is not None:
            self.on_commit(actor.room_id, deadline)
        if self.on_events is not None:
            self.on_events(actor.room_id, first, events)
        if changed:
            await self._unseated(actor.room_id, [p for p in before if p and p not in after])
        return True

    async def _unseated(self, room_id: str, players: list[str]) -> None:
        """Take the room out of these players' index (a failure leaves an entry that readers
        check and drop: ``my_games``)."""
        if players:
            try:
                await self.store.index_seats(room_id, (), players)
            except StoreUnavailable:
                log.info("room %s: the players' index keeps a left seat for now", room_id)

    async def seated_rooms(self, player: str) -> list[RoomState]:
        """The rooms in play or open that seat ``player``, by the index; entries that no longer
        hold (the seat went to a bot, the game ended, the room lapsed) are taken out."""
        found: list[RoomState] = []
        stale: list[str] = []
        for room_id in await self.store.seated_rooms(player):
            state = await self.load(room_id)
            if state is None or state.seat_of(player) is None or state.status == "finished":
                stale.append(room_id)
            else:
                found.append(state)
        for room_id in stale:
            await self._unseated(room_id, [player])
        return found

    # -- finished hands -----------------------------------------------------------------------

    async def hand_log(self, state: RoomState) -> list[dict[str, Any]]:
        """The current game's finished hands, oldest first, as their ``hand_over`` events."""
        if state.game is None:
            return []
        records = await self.store.archived(state.id, state.game_id)
        entries = [
            msgpack.unpackb(record, raw=False)
            for name, record in records.items()
            if name.endswith(":over")
        ]
        return sorted(entries, key=lambda entry: entry["hand"])

    async def audit(self, state: RoomState, hand: int) -> dict[str, Any] | None:
        """The audit record of one finished hand of the current game, or None."""
        if state.game is None:
            return None
        record = await self.store.archived_record(state.id, state.game_id, f"{hand}:audit")
        return None if record is None else msgpack.unpackb(record, raw=False)["audit"]

    # -- timers and bots ----------------------------------------------------------------------

    async def tick(self, room_id: str) -> None:
        """Fire whatever is due in the room: bots' moves, then clocks and the next deal."""
        metrics.TICKS.inc()
        actor = self.actors.get(room_id)
        async with actor.lock:
            for _ in range(MAX_ATTEMPTS):
                try:
                    state = actor.state if actor.fresh else await self._reload(actor)
                except RoomError as e:
                    if e.code == "room_not_found":
                        await self.store.delete_room(room_id)  # expired: take it off the schedule
                        return
                    raise
                assert state is not None
                new, events, taken, archiving = await self._due_steps(state)
                # Commit even with no events: the claim moved the deadline, this sets the real one.
                if await self._commit(actor, new, events, new.to_bytes()):
                    if taken:
                        self._send(room_id, taken)  # only now: the lease is committed
                    if archiving:
                        self._background(self._hand_over(room_id, archiving), f"archive {room_id}")
                    return
            log.warning("room %s: tick gave up after %d conflicts", room_id, MAX_ATTEMPTS)

    async def _due_steps(
        self, state: RoomState
    ) -> tuple[RoomState, list[Event], tuple[Notice, ...], tuple[str, ...]]:
        """A tick's steps: what the room says is due (``core.room.due``), fetched and stepped
        in one at a time, then ``Tick``, then the push outbox's due notices taken (to send
        once this commits), and the finished games leased to the archive (to hand over once
        this commits: a database that hangs must not hold the room)."""
        now = self.clock()
        # Only a game whose end is committed has its records in the store for the archive; a
        # game a bot ends in this tick is archived by the next tick, after this one commits.
        committed = set(state.unarchived)
        archiving: tuple[str, ...] = ()
        state, events = self._catch_up(state, now)
        bot_moves = 0
        asked: dict[int, Move] = {}
        while (need := due(state, now, bot_moves)) is not None:
            if isinstance(need, BotTurn):
                if need.seat not in asked:  # seats due together (a hand's passes): at once
                    asked = await ask_together(self.bots, due_bots(state, now, bot_moves))
                move = asked.pop(need.seat)
                state, evs = bot_moved(state, need, move, now)
                bot_moves += 1
            elif self.archive is None:
                break  # this service archives nothing (a matchmaker process's own rooms)
            elif not committed.issuperset(need.game_ids):
                break  # still due: the commit below wakes the scheduler for it at once
            else:
                archiving = need.game_ids
                # leased: offered again after ARCHIVE_LEASE unless the archive answers first
                state, evs = step(state, GamesArchived(None, retry_at=now + ARCHIVE_LEASE), now)
            events += evs
        state, evs = step(state, Tick(), now)
        events += evs
        taken: tuple[Notice, ...] = ()
        if (ready := notices_due(state, now)) is not None:
            taken, drop = ready.send, ready.drop
            if self.push is None:  # this service sends no pushes (a matchmaker's, a test's)
                taken, drop = (), drop + tuple(n.key for n in ready.send)
            keys = tuple(n.key for n in taken)
            state, evs = step(state, NoticesTaken(keys, drop, self.push_policy.retry), now)
            events += evs
        return state, events, taken, archiving

    def _send(self, room_id: str, notices: tuple[Notice, ...]) -> None:
        self._background(self._deliver(room_id, notices), f"push {room_id}")

    def _background(self, work: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.create_task(work, name=name)
        self._pushing.add(task)  # held until done: the loop keeps only weak references
        task.add_done_callback(self._pushing.discard)

    async def _hand_over(self, room_id: str, game_ids: tuple[str, ...]) -> None:
        """Off the room's actor: hand the finished games to the store of record, then step the
        answer in. A failure anywhere leaves them in the room's outbox, leased until
        ``ARCHIVE_LEASE`` runs out; then any node offers them again."""
        assert self.archive is not None
        try:
            games = await self.archive(room_id, game_ids)
            await self.apply(room_id, GamesArchived(games, retry_at=self.clock() + ARCHIVE_RETRY))
        except HeartsError as e:
            log.info("room %s: games archived, not yet marked (%s)", room_id, e.code)
        except Exception:
            log.warning("room %s: archiving failed; offered again later", room_id, exc_info=True)

    async def _deliver(self, room_id: str, notices: tuple[Notice, ...]) -> None:
        """Off the room's actor: send, then take what is done out of the outbox. A failure
        anywhere leaves the notices leased in the room, to be offered again."""
        assert self.push is not None
        try:
            done = await self.push(notices)
            if done:
                await self.apply(room_id, NoticesSent(done, self.push_policy.interval))
        except HeartsError as e:
            log.info("room %s: pushes sent, not yet confirmed (%s)", room_id, e.code)
        except Exception:
            log.warning("room %s: pushes failed; offered again later", room_id, exc_info=True)


def _seating_changed(old: RoomState | None, new: RoomState) -> bool:
    """Whether a seat's player differs (a step shares every seat it does not change, so most
    commits answer by identity alone)."""
    if old is None:
        return True
    for a, b in zip(old.seats, new.seats, strict=True):
        if a is not b and (a is None or b is None or a.player != b.player):
            return True
    return False


def _players(state: RoomState | None) -> tuple[str | None, ...]:
    """The humans in the room's seats, in order (a commit compares them: cheap)."""
    if state is None:
        return ()
    return tuple(None if s is None else s.player for s in state.seats)


def public_info(state: RoomState) -> dict[str, Any]:
    """What anyone with the code may see before joining (HTTP room info)."""
    return {
        "room": state.id,
        "kind": state.kind,
        "status": state.status,
        "options": state.options.public(),
        "seats": [None if s is None else {"name": s.name, "bot": s.is_bot} for s in state.seats],
        "spectators": len(state.spectators),
        "game_number": state.game_number,
        "scores": state.game.scores if state.game is not None else None,
    }
