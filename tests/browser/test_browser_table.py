"""The web client as a card table, in a real browser: every phase on screen without scrolling at
1280x800 and 390x844 (bounding boxes), the trick's pause and sweep, reduced motion, no press
lost to a redraw, card backs with the real counts, deck designs kept per player, names and
places that agree from each seat. Screenshots go to test-output/screenshots/.
"""

from __future__ import annotations

import itertools
import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from protocol.errors import ERRORS
from tests.support.browser_support import (
    INJECT_JS,
    PAGE_STATE_JS,
    PHONE,
    SIZES,
    click_card,
    new_guest,
    new_page,
    open_table,
    out_of_view,
    pass_three,
    play_first_legal,
    play_until,
    screenshot,
    wait_for_decision,
)
from tests.support.server_process import ServerProcess

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    """Bots that answer in a blink, and a pause between hands long enough to read the summary."""
    proc = ServerProcess(HEARTS_BOT_THINK="0.05", HEARTS_BETWEEN_HANDS="4").start()
    try:
        yield proc
    finally:
        proc.stop()


def _in_view(page: Any, name: str, *selectors: str) -> None:
    missing = out_of_view(page, *selectors)
    screenshot(page, name, full_page=False)  # what the player sees
    assert missing == [], name
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"{name}: the page scrolls sideways ({width}px)"


# --- everything in view, every phase, both sizes ----------------------------------------------


@pytest.mark.parametrize("size", sorted(SIZES))
def test_every_phase_is_on_screen_without_scrolling(
    browser: Any, server: ServerProcess, size: str
) -> None:
    context, page = new_page(browser, SIZES[size])
    new_guest(page, server.base, "Vera")
    page.wait_for_selector("#room-form", state="visible")
    page.select_option("#opt-target", "50")
    page.check("#opt-solo-clock")  # so the player's own clock shows (alone, it is off by default)
    page.click("#open-room")
    page.wait_for_selector("#host-controls", state="visible")
    _in_view(page, f"view-{size}-open", "#host-controls", "#start-btn", "#fill-bots", ".seat")
    page.select_option("#bot-level", "random")
    page.click("#fill-bots")
    page.click("#start-btn:not([disabled])")

    assert wait_for_decision(page) == "pass"
    cards = page.locator("#hand button.card:not([disabled])")
    for i in range(3):
        click_card(cards.nth(i))  # lifted cards stay on screen too
    # The player's clock: under the hand on a desktop, in their own seat on a phone.
    clock = "#my-clock" if size == "desktop" else ".seat.is-you .clock"
    page.wait_for_selector(f"{clock}:not([hidden])")
    _in_view(
        page,
        f"view-{size}-pass",
        "#hand button.card",
        "#pass-btn",
        "#prompt-text",
        clock,
        ".seat",
        "#trick-info",
    )
    page.click("#pass-btn")
    page.wait_for_selector("#pass-btn", state="hidden")

    assert wait_for_decision(page) == "play"
    page.wait_for_selector(f"{clock}:not([hidden])")
    _in_view(
        page,
        f"view-{size}-play",
        "#hand button.card",
        "#prompt-text",
        clock,
        ".seat:not(.is-you) .fan",
        "#hint-btn",
        "#last-trick-btn",
    )
    # The score table names every player in full (no "Sout…").
    cut = page.evaluate(
        """() => [...document.querySelectorAll('.scores .th-name')]
          .filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.textContent)"""
    )
    assert cut == []
    page.click("#hint-btn")
    page.wait_for_selector("#hint-box:not([hidden])")
    _in_view(page, f"view-{size}-hint", "#hint-box", "#hand button.card", "#prompt-text")
    page.click('#hint-box [data-close="hint"]')

    play_until(
        page, "hearts.model.game.tricks.length >= 2 && hearts.table.stage.shown.cards.length > 0"
    )
    _in_view(page, f"view-{size}-trick", "#trick .trick-card", "#trick-info", "#hand button.card")
    page.click("#last-trick-btn")
    page.wait_for_selector("#last-trick:not([hidden])")
    _in_view(
        page, f"view-{size}-last-trick", "#last-trick", "#last-trick .card", "#hand button.card"
    )
    page.click('#last-trick [data-close="last"]')

    # The end of the hand: a summary that stays until the next deal.
    play_until(page, "hearts.model.handLog.length >= 1")
    page.wait_for_selector("#hand-summary:not([hidden])")
    _in_view(page, f"view-{size}-summary", "#hand-summary", "#hand-summary table")
    assert "Hand 1" in page.inner_text("#hand-summary")
    time.sleep(1)
    assert page.is_visible("#hand-summary")  # still there while the next deal is on its way
    page.wait_for_function(
        "() => hearts.model.game.handNumber === 2 && hearts.model.game.hand.length === 13"
    )
    page.wait_for_selector("#hand-summary", state="hidden")

    # A moon, fed to the page: the summary carries a banner.
    page.wait_for_function("() => !hearts.table.stage.busy")
    page.evaluate(
        INJECT_JS,
        {
            "event": "hand_over",
            "hand": 2,
            "points": [26, 26, 0, 26],
            "scores": [30, 30, 4, 30],
            "shooter": 2,
            "pass_direction": "right",
            "tricks": [],
        },
    )
    page.wait_for_selector("#hand-summary .moon-banner")
    _in_view(page, f"view-{size}-moon", "#hand-summary", "#hand-summary .moon-banner")
    assert "shot the moon" in page.inner_text("#hand-summary .moon-banner")

    # The end of the game (fed to the page: a whole game to 50 takes too long here).
    page.evaluate(INJECT_JS, {"event": "game_over", "scores": [40, 52, 61, 70], "winners": [0]})
    page.wait_for_selector("#result:not([hidden])")
    _in_view(page, f"view-{size}-result", "#result", "#rematch-btn")
    context.close()


