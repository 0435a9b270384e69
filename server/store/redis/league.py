"""The Redis league store: ratings, the ladder, game records and the quick-play queue.

Keys (``prefix`` is the room store's, default ``hearts``). All share the ``{league}`` hash tag,
so every script touches one slot and the design runs on Redis Cluster; the price is that the
league lives on one shard, which its size (a few hashes and short lists per player) allows.

- ``hearts:{league}:players`` hash: id → ``"version|mu|sigma|games"`` (floats as Python repr,
  so they round-trip exactly)
- ``hearts:{league}:names`` hash: id → display name
- ``hearts:{league}:ladder:accounts`` sorted set of accounts: member id, score −conservative
  rating (so ZRANGE lists the highest first and orders equal scores by id). A new key: the
  older ``:ladder`` (every participant by the old display) is left unread, so no guest or bot
  listed under the old rule lingers on the ladder after an upgrade.
- ``hearts:{league}:ladder:scores`` hash: id → −conservative rating of every non-provisional
  participant, account or not (so a guest who claims an account is listed at once)
- accounts, sessions and throttles: see ``accounts.py``
- ``hearts:{league}:history:ID`` list of history-point JSON, newest first, capped
- ``hearts:{league}:recent:ID`` list of game ids, newest first, capped
- ``hearts:{league}:game:GAME`` hash: ``r`` record JSON, ``n`` nonce of the posting call
- ``hearts:{league}:queue`` hash: id → ``"target|display|joined_at"``;
  ``hearts:{league}:queue:names`` hash: id → name; ``hearts:{league}:queue:seen`` sorted set:
  id → when its node last said the player is still there
- ``hearts:{league}:assign:ID`` string: the room id, with a TTL
- ``hearts:{league}:pending`` hash: room id → time noted, or ``-`` once it is being
  abandoned (the matchmaker's journal)
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from redis.commands.core import AsyncScript

from matchmaker.matching import QueueEntry
from server.core.ratings import Rating, display_rating
from server.store.league import (
    DEFAULT_ASSIGNMENT_TTL,
    DEFAULT_HISTORY_CAP,
    DEFAULT_RECENT_CAP,
    HistoryPoint,
    LadderRow,
    LeagueStore,
    PlayerRating,
    PostResult,
    Seating,
    check_entry,
    check_post,
    check_seatings,
    check_time,
    decode_entry,
    encode_entry,
    history_point,
)
from server.store.redis.accounts import RedisAccounts
from server.store.redis.client.connect import Client, as_text, connect, load_script, store_errors
from server.store.redis.nonces import call_nonce

_POST_RESULTS = {
    b"posted": PostResult.POSTED,
    b"already": PostResult.ALREADY_POSTED,
    b"conflict": PostResult.CONFLICT,
}


_text = as_text


def _decode_player(encoded: bytes | None, name: bytes | None) -> PlayerRating:
    text = "" if name is None else name.decode()
    if encoded is None:
        return PlayerRating(name=text)
    version, mu, sigma, games = encoded.decode().split("|")
    return PlayerRating(Rating(float(mu), float(sigma)), int(games), text, int(version))


class RedisLeagueStore(RedisAccounts, LeagueStore):
    """The league in Redis; see the module docstring for the key layout."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "hearts",
        client: Client | None = None,
        history_cap: int = DEFAULT_HISTORY_CAP,
        recent_cap: int = DEFAULT_RECENT_CAP,
        assignment_ttl: float = DEFAULT_ASSIGNMENT_TTL,
    ) -> None:
        if history_cap < 1 or recent_cap < 1 or assignment_ttl <= 0:
            raise ValueError("caps and the assignment ttl must be positive")
        self.url = url
        self.prefix = prefix
        self.history_cap = history_cap
        self.recent_cap = recent_cap
        self.assignment_ttl = assignment_ttl
        self._client: Client = client or connect(url)
        base = f"{prefix}:{{league}}"
        self._base = base
        self._players_key = f"{base}:players"
        self._names_key = f"{base}:names"
        self._ladder_key = f"{base}:ladder:accounts"
        self._queue_key = f"{base}:queue"
        self._queue_names_key = f"{base}:queue:names"
        self._queue_seen_key = f"{base}:queue:seen"
        self._pending_key = f"{base}:pending"
        self._post_script = self._script("league_post.lua")
        self._ladder_script = self._script("league_ladder.lua")
        self._rank_script = self._script("league_rank.lua")
        self._enqueue_script = self._script("league_enqueue.lua")
        self._dequeue_script = self._script("league_dequeue.lua")
        self._purge_script = self._script("league_purge.lua")
        self._seat_script = self._script("league_seat.lua")
        self._stale_script = self._script("league_stale.lua")
        self._init_accounts()

    def _script(self, name: str) -> AsyncScript:
        return self._client.register_script(load_script(name))

    def _key(self, kind: str, ident: str) -> str:
        return f"{self._base}:{kind}:{ident}"

    # Ratings and games ---------------------------------------------------------------------

    async def get_players(self, player_ids: Iterable[str]) -> dict[str, PlayerRating]:
        ids = list(dict.fromkeys(player_ids))
        if not ids:
            return {}
        with store_errors():
            # One MULTI: a participant's rating and version are read together.
            async with self._client.pipeline(transaction=True) as pipe:
                pipe.hmget(self._players_key, ids)
                pipe.hmget(self._names_key, ids)
                encoded, names = await pipe.execute()
        return {
            pid: _decode_player(enc, name)
            for pid, enc, name in zip(ids, encoded, names, strict=True)
        }

    async def set_name(self, player_id: str, name: str) -> None:
        with store_errors():
            await self._client.hset(self._names_key, player_id, name)

    async def post_game(
        self,
        game_id: str,
        record: Mapping[str, Any],
        expected: Mapping[str, int],
        updates: Mapping[str, PlayerRating],
        *,
        at: float,
    ) -> PostResult:
        check_post(game_id, expected, updates)
        check_time(at)
        encoded = json.dumps(record, separators=(",", ":"))
        keys = [
            self._key("game", game_id),
            self._ladder_key,
            self._players_key,
            self._names_key,
            self._accounts_key,
            self._ladder_scores_key,
        ]
        args: list[str | int | bytes] = [
            game_id,
            encoded,
            call_nonce(),
            self.history_cap,
            self.recent_cap,
            len(updates),
        ]
        for pid, update in updates.items():
            keys += [self._key("history", pid), self._key("recent", pid)]
            score = update.ladder_score
            point = history_point(game_id, at, update).to_value()
            args += [
                pid,
                expected[pid],
                f"{update.rating.mu!r}|{update.rating.sigma!r}|{update.games}",
                update.name,
                "" if score is None else -score,
                json.dumps(point, separators=(",", ":")),
            ]
        with store_errors():
            result = await self._post_script(keys=keys, args=args)
        return _POST_RESULTS[result]

    async def game_record(self, game_id: str) -> dict[str, Any] | None:
        with store_errors():
            encoded = await self._client.hget(self._key("game", game_id), "r")
        return None if encoded is None else json.loads(encoded)

    async def history(self, player_id: str, limit: int = 50) -> list[HistoryPoint]:
        if limit <= 0:
            return []
        with store_errors():
            points = await self._client.lrange(self._key("history", player_id), 0, limit - 1)
        return [HistoryPoint.from_value(json.loads(p)) for p in points]

    async def recent_games(self, player_id: str, limit: int = 10) -> list[dict[str, Any]]:
        if limit <= 0:
            return []
        with store_errors():
            ids = await self._client.lrange(self._key("recent", player_id), 0, limit - 1)
            if not ids:
                return []
            async with self._client.pipeline(transaction=False) as pipe:
                for game_id in ids:
                    pipe.hget(self._key("game", _text(game_id)), "r")
                records = await pipe.execute()
        return [json.loads(r) for r in records if r is not None]

    # The ladder ------------------------------------------------------------------------------

    async def _ladder_rows(
        self, start: int, stop: int, around: str = "", k: int = 0
    ) -> list[LadderRow]:
        with store_errors():
            flat = await self._ladder_script(
                keys=[self._ladder_key, self._players_key, self._names_key],
                args=[start, stop, around, k],
            )
        rows: list[LadderRow] = []
        for i in range(0, len(flat), 5):
            pid, rank, score, encoded, name = flat[i : i + 5]
            player = _decode_player(encoded or None, name)
            rows.append(
                LadderRow(
                    int(rank),
                    _text(pid),
                    player.name,
                    display_rating(player.rating),
                    player.games,
                    -int(float(score)),
                )
            )
        return rows

    async def ladder(self, offset: int = 0, limit: int = 50) -> list[LadderRow]:
        if limit <= 0:
            return []
        offset = max(0, offset)
        return await self._ladder_rows(offset, offset + limit - 1)

    async def ladder_size(self) -> int:
        with store_errors():
            return int(await self._client.zcard(self._ladder_key))

    async def rank_of(self, player_id: str) -> int | None:
        with store_errors():
            rank = await self._rank_script(keys=[self._ladder_key], args=[player_id])
        return None if rank is None else int(rank)

    async def around(self, player_id: str, k: int = 5) -> list[LadderRow]:
        if not player_id:
            return []
        return await self._ladder_rows(0, 0, player_id, max(0, k))

    # The quick-play queue ---------------------------------------------------------------------

    async def enqueue(self, entry: QueueEntry, name: str, *, now: float | None = None) -> bool:
        check_entry(entry)
        seen = entry.joined_at if now is None else now
        check_time(seen)
        with store_errors():
            queued = await self._enqueue_script(
                keys=[
                    self._queue_key,
                    self._queue_names_key,
                    self._queue_seen_key,
                    self._key("assign", entry.player_id),
                ],
                args=[entry.player_id, encode_entry(entry), name, repr(float(seen))],
            )
        return bool(queued)

    def _queue_keys(self) -> list[str]:
        return [self._queue_key, self._queue_names_key, self._queue_seen_key]

    async def dequeue(self, player_id: str) -> bool:
        with store_errors():
            removed = await self._dequeue_script(keys=self._queue_keys(), args=[player_id])
        return bool(removed)

    async def touch_queue(self, player_ids: Iterable[str], now: float) -> int:
        check_time(now)
        ids = list(dict.fromkeys(player_ids))
        if not ids:
            return 0
        with store_errors():
            # XX: only players still queued (the seen set holds exactly the queued ones).
            async with self._client.pipeline(transaction=True) as pipe:
                pipe.zadd(self._queue_seen_key, dict.fromkeys(ids, float(now)), xx=True)
                pipe.zmscore(self._queue_seen_key, ids)
                _, scores = await pipe.execute()
        return sum(score is not None for score in scores)

    async def purge_queue(self, before: float) -> list[str]:
        check_time(before)
        with store_errors():
            gone = await self._purge_script(keys=self._queue_keys(), args=[repr(float(before))])
        return sorted(_text(pid) for pid in gone)

    async def queued(self, player_id: str) -> QueueEntry | None:
        with store_errors():
            encoded = await self._client.hget(self._queue_key, player_id)
        return None if encoded is None else decode_entry(player_id, as_text(encoded))

    async def queue_entries(self, target: int | None = None) -> list[QueueEntry]:
        with store_errors():
            stored = await self._client.hgetall(self._queue_key)
        entries = [decode_entry(as_text(pid), as_text(enc)) for pid, enc in stored.items()]
        if target is not None:
            entries = [e for e in entries if e.target == target]
        return sorted(entries, key=lambda e: (e.joined_at, e.player_id))

    async def queue_names(self, player_ids: Iterable[str]) -> dict[str, str]:
        ids = list(dict.fromkeys(player_ids))
        if not ids:
            return {}
        with store_errors():
            names = await self._client.hmget(self._queue_names_key, ids)
        return {pid: as_text(n) for pid, n in zip(ids, names, strict=True) if n is not None}

    async def seat_tables(
        self,
        assignments: Sequence[Seating],
        *,
        expected: Mapping[str, QueueEntry] | None = None,
    ) -> list[bool]:
        check_seatings(assignments)
        if not assignments:
            return []
        wanted = expected or {}
        keys = [self._queue_key, self._queue_names_key, self._pending_key, self._queue_seen_key]
        args: list[str | int] = [max(1, math.ceil(self.assignment_ttl * 1000)), len(assignments)]
        for room_id, players in assignments:
            args += [room_id, len(players)]
            for pid in players:
                entry = wanted.get(pid)
                args += [pid, "" if entry is None else encode_entry(entry)]
                keys.append(self._key("assign", pid))
        with store_errors():
            seated = await self._seat_script(keys=keys, args=args)
        return [bool(s) for s in seated]

    async def take_assignment(self, player_id: str) -> str | None:
        with store_errors():
            room = await self._client.getdel(self._key("assign", player_id))
        return None if room is None else as_text(room)

    async def take_assignments(self, player_ids: Iterable[str]) -> dict[str, str]:
        ids = list(dict.fromkeys(player_ids))
        if not ids:
            return {}
        with store_errors():
            async with self._client.pipeline(transaction=False) as pipe:
                for pid in ids:
                    pipe.getdel(self._key("assign", pid))
                rooms = await pipe.execute()
        return {pid: room.decode() for pid, room in zip(ids, rooms, strict=True) if room}

    # Pending tables ----------------------------------------------------------------------------

    async def note_table(self, room_id: str, at: float) -> None:
        check_time(at)
        with store_errors():
            await self._client.hset(self._pending_key, room_id, repr(float(at)))

    async def forget_table(self, room_id: str) -> None:
        with store_errors():
            await self._client.hdel(self._pending_key, room_id)

    async def take_stale_tables(self, before: float) -> list[str]:
        check_time(before)
        with store_errors():
            stale = await self._stale_script(keys=[self._pending_key], args=[repr(float(before))])
        return sorted(_text(room) for room in stale)

    async def close(self) -> None:
        await self._client.aclose()
