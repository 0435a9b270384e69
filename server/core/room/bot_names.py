"""The names bots sit down under.

Bots are people-like names, never compass points: a seat's compass name is only true from one
viewer's side of the table, so "South Bot" across from you contradicts itself. Every place a
bot is shown also marks it as a bot, so the name need not say so.
"""

from __future__ import annotations

from collections.abc import Collection

BOT_NAMES = (
    "Ada", "Basil", "Clara", "Dario", "Edith", "Farid", "Greta", "Hiro",
    "Imani", "Jonas", "Kalani", "Lucia", "Mateo", "Nadia", "Otto", "Priya",
)  # fmt: skip


def bot_name(offset: int, taken: Collection[str]) -> str:
    """A bot name no one at the table has (``taken``), starting at ``offset`` in the list so
    tables do not all meet the same bots."""
    used = {name.casefold() for name in taken}
    for k in range(len(BOT_NAMES)):
        name = BOT_NAMES[(offset + k) % len(BOT_NAMES)]
        if name.casefold() not in used:
            return name
    return f"Bot {len(used) + 1}"
