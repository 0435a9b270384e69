"""Where the Python client dials and how patiently: the first of its URLs that answers, and,
after a dropped socket, the next ones in turn with backoff until the policy gives up."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from typing import Any

import websockets

from .reconnect import Backoff, with_room

DIAL_TIMEOUT = 5.0


async def dial_first(
    urls: Sequence[str], room: str | None, options: dict[str, Any]
) -> tuple[Any, int]:
    """A socket to the first of ``urls`` that answers, and its index; else the last failure."""
    ws, index, error = None, 0, None
    for index, candidate in enumerate(urls):  # noqa: B007 (the index of the one that answered)
        try:
            ws = await websockets.connect(with_room(candidate, room), **options)
            break
        except (OSError, websockets.InvalidHandshake, TimeoutError) as e:
            error = e
    if ws is None:
        assert error is not None
        raise error
    return ws, index


async def redial(
    urls: Sequence[str],
    index: int,
    room: str | None,
    policy: Backoff,
    lost_at: float,
    options: dict[str, Any],
) -> tuple[Any, int]:
    """A new socket, to ``urls[index]`` or the next ones in turn, and the index dialled last;
    the socket is None once ``policy.give_up_after`` has passed since ``lost_at``."""
    loop = asyncio.get_running_loop()
    for attempt in itertools.count():
        if loop.time() - lost_at > policy.give_up_after:
            return None, index
        await asyncio.sleep(policy.delay(attempt))
        if attempt > 0 or len(urls) > 1:  # a dead node is the likely cause: move on
            index = (index + 1) % len(urls)
        url = with_room(urls[index], room)
        try:
            async with asyncio.timeout(DIAL_TIMEOUT):
                return await websockets.connect(url, **options), index
        except (OSError, websockets.InvalidHandshake, TimeoutError):
            continue
    return None, index  # not reached: count() never ends
