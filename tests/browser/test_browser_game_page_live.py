"""The game page of a real game on a real server, nothing intercepted.

A player and three bots play a game to 100 to its end (tests/support/client_bots.py); the store
of record takes it within a second or two; its page (/g/ID) then replays it and verifies every
hand's deal in the browser, and the time that check took is printed as ``replay_verify_ms``
(with ``machine_rules_hands_per_second``: docs/benchmarks.md). A browser plays a game to 50 at
a table: the game-over panel links to the game's page, which opens in a new tab, and the
player's page lists the game with a link to it.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from load_tests.bench_rules import machine_speed, machine_speed_line
from tests.support.browser_support import (
    DESKTOP,
    PHONE,
    new_page,
    open_table,
    play_until,
    screenshot,
)
from tests.support.client_bots import new_player, play_to_the_end
from tests.support.server_process import ServerProcess

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    proc = ServerProcess(HEARTS_BOT_THINK="0", HEARTS_BETWEEN_HANDS="0").start()
    try:
        yield proc
    finally:
        proc.stop()


def _in_thread(coroutine: Any) -> Any:
    """Run a coroutine to the end on its own loop (Playwright's sync API holds this thread's)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


async def _game_with_bots(server: ServerProcess, target: int) -> dict[str, Any]:
    """One player and three random bots, to ``target``: the game's id and its end."""
    player = await new_player(server, "Rhea")
    try:
        reply = await player.request("open_room", options={"target": target})
        await player.request("fill_bots", level="random")
        await player.request("start")
        started = await player.next_event("game_started")
        over = await play_to_the_end(player, seed=5, timeout=200)
        return {
            "game": started["game"],
            "room": reply["room"],
            "over": over,
            "player": player.identity["player"],
        }
    finally:
        await player.close()


def archived(server: ServerProcess, game: str, within: float = 20) -> dict[str, Any]:
    """The game's document, once the store of record has it."""
    deadline = time.monotonic() + within
    while True:
        try:
            with urllib.request.urlopen(f"{server.base}/api/games/{game}", timeout=5) as answer:
                return dict(json.load(answer))
        except urllib.error.HTTPError as e:
            if e.code not in (404, 409) or time.monotonic() > deadline:
                raise
        time.sleep(0.2)


@pytest.fixture(scope="module")
def real_game(server: ServerProcess) -> dict[str, Any]:
    game = _in_thread(_game_with_bots(server, 100))
    game["document"] = archived(server, game["game"])
    return game


@pytest.mark.parametrize(("size", "lang"), [("desktop", "en"), ("phone", "ar")])
def test_a_real_game_replays_and_every_deal_verifies(
    browser: Any,
    server: ServerProcess,
    real_game: dict[str, Any],
    size: str,
    lang: str,
    tmp_path: Path,
) -> None:
    doc = real_game["document"]
    assert doc["format"] == "hearts-game/1" and doc["game"] == real_game["game"]
    assert doc["scores"] == real_game["over"]["scores"]
    hands = len(doc["hands"])
    context, page = new_page(browser, DESKTOP if size == "desktop" else PHONE, locale=lang)
    page.goto(f"{server.base}/g/{real_game['game']}")
    page.wait_for_selector("#game:not([hidden])")
    page.wait_for_function(
        "() => document.querySelector('#deal-summary').dataset.state !== 'checking'", timeout=60_000
    )
    states = page.eval_on_selector_all("#verdicts > li", "els => els.map((e) => e.dataset.state)")
    assert states == ["verified"] * hands
    # The replay's last position: the game's final scores; the bots are marked as bots.
    page.keyboard.press("End")
    scores = page.eval_on_selector_all(
        ".replay-seat .seat-game", "els => els.map((e) => e.dataset.score)"
    )
    seats = page.eval_on_selector_all(
        ".replay-seat", "els => els.map((e) => Number(e.dataset.seat))"
    )
    assert {seats[i]: int(scores[i]) for i in range(4)} == dict(enumerate(doc["scores"]))
    assert page.locator("#result-box .badge.bot").count() == 3
    assert (
        page.locator("#result-box a.player-link").get_attribute("href")
        == f"/p/{real_game['player']}"
    )
    assert page.locator(".badge.you").count() == 0  # this browser did not play it
    # The download link serves the same document as an attachment.
    href = page.locator("#download").get_attribute("href")
    with urllib.request.urlopen(server.base + href) as answer:
        assert "attachment" in answer.headers.get("content-disposition", "")
        assert json.load(answer)["game"] == doc["game"]
    path = tmp_path / f"game-live-{size}-{lang}.png"
    page.screenshot(path=str(path), full_page=True)
    screenshot(page, f"game-live-{size}-{lang}")

    if size == "desktop":
        # The browser's check of every hand, measured: the page once more, five times.
        times = []
        for _ in range(5):
            page.reload()
            page.wait_for_function(
                "() => document.body.dataset.verifyMs !== undefined", timeout=60_000
            )
            times.append(float(page.evaluate("document.body.dataset.verifyMs")))
        times.sort()
        print(
            f"\nreplay_verify_ms: {times[len(times) // 2]:.0f}  (every hand of a real game of "
            f"{hands} hands, checked in Chromium: the median of {len(times)} page loads)"
        )
        print(machine_speed_line(machine_speed()))
    context.close()


def test_the_game_over_panel_and_the_player_page_link_to_the_game(
    browser: Any, server: ServerProcess, tmp_path: Path
) -> None:
    context, page = new_page(browser, DESKTOP)
    open_table(page, server.base, "Tess")
    play_until(page, "hearts.model && hearts.model.status === 'finished'", timeout=200)
    page.wait_for_selector("#result:not([hidden])")
    game = page.evaluate("hearts.model.gameId")
    link = page.locator("#replay-link")
    assert link.get_attribute("href") == f"/g/{game}?new"
    assert link.get_attribute("target") == "_blank"
    screenshot(page, "game-over-panel-link")
    archived(server, game)  # then the page opens without a refusal on the way
    with context.expect_page() as opened:
        link.click()
    tab = opened.value
    tab.wait_for_selector("#game:not([hidden])")
    assert tab.url == f"{server.base}/g/{game}"  # "?new" is dropped once the game is there
    tab.wait_for_function(
        "() => document.querySelector('#deal-summary').dataset.state === 'verified'", timeout=60_000
    )
    # The player sees the game from their own seat: at the bottom, marked as them.
    assert tab.locator(".replay-seat.pos-bottom .badge.you").count() == 1
    # Their page lists the game, linked to its page.
    me = json.loads(page.evaluate("localStorage.getItem('hearts.guest')"))
    tab.goto(f"{server.base}/p/{me['player']}")
    tab.wait_for_selector("#recent-games tbody tr")
    row = tab.locator(f"#recent-games tbody tr[data-game='{game}']")
    assert row.locator("a.game-link").get_attribute("href") == f"/g/{game}"
    tab.screenshot(path=str(tmp_path / "player-page-live.png"), full_page=True)
    screenshot(tab, "player-page-live")
    context.close()