def test_a_watcher_on_a_phone_sees_the_table_in_view(browser: Any, server: ServerProcess) -> None:
    host_context, host = new_page(browser)
    open_table(host, server.base, "Hugo")
    assert wait_for_decision(host) == "pass"
    code = host.evaluate("hearts.model.room")
    context, page = new_page(browser, PHONE)
    new_guest(page, server.base, "Wren", f"/r/{code}")
    page.wait_for_selector("#watching", state="visible")
    assert page.locator("#hand button.card").count() == 0
    # A watcher sees every seat's backs: all four hold 13.
    page.wait_for_function("() => document.querySelectorAll('.seat .fan .back').length === 52")
    _in_view(page, "view-phone-watch", ".seat", ".seat .fan", "#watching")
    context.close()
    host_context.close()


# --- the table: backs, names, places -------------------------------------------------------------


def test_opponents_hold_their_real_count_and_names_agree_with_places(
    browser: Any, server: ServerProcess
) -> None:
    host_context, host = new_page(browser)
    new_guest(host, server.base, "Hana")
    host.click("#open-room")
    host.wait_for_selector("#host-controls", state="visible")
    code = host.evaluate("hearts.model.room")
    guest_context, guest = new_page(browser)
    new_guest(guest, server.base, "Gus", f"/r/{code}")
    guest.wait_for_function("() => hearts.model && hearts.model.you === 1")
    host.select_option("#bot-level", "random")
    host.click("#fill-bots")
    host.click("#start-btn:not([disabled])")
    # Seat 1 is on the host's left; the host is on seat 1's right.
    host.wait_for_selector('.seat-slot.pos-left .seat[data-seat="1"]')
    guest.wait_for_selector('.seat-slot.pos-right .seat[data-seat="0"]')
    assert "Gus" in host.inner_text(".seat-slot.pos-left")
    assert "Hana" in guest.inner_text(".seat-slot.pos-right")
    # Bots have names of their own, never compass points.
    names = host.evaluate("hearts.model.seats.filter((s) => s.bot).map((s) => s.name)")
    assert len(names) == 2 and len(set(names)) == 2
    assert not {w for n in names for w in n.split()} & {"North", "East", "South", "West"}

    assert wait_for_decision(host) == "pass"
    pass_three(host)
    assert wait_for_decision(guest) == "pass"
    pass_three(guest)
    deadline = time.monotonic() + 30
    while guest.evaluate("hearts.model.game.tricks.length") < 3:
        assert time.monotonic() < deadline, "three tricks were not played"
        for page in (host, guest):  # whoever is to play, plays
            if page.evaluate(PAGE_STATE_JS) == "play":
                play_first_legal(page)
        time.sleep(0.05)
    # Each opponent's fan shows the cards that seat really holds.
    guest.wait_for_function("() => !hearts.table.stage.busy")
    counts, left = guest.evaluate(  # at one moment: a bot may play at any time
        """() => [[0, 1, 2, 3].map(
          (s) => document.querySelectorAll(`.seat[data-seat="${s}"] .fan .back`).length),
          hearts.model.game.cardsLeft]"""
    )
    assert counts == [n if s != 1 else 0 for s, n in enumerate(left)]
    # ... in an arc: back i of n turns (i - (n - 1) / 2) * 2.5 degrees (its --i is applied).
    fans = guest.evaluate(
        """() => [...document.querySelectorAll('.seat:not(.is-you) .fan')].map((fan) =>
          [...fan.querySelectorAll('.back')].map((b) => {
            const m = new DOMMatrix(getComputedStyle(b).transform);
            return Math.atan2(m.b, m.a) * 180 / Math.PI;
          }))"""
    )
    assert len(fans) == 3
    for angles in fans:
        n = len(angles)
        assert angles == pytest.approx([(i - (n - 1) / 2) * 2.5 for i in range(n)], abs=0.01)
    guest_context.close()
    host_context.close()


