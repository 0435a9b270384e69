"""Client-side players for end-to-end tests: they act on their own prompts through the socket."""

from __future__ import annotations

import asyncio
import random
from typing import Any

from protocol.client import CommandError, HeartsClient, guest


async def new_player(server: Any, name: str, *, binary: bool = True) -> HeartsClient:
    ident = await guest(server.base, name)
    client = await HeartsClient.connect(server.ws, ident["token"], binary=binary)
    client.identity = ident  # type: ignore[attr-defined]
    return client


async def play_to_the_end(
    client: HeartsClient, seed: int = 0, timeout: float = 120
) -> dict[str, Any]:
    """Answer every prompt with a random legal choice until the game is over."""
    rng = random.Random(seed)
    async with asyncio.timeout(timeout):
        while True:
            event = await client.next_event(lambda e: e["event"] in ("your_turn", "game_over"))
            if event["event"] == "game_over":
                return event
            if event["seq"] < getattr(client, "acted_seq", 0):
                continue  # a prompt already answered (seen again after a resume)
            try:
                if event["phase"] == "passing":
                    reply = await client.request("pass", cards=rng.sample(event["legal"], 3))
                elif event["phase"] == "playing":
                    reply = await client.request("play", card=rng.choice(event["legal"]))
                else:
                    reply = await client.request("moon", choice="others_26")
                client.acted_seq = reply["first_seq"]  # type: ignore[attr-defined]
            except CommandError as e:
                # Only a race with a clock may refuse a prompt's own choice.
                assert e.code in ("wrong_phase", "not_your_turn", "not_seated"), e


async def open_table(server: Any, host: HeartsClient, options: dict[str, Any] | None = None) -> str:
    reply = await host.request("open_room", options=options or {"target": 50})
    return reply["room"]


async def two_humans_and_bots(
    server: Any, host_name: str, guest_name: str, *, guest_server: Any = None
) -> tuple[HeartsClient, HeartsClient, str]:
    """A host and a guest (on ``guest_server``, if given) at a friends' table to 50, the other
    two seats random bots, the game started: the host, the guest and the room."""
    host = await new_player(server, host_name)
    guest_player = await new_player(guest_server or server, guest_name)
    room = await open_table(server, host)
    await guest_player.request("join", room=room)
    await host.request("fill_bots", level="random")
    await host.request("start")
    return host, guest_player, room
