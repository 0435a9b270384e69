"""Push subscriptions (a player's devices) and which pushes each player wants, in SQL.

Functions on an open connection inside the caller's transaction (``store.py`` opens them). A
subscription is keyed by its endpoint, the push service's URL for one browser profile: the
same browser subscribing again (or under another player, after a log-out and a log-in) takes
the row over, so one device never gets another player's pushes. The values are checked by the
HTTP layer (``server/push/subscriptions.py``) before they get here; this module bounds them
again, as every write of the store does.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from .records import RecordError, finite, text
from .schema import MAX_ENDPOINT, MAX_LABEL, MAX_LANG, push_settings, push_subscriptions
from .upsert import insert_or_skip

MAX_DEVICES = 10  # subscriptions per player


class TooManyDevices(RecordError):
    """The player has ``MAX_DEVICES`` subscriptions already; nothing was written."""


@dataclass(frozen=True, slots=True)
class Subscription:
    endpoint: str
    player_id: str
    p256dh: str  # base64url, as the browser gave it
    auth: str
    created_at: float
    lang: str = "en"
    label: str = ""

    @property
    def id(self) -> str:
        """A short stable name for the device in lists and in a removal (never the endpoint,
        which is a capability: whoever has it may push to the device)."""
        return device_id(self.endpoint)


def device_id(endpoint: str) -> str:
    return hashlib.sha256(endpoint.encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class PushSettings:
    """Which pushes a player wants; every kind by default."""

    turn_correspondence: bool = True
    turn_live: bool = True
    waited: bool = True
    game_end: bool = True

    def wants(self, kind: str, pace: str) -> bool:
        """``kind`` is a notice's (``server/core/room/notices.py``)."""
        if kind == "turn":
            return self.turn_correspondence if pace == "correspondence" else self.turn_live
        if kind == "waited":
            return self.waited
        if kind == "ended":
            return self.game_end
        return False

    def to_value(self) -> dict[str, bool]:
        return {
            "turn_correspondence": self.turn_correspondence,
            "turn_live": self.turn_live,
            "waited": self.waited,
            "game_end": self.game_end,
        }


SETTING_NAMES = tuple(PushSettings().to_value())


def _subscription(row: Any) -> Subscription:
    keys = row.keys if isinstance(row.keys, dict) else {}
    return Subscription(
        row.endpoint,
        row.player_id,
        str(keys.get("p256dh", "")),
        str(keys.get("auth", "")),
        row.created_at,
        row.lang,
        row.label,
    )


def check_subscription(s: Subscription) -> None:
    text(s.endpoint, "subscription.endpoint", MAX_ENDPOINT)
    text(s.player_id, "subscription.player_id")
    text(s.p256dh, "subscription.p256dh", 128)
    text(s.auth, "subscription.auth", 64)
    text(s.lang, "subscription.lang", MAX_LANG)
    if not isinstance(s.label, str) or len(s.label) > MAX_LABEL:
        raise RecordError(f"subscription.label must be at most {MAX_LABEL} characters")
    finite(s.created_at, "subscription.created_at")


async def add(connection: AsyncConnection, s: Subscription) -> bool:
    """Keep the subscription for its player (taking the endpoint over from whoever had it);
    True if it is new to this player. ``TooManyDevices`` if the player has the most already."""
    check_subscription(s)
    table = push_subscriptions
    held = await connection.scalar(
        sa.select(table.c.player_id).where(table.c.endpoint == s.endpoint)
    )
    if held != s.player_id:
        count = await connection.scalar(
            sa.select(sa.func.count()).select_from(table).where(table.c.player_id == s.player_id)
        )
        if (count or 0) >= MAX_DEVICES:
            raise TooManyDevices(f"a player has at most {MAX_DEVICES} devices")
    values = {
        "player_id": s.player_id,
        "keys": {"p256dh": s.p256dh, "auth": s.auth},
        "created_at": s.created_at,
        "lang": s.lang,
        "label": s.label,
    }
    if held is None:
        await connection.execute(sa.insert(table).values(endpoint=s.endpoint, **values))
    else:
        await connection.execute(
            sa.update(table).where(table.c.endpoint == s.endpoint).values(**values)
        )
    return held != s.player_id


async def of_players(
    connection: AsyncConnection, player_ids: Iterable[str]
) -> dict[str, list[Subscription]]:
    wanted = sorted(set(player_ids))
    found: dict[str, list[Subscription]] = {p: [] for p in wanted}
    if not wanted:
        return found
    rows = await connection.execute(
        sa.select(push_subscriptions)
        .where(push_subscriptions.c.player_id.in_(wanted))
        .order_by(push_subscriptions.c.created_at)
    )
    for row in rows:
        found[row.player_id].append(_subscription(row))
    return found


async def remove(connection: AsyncConnection, player_id: str, device: str) -> bool:
    """Remove the player's device whose ``device_id`` (or endpoint) is ``device``."""
    rows = await connection.execute(
        sa.select(push_subscriptions.c.endpoint).where(
            push_subscriptions.c.player_id == player_id
        )
    )
    for (endpoint,) in rows.all():
        if device in (endpoint, device_id(endpoint)):
            await drop(connection, endpoint)
            return True
    return False


async def drop(connection: AsyncConnection, endpoint: str) -> bool:
    """Delete a subscription whoever holds it (the push service said it is gone)."""
    gone = await connection.execute(
        sa.delete(push_subscriptions).where(push_subscriptions.c.endpoint == endpoint)
    )
    return bool(gone.rowcount)


async def settings_of(
    connection: AsyncConnection, player_ids: Iterable[str]
) -> dict[str, PushSettings]:
    wanted = sorted(set(player_ids))
    found = {p: PushSettings() for p in wanted}
    if not wanted:
        return found
    rows = await connection.execute(
        sa.select(push_settings).where(push_settings.c.player_id.in_(wanted))
    )
    for row in rows:
        found[row.player_id] = PushSettings(
            row.turn_correspondence, row.turn_live, row.waited, row.game_end
        )
    return found


async def put_settings(
    connection: AsyncConnection, player_id: str, settings: PushSettings, now: float
) -> None:
    text(player_id, "player_id")
    finite(now, "now")
    values = {**settings.to_value(), "updated_at": now}
    first = insert_or_skip(connection, push_settings, index_elements=["player_id"])
    await connection.execute(first.values(player_id=player_id, **values))
    await connection.execute(
        sa.update(push_settings).where(push_settings.c.player_id == player_id).values(**values)
    )