# --- motion ---------------------------------------------------------------------------------------

STAGE_LOG_JS = """() => {
  window.stageLog = [];
  const el = document.querySelector('#trick');
  new MutationObserver(() => window.stageLog.push([el.dataset.stage, performance.now()]))
    .observe(el, {attributes: true, attributeFilter: ['data-stage']});
  window.maxAnimations = 0;
  const look = () => {
    window.maxAnimations = Math.max(window.maxAnimations, document.getAnimations().length);
    requestAnimationFrame(look);
  };
  look();
}"""


def _hold_lengths(page: Any) -> list[float]:
    """How long each finished trick stayed before its sweep, in seconds."""
    log = page.evaluate("window.stageLog")
    return [
        (b[1] - a[1]) / 1000
        for a, b in itertools.pairwise(log)
        if a[0] == "hold" and b[0] == "sweep"
    ]


def test_a_finished_trick_stays_then_sweeps_and_a_click_skips_the_pause(
    browser: Any, server: ServerProcess
) -> None:
    context, page = new_page(browser)
    open_table(page, server.base, "Mo")
    assert wait_for_decision(page) == "pass"
    page.evaluate(STAGE_LOG_JS)
    pass_three(page)
    play_until(page, "hearts.model.game.tricks.length >= 3")
    page.wait_for_function("() => !hearts.table.stage.busy", timeout=10_000)
    holds = _hold_lengths(page)
    assert holds and all(1.1 <= h < 2.5 for h in holds), holds  # the default pause: 1.2 s
    assert page.evaluate("window.maxAnimations") > 0  # cards travelled

    # A longer pause, chosen in the settings, and a click on the trick that cuts it short.
    page.click("#settings > summary")
    page.select_option("#set-pause", "3")
    page.click("#settings > summary")
    page.evaluate("window.stageLog = []")
    before = page.evaluate("hearts.model.game.tricks.length")
    play_until(page, f"hearts.model.game.tricks.length > {before}")
    page.wait_for_selector('#trick[data-stage="hold"]', state="attached")
    time.sleep(0.3)
    page.click("#trick")
    page.wait_for_function("() => window.stageLog.some((e) => e[0] === 'sweep')", timeout=1500)
    assert _hold_lengths(page)[0] < 1.5
    context.close()


def test_reduced_motion_moves_nothing_but_keeps_the_pause(
    browser: Any, server: ServerProcess
) -> None:
    context, page = new_page(browser, reduced_motion="reduce")
    open_table(page, server.base, "Rex")
    assert wait_for_decision(page) == "pass"
    # Alone with bots and the host's clock off: no clock runs for anyone.
    time.sleep(0.5)
    assert page.is_hidden("#my-clock") and page.locator(".seat .clock:visible").count() == 0
    page.evaluate(STAGE_LOG_JS)
    pass_three(page)
    play_until(page, "hearts.model.game.tricks.length >= 2")
    page.wait_for_function("() => !hearts.table.stage.busy", timeout=10_000)
    assert page.evaluate("window.maxAnimations") == 0
    assert _hold_lengths(page)  # a finished trick still stays to be read
    context.close()


def test_a_press_held_while_an_event_arrives_is_not_lost(
    browser: Any, server: ServerProcess
) -> None:
    context, page = new_page(browser)
    open_table(page, server.base, "Pia")
    assert wait_for_decision(page) == "pass"
    card = page.locator("#hand button.card").nth(4)
    name = card.get_attribute("data-card")
    card.evaluate("el => { el.dataset.mark = 'same'; }")
    box = card.bounding_box()
    page.mouse.move(box["x"] + 6, box["y"] + box["height"] / 2)
    page.mouse.down()
    # Events arrive and the table redraws while the button is held down.
    for n in (1, 2, 3):
        page.evaluate(INJECT_JS, {"event": "spectators", "count": n})
    page.mouse.up()
    pressed = page.locator(f'#hand button[data-card="{name}"]')
    assert pressed.get_attribute("aria-pressed") == "true"
    assert pressed.get_attribute("data-mark") == "same"  # the very same button: nothing rebuilt
    context.close()


