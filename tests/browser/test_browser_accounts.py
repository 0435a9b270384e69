"""Accounts and the player page in a real browser (Chromium under Playwright), real server.

A guest signs up from the lobby (keeping its identity), logs out and logs back in; a rated
quick-play game against bots, played by the Python client on the account's session, then
shows on the player page: the SVG plot, the game with its rating change, the standing. The
page runs under the service's Content-Security-Policy, so an inline script would fail here.
Screenshots (desktop and phone) go to test-output/screenshots/.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from protocol.account_api import login
from protocol.client import HeartsClient
from tests.support.browser_support import (
    DESKTOP,
    PHONE,
    Console,
    new_page,
    screenshot,
)
from tests.support.client_bots import play_to_the_end
from tests.support.server_process import ServerProcess

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    proc = ServerProcess(HEARTS_BOT_FILL_AFTER="1").start()
    try:
        yield proc
    finally:
        proc.stop()


def _in_thread(coroutine: Any) -> Any:
    """Run a coroutine to the end on its own loop (Playwright's sync API holds this thread's)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


async def _rated_game_against_bots(server: ServerProcess, token: str) -> dict[str, Any]:
    client = await HeartsClient.connect(server.ws, token)
    try:
        await client.request("queue", target=50)
        await client.next_event("matched", timeout=30)
        over = await play_to_the_end(client, timeout=180)
        ratings = await client.next_event("ratings", timeout=30)
        return {"over": over, "ratings": ratings, "seat": client.seat}
    finally:
        await client.close()


def test_sign_up_log_out_log_in_and_the_player_page(
    browser: Any, server: ServerProcess, console: Console
) -> None:
    name = f"Ada{secrets.token_hex(2)}x"  # a hex tail like b07 reads as "bot"
    context, page = new_page(browser, DESKTOP)
    page.goto(server.base)
    page.fill("#name-input", name)
    page.click("#name-save")
    page.wait_for_selector("#signup-form")  # shown before the guest exists too: wait for it
    page.wait_for_function("() => localStorage.getItem('hearts.guest') !== null")
    guest = json.loads(page.evaluate("localStorage.getItem('hearts.guest')"))
    assert not guest.get("account")
    # Sign up from the lobby: the account keeps the guest's player id.
    page.fill("#signup-name", name)
    page.fill("#signup-password", "a long password")
    page.click("#signup-submit")
    page.wait_for_selector("#logout-btn")
    me = json.loads(page.evaluate("localStorage.getItem('hearts.guest')"))
    assert me["account"] is True and me["player"] == guest["player"]
    page.wait_for_function("() => document.querySelector('#whoami').textContent.length > 0")
    screenshot(page, "account-signed-in-desktop")
    # Log out: the session ends; log back in with the form.
    page.click("#logout-btn")
    page.wait_for_selector("#login-form")
    page.fill("#login-name", name.lower())
    page.fill("#login-password", "wrong password!")
    # A wrong password is answered 401, and Chromium logs every 4xx answer to a fetch.
    console.expect(f"status of 401 (Unauthorized) ({server.base}/api/login")
    page.click("#login-submit")
    page.wait_for_function(
        "() => document.querySelector('#login-form .account-error').textContent.length > 0"
    )
    page.fill("#login-password", "a long password")
    page.click("#login-submit")
    page.wait_for_selector("#logout-btn")

    # One rated game against three bots, on a fresh session of the same account.
    session = _in_thread(login(server.base, name, "a long password"))
    game = _in_thread(_rated_game_against_bots(server, session["token"]))
    seats = game["ratings"]["seats"]
    mine = seats[game["seat"]]
    for seat, line in enumerate(seats):
        if seat != game["seat"]:
            assert line["anchor"] and line["change"] == 0  # bots are anchors: never moved
    scores = game["over"]["scores"]
    others = [s for k, s in enumerate(scores) if k != game["seat"]]
    if scores[game["seat"]] < min(others):
        assert mine["change"] >= 0
    if scores[game["seat"]] > max(others):
        assert mine["change"] <= 0

    # The player page.
    page.click("#my-page")
    page.wait_for_selector("#player:not([hidden])")
    assert page.locator("#rating-plot svg polyline").count() == 1
    assert page.locator("#recent-games tbody tr").count() == 1
    change = page.locator("#recent-games tbody tr td.change").inner_text()
    expected = mine["change"]
    assert change == (f"+{expected}" if expected > 0 else f"−{-expected}" if expected else "±0")
    assert page.locator("#player-rating").inner_text() == f"{mine['after']['display']}?"
    assert "provisional" in page.locator("#player-rank").inner_text()
    screenshot(page, "player-page-desktop")
    context.close()

    context, phone = new_page(browser, PHONE)
    phone.goto(f"{server.base}/p/{me['player']}")
    phone.wait_for_selector("#player:not([hidden])")
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], "the player page must not scroll sideways on a phone"
    screenshot(phone, "player-page-phone")
    # A newcomer on a phone: the lobby offers sign up and log in, without sideways scrolling.
    phone.evaluate("localStorage.clear()")
    phone.goto(server.base)
    phone.wait_for_selector("#signup-form")
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    screenshot(phone, "account-forms-phone")
    context.close()
