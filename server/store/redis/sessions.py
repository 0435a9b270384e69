"""Sessions and throttles in Redis (a part of ``RedisLeagueStore``).

Keys, beside the league's and under its ``{league}`` hash tag (one slot, Redis Cluster safe):

- ``hearts:{league}:session:DIGEST`` hash: ``p`` player id, ``e`` expiry (the callers' clock);
  a Redis TTL a little past the expiry only cleans up, it never decides
- ``hearts:{league}:sessions:ID`` set: the digests of the player's sessions (revoke all)
- ``hearts:{league}:throttle:KEY`` sorted set: attempt times (sliding window)
- ``hearts:{league}:revoked`` stream: digests of revoked sessions (capped), for the pollers
"""

from __future__ import annotations

import math

from redis.commands.core import AsyncScript

from server.store.redis.client.connect import (
    Client,
    as_text,
    load_script,
    store_errors,
    stream_entries,
)
from server.store.redis.nonces import call_nonce
from server.store.sessions import (
    REVOCATION_LOG,
    Session,
    SessionStore,
    check_finite,
    renew_every,
)

KEY_MARGIN = 3600
"""Seconds past a session's expiry that Redis keeps its keys (housekeeping only)."""


class RedisSessions(SessionStore):
    """Needs the league's ``_client`` and ``_base``; ``_init_sessions`` sets up."""

    _client: Client
    _base: str

    def _init_sessions(self) -> None:
        self._session_prefix = f"{self._base}:session:"
        self._sessions_prefix = f"{self._base}:sessions:"
        self._revoked_key = f"{self._base}:revoked"
        self._revoke_script = self._register("session_revoke.lua")
        self._check_session_script = self._register("session_check.lua")
        self._revoke_all_script = self._register("session_revoke_all.lua")
        self._hit_script = self._register("throttle_hit.lua")

    def _register(self, name: str) -> AsyncScript:
        return self._client.register_script(load_script(name))

    async def create_session(
        self, token_digest: str, player_id: str, *, now: float, ttl: float
    ) -> None:
        check_finite(now, ttl)
        if not token_digest or not player_id or ttl <= 0:
            raise ValueError("a session needs a digest, a player and a positive ttl")
        keep = math.ceil(ttl) + KEY_MARGIN
        with store_errors():
            async with self._client.pipeline(transaction=True) as pipe:
                key = self._session_prefix + token_digest
                pipe.hset(key, mapping={"p": player_id, "e": repr(float(now + ttl))})
                pipe.expire(key, keep)
                pipe.sadd(self._sessions_prefix + player_id, token_digest)
                pipe.expire(self._sessions_prefix + player_id, keep)
                await pipe.execute()

    async def check_session(
        self, token_digest: str, *, now: float, ttl: float, renew_after: float
    ) -> Session | None:
        check_finite(now, ttl, renew_after)
        with store_errors():
            held = await self._check_session_script(
                keys=[self._session_prefix + token_digest],
                args=[
                    repr(float(now)),
                    repr(float(ttl)),
                    repr(float(renew_every(ttl, renew_after))),
                    self._sessions_prefix,
                    math.ceil(ttl) + KEY_MARGIN,
                    token_digest,
                ],
            )
        if not held:
            return None
        return Session(held[0].decode(), float(held[1]))

    async def revoke_session(self, token_digest: str) -> bool:
        with store_errors():
            revoked = await self._revoke_script(
                keys=[self._session_prefix + token_digest, self._revoked_key],
                args=[self._sessions_prefix, token_digest, REVOCATION_LOG],
            )
        return bool(revoked)

    async def revoke_sessions(self, player_id: str) -> int:
        with store_errors():
            return int(
                await self._revoke_all_script(
                    keys=[self._sessions_prefix + player_id, self._revoked_key],
                    args=[self._session_prefix, REVOCATION_LOG],
                )
            )

    async def revocations(self, after: str) -> tuple[str, list[str]]:
        with store_errors():
            if not after:
                last = await self._client.xrevrange(self._revoked_key, count=1)
                return (as_text(last[0][0]) if last else "0-0"), []
            entries = stream_entries(await self._client.xrange(self._revoked_key, min=f"({after}"))
        if not entries:
            return after, []
        return as_text(entries[-1][0]), [as_text(fields[b"d"]) for _, fields in entries]

    async def hit(self, key: str, *, now: float, window: float, limit: int) -> float:
        check_finite(now, window)
        with store_errors():
            wait = await self._hit_script(
                keys=[f"{self._base}:throttle:{key}"],
                args=[repr(float(now)), repr(float(window)), limit, call_nonce().hex()],
            )
        return float(wait)

    async def clear_hits(self, key: str) -> None:
        with store_errors():
            await self._client.delete(f"{self._base}:throttle:{key}")
