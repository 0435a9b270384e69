"""A Redis that stops answering mid-game (SIGSTOP: alive, its sockets open, silent), through a
real server process: the move gets an answer in bounded time, and once Redis answers again the
game goes on with nothing lost."""

from __future__ import annotations

import asyncio
import shutil
import signal
import time

import pytest

from protocol.client import CommandError
from server.fanout.hub import RESYNC_AGAIN
from server.store.redis.client.connect import REPLY_TIMEOUT
from tests.conftest import _start_redis
from tests.e2e.test_e2e_durability import act_on_view
from tests.support.client_bots import play_to_the_end, two_humans_and_bots
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e


async def test_a_move_while_redis_is_frozen_is_answered_and_the_game_goes_on() -> None:
    redis, port, workdir = _start_redis()
    server = ServerProcess(redis_url=f"redis://127.0.0.1:{port}/0").start()
    try:
        a, b, room = await two_humans_and_bots(server, "A", "B")
        prompt = await a.next_event("your_turn")
        # The bots pass first: then nothing else commits to the room while Redis is frozen.
        bots = {s for s in range(4) if s not in (a.seat, b.seat)}
        while not bots <= {f.get("seat") for f in b.frames if f.get("event") == "pass_chosen"}:
            await b.next_event("pass_chosen")
        redis.send_signal(signal.SIGSTOP)
        started = time.monotonic()
        try:
            # The commit times out (outcome unknown); the client then resumes to learn the
            # truth, and that read times out too: two bounded waits, not a hang.
            with pytest.raises(CommandError) as failed:
                await a.request("pass", cards=prompt["legal"][:3], timeout=4 * REPLY_TIMEOUT + 5)
            waited = time.monotonic() - started
        finally:
            redis.send_signal(signal.SIGCONT)
        assert failed.value.code in ("outcome_unknown", "store_unavailable"), failed.value
        assert waited <= 2 * REPLY_TIMEOUT + 3, waited
        # Redis is back. The pass happened or not; if it did (the stalled server ran what it had
        # read), B, who did nothing meanwhile, has been sent its events all the same: the node
        # caught the room's sockets up from the store.
        await asyncio.sleep(RESYNC_AGAIN + 1.0)
        view = (await b.request("view"))["view"]
        applied = a.seat not in view["deciding"]
        print(f"the pass made while Redis was frozen was applied: {applied}")
        told_b = any(f.get("event") == "pass_chosen" and f.get("seat") == a.seat for f in b.frames)
        assert told_b == applied
        # The game is played to its end by both people (and the bots) on the same node.
        await a.request("resume", room=room, seq=a.seq)
        await act_on_view(a)
        await act_on_view(b)
        results = await asyncio.gather(play_to_the_end(a), play_to_the_end(b, seed=1))
        assert results[0]["scores"] == results[1]["scores"]
        assert max(results[0]["scores"]) >= 50
        # The node's loops said the store failed and then that it recovered; nothing worse.
        log = server.log()
        assert "recovered after" in log
        assert '"level": "ERROR"' not in log and '"level": "CRITICAL"' not in log
    finally:
        server.stop()
        redis.terminate()
        redis.wait()
        shutil.rmtree(workdir, ignore_errors=True)
