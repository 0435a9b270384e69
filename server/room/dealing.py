"""Where each hand's cards come from: the seam the fair-deal protocol plugs into.

The deck is derived with the commit-reveal shuffle of ``protocol.shuffle`` (DESIGN.md "The
shuffle"). The server's secret for a hand is derived from the room's secret seed, so the pure
state machine needs no randomness of its own and any node derives the same deck.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence

from protocol.shuffle import deal_context, derive_deck, server_commitment


def server_secret(seed: bytes, ctx: bytes) -> bytes:
    """A 32-byte secret per hand; HMAC keeps it unpredictable to anyone without the seed."""
    return hmac.new(seed, b"server-secret" + ctx, hashlib.sha256).digest()


def hand_context(game_id: str, hand_number: int) -> bytes:
    return deal_context(game_id, hand_number)


def commitment_for(seed: bytes, game_id: str, hand_number: int) -> bytes:
    ctx = hand_context(game_id, hand_number)
    return server_commitment(ctx, server_secret(seed, ctx))


def deck_for(
    seed: bytes, game_id: str, hand_number: int, seat_secrets: Sequence[bytes]
) -> list[int]:
    ctx = hand_context(game_id, hand_number)
    return derive_deck(ctx, server_secret(seed, ctx), seat_secrets)
