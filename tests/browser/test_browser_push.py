"""Web Push in Chromium: the service worker registers from the root, a push delivered to it
(the DevTools protocol's ServiceWorker.deliverPushMessage) shows the notification with the
server's words, and the lobby's "Your games" at 1280x800 and 390x844, with the count in the
title."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from protocol.account_api import my_games
from protocol.client import HeartsClient
from tests.support.browser_support import DESKTOP, PHONE, new_guest, new_page, screenshot
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.browser
pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    proc = ServerProcess(HEARTS_PUSH_ALLOW_LOOPBACK="1").start()
    try:
        yield proc
    finally:
        proc.stop()


SHOWN_JS = """() => navigator.serviceWorker.ready
  .then((r) => r.getNotifications())
  .then((ns) => ns.length ? ns.map((n) => [n.title, n.body, n.tag, n.data]) : null)"""
"""The notifications the service worker shows, or null (``evaluate`` awaits the promise)."""


def registration_id(cdp: Any, page: Any) -> str:
    found: list[str] = []
    cdp.on(
        "ServiceWorker.workerRegistrationUpdated",
        lambda e: found.extend(r["registrationId"] for r in e["registrations"]),
    )
    cdp.send("ServiceWorker.enable")
    for _ in range(100):  # the report comes as an event, after the call; up to 5 s
        if found:
            break
        page.wait_for_timeout(50)
    assert found, "no service worker registration reported"
    return found[-1]


def test_a_push_delivered_to_the_service_worker_shows_the_tables_notification(
    browser: Any, server: ServerProcess
) -> None:
    context, page = new_page(browser, DESKTOP)
    context.grant_permissions(["notifications"], origin=server.base)
    new_guest(page, server.base, "Ann")
    page.wait_for_selector("#lobby:not([hidden])")
    script = page.evaluate(
        "navigator.serviceWorker.ready.then((r) => [r.scope, r.active && r.active.scriptURL])"
    )
    assert script == [server.base + "/", server.base + "/sw.js"]
    cdp = context.new_cdp_session(page)
    push = {
        "title": "Your turn at Ann's table",
        "body": "The table is waiting for you.",
        "kind": "turn",
        "room": "AbCdEf123456",
        "url": "/r/AbCdEf123456",
        "tag": "room-AbCdEf123456",
    }
    registration = registration_id(cdp, page)
    shown = None
    # A push service delivers again what was not acknowledged; so does this test, at most
    # three times (a worker that was still starting may miss the first).
    for _delivery in range(3):
        cdp.send(
            "ServiceWorker.deliverPushMessage",
            {"origin": server.base, "registrationId": registration, "data": json.dumps(push)},
        )
        for _ in range(100):  # evaluate awaits the promise; the worker shows it once it ran
            shown = page.evaluate(SHOWN_JS)
            if shown:
                break
            page.wait_for_timeout(50)
        if shown:
            break
    assert shown == [
        [push["title"], push["body"], push["tag"], {"path": "/r/AbCdEf123456", "kind": "turn"}]
    ]
    context.close()


async def _correspondence_turn(server: ServerProcess, token: str) -> None:
    """Ann's correspondence table started with three bots; her socket then closes (away)."""
    ann = await HeartsClient.connect(server.ws, token)
    try:
        await ann.request("open_room", options={"target": 50, "pace": "correspondence"})
        await ann.request("fill_bots", level="random")
        await ann.request("start")
        await ann.request("open_room", options={"target": 50})  # a second one, not started
    finally:
        await ann.close()
    for _ in range(200):  # the shuffle waits for her commitment, then the pass is hers
        games = await my_games(server.base, token)
        if games and games[0]["your_turn"]:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"never Ann's turn: {games}")


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_your_games_in_the_lobby_your_turn_first_and_counted_in_the_title(
    browser: Any, server: ServerProcess, size: str
) -> None:
    viewport = DESKTOP if size == "desktop" else PHONE
    context, page = new_page(browser, viewport)
    new_guest(page, server.base, "Ann")
    page.wait_for_selector("#lobby:not([hidden])")
    page.wait_for_function("() => localStorage.getItem('hearts.guest') !== null")
    token = page.evaluate("JSON.parse(localStorage.getItem('hearts.guest')).token")
    with ThreadPoolExecutor(1) as thread:  # Playwright's own loop runs in this thread
        thread.submit(asyncio.run, _correspondence_turn(server, token)).result()
    page.reload()
    page.wait_for_selector("#my-games:not([hidden]) .my-game")
    page.wait_for_function("() => document.title === '(1) Hearts Live'", timeout=20_000)
    rows = page.eval_on_selector_all(
        "#my-games .my-game", "els => els.map((e) => [e.dataset.yourTurn, e.innerText])"
    )
    assert [r[0] for r in rows] == ["true", "false"], rows
    assert "Your turn" in rows[0][1] and "Ann's table" in rows[0][1]
    assert "Not started" in rows[1][1]
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    screenshot(page, f"your-games-{size}", full_page=False)
    page.click("#settings summary")
    page.wait_for_selector("#push-settings:not([hidden])")
    assert page.is_checked("[data-push='turn_correspondence']")
    screenshot(page, f"push-settings-{size}", full_page=False)
    context.close()