@pytest.mark.parametrize("size", sorted(SIZES))
def test_a_move_whose_outcome_is_unknown_is_caught_up_from_the_room(
    browser: Any, server: ServerProcess, size: str
) -> None:
    """The store did not confirm a move (docs/protocol.md ``outcome_unknown``), which it had in
    fact made, and its events never reached the page: the page resumes the room, and the card
    leaves the hand. Played through a real socket; a route between page and server withholds
    the move's events and turns its ``ok`` into the error, as a node whose commit timed out
    does."""
    withheld: dict[str, Any] = {"play": None, "events": [], "sent": []}

    def route(page_side: Any) -> None:
        server_side = page_side.connect_to_server()

        def from_page(message: str | bytes) -> None:
            frame = json.loads(message)
            withheld["sent"].append(frame.get("type"))
            if frame.get("type") == "play" and withheld["play"] is None:
                withheld["play"] = frame["id"]
            server_side.send(message)

        def from_server(message: str | bytes) -> None:
            frame = json.loads(message)
            play = withheld["play"]
            if play is not None and not withheld["sent"].count("resume"):
                if frame.get("type") == "event":
                    withheld["events"].append(frame)
                    return
                if frame.get("re") == play and frame.get("type") == "ok":
                    frame = {
                        "type": "error",
                        "re": play,
                        "code": "outcome_unknown",
                        "message": ERRORS["outcome_unknown"],
                    }
                    page_side.send(json.dumps(frame))
                    return
            page_side.send(message)

        page_side.on_message(from_page)
        server_side.on_message(from_server)

    context, page = new_page(browser, SIZES[size])
    page.route_web_socket(re.compile(r"/ws"), route)
    open_table(page, server.base, "Uma")
    while (state := wait_for_decision(page)) != "play":
        assert state == "pass", state
        pass_three(page)
    card = play_first_legal(page)  # returns once the card has left the hand
    assert withheld["events"], "no event of the move was withheld: the route saw none"
    assert any(e.get("event") == "card_played" for e in withheld["events"])
    assert withheld["sent"][withheld["sent"].index("play") :].count("resume") == 1
    assert card not in page.evaluate("hearts.model.game.hand")
    screenshot(page, f"table-outcome-unknown-caught-up-{size}", full_page=False)  # the toast
    page.wait_for_timeout(2500)
    screenshot(page, f"table-outcome-unknown-later-{size}", full_page=False)
    context.close()


# --- deck designs: per player, remembered ---------------------------------------------------------


def test_deck_designs_are_chosen_per_player_and_remembered(
    browser: Any, server: ServerProcess
) -> None:
    context, page = new_page(browser)
    open_table(page, server.base, "Dee")
    assert wait_for_decision(page) == "pass"
    look = """() => ({
      back: getComputedStyle(document.querySelector('.seat .fan .back')).backgroundColor,
      heart: getComputedStyle(document.querySelector('.card-face.suit-H') || document.body).color,
      club: getComputedStyle(document.querySelector('.card-face.suit-C') || document.body).color,
    })"""
    before = page.evaluate(look)
    page.click("#settings > summary")
    page.check('#set-back input[value="navy"]')
    page.check('#set-face input[value="two"]')
    screenshot(page, "settings", full_page=False)
    page.click("#settings > summary")
    after = page.evaluate(look)
    assert after["back"] != before["back"]
    assert after["back"] == "rgb(30, 58, 138)"  # navy
    if page.locator("#hand .card-face.suit-C").count():
        assert (before["club"], after["club"]) == ("rgb(22, 101, 52)", "rgb(17, 24, 39)")
    screenshot(page, "deck-navy-two-colour")
    page.reload()
    page.wait_for_function("() => hearts.model && hearts.model.game")
    page.wait_for_selector(".seat .fan .back")
    assert page.evaluate(look) == after  # remembered in this browser
    assert page.evaluate("document.documentElement.dataset.face") == "two"
    # Another player's screen keeps its own design.
    other_context, other = new_page(browser)
    new_guest(other, server.base, "Eli", f"/r/{page.evaluate('hearts.model.room')}")
    other.wait_for_selector(".seat .fan .back")
    assert other.evaluate("document.documentElement.dataset.back") == "ruby"
    assert other.evaluate(look)["back"] == before["back"]
    other_context.close()
    context.close()
