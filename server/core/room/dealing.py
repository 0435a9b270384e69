"""The server's part of each hand's commit-reveal shuffle (docs/fair-deal.md).

The server's secret for a hand is derived from the room's secret seed, so the pure state
machine needs no randomness of its own and any node derives the same secret. It never leaves
the server before the hand's audit is published.
"""

from __future__ import annotations

import hashlib
import hmac

from protocol.shuffle import deal_context


def server_secret(seed: bytes, ctx: bytes) -> bytes:
    """A 32-byte secret per hand; HMAC keeps it unpredictable to anyone without the seed."""
    return hmac.new(seed, b"server-secret" + ctx, hashlib.sha256).digest()


def hand_context(game_id: str, hand_number: int) -> bytes:
    return deal_context(game_id, hand_number)
