"""The app on any ASGI server: under plain uvicorn (its own WebSocket protocol, not this
server's), the ASGI coroutine reads each socket and a task writes it, and a whole game plays
the same, both codecs, with every hand verified. So it does under ``python -m server`` with the
fast path off (``HEARTS_WS_FAST_PATH=0``), as when an upgrade of uvicorn or websockets no longer
fits it (server/net/fast_path.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from tests.e2e.test_e2e_game import assert_no_leak, check_scores, seat_humans
from tests.support.client_bots import play_to_the_end
from tests.support.server_process import ServerProcess, free_port


@pytest.fixture(scope="module", params=["plain uvicorn", "fast path off"])
def server(request: pytest.FixtureRequest) -> Iterator[ServerProcess]:
    if request.param == "plain uvicorn":
        port = free_port()
        argv = ["-m", "uvicorn", "--factory", "server.app:create_app"]
        argv += ["--host", "127.0.0.1", "--port", str(port), "--ws", "websockets-sansio"]
        proc = ServerProcess(port=port, argv=argv).start()
    else:
        proc = ServerProcess(HEARTS_WS_FAST_PATH="0", LOG_LEVEL="INFO").start()
        assert "WebSocket fast path off" in proc.log()
    yield proc
    proc.stop()


@pytest.mark.parametrize("binary", [True, False], ids=["msgpack", "json"])
async def test_a_whole_game_on_plain_uvicorn(server: ServerProcess, binary: bool) -> None:
    clients = await seat_humans(server, 4, binary=binary)
    results = await asyncio.gather(*(play_to_the_end(c, seed=i) for i, c in enumerate(clients)))
    for c in clients:
        check_scores(results[0], c)
        assert_no_leak(c)
        assert all(v == [] for v in c.verdicts.values()), c.verdicts
        await c.close()
    assert "Traceback" not in server.log()
