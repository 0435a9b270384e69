"""The web client in a real browser (Playwright driving Debian's Chromium) against a real server.

A guest opens a room, fills it with bots and plays a whole game by clicking legal cards; an
illegal card cannot be played; a watcher joins by the invite link on a phone-sized screen and
sees no hand; a dropped socket resumes; an idle seat's clock runs down and it gets booted; each
hand's deal is verified in the browser; the browser's fair-deal code matches the known-answer
vectors. Screenshots go to test-output/screenshots/.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from protocol.shuffle import deal_context, seat_commitment
from tests.support.browser_support import (
    INJECT_JS,
    PHONE,
    ROOT,
    Frames,
    click_card,
    new_guest,
    new_page,
    screenshot,
    wait_for_decision,
)
from tests.support.server_process import ServerProcess

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    """Fast bots, no pause between hands (a game to 50 takes seconds); quick play seats
    bots after a second."""
    proc = ServerProcess(
        HEARTS_BOT_THINK="0", HEARTS_BETWEEN_HANDS="0", HEARTS_BOT_FILL_AFTER="1"
    ).start()
    try:
        yield proc
    finally:
        proc.stop()


# --- the fair deal in the browser ------------------------------------------------------------

VECTORS_JS = """
async ([deal, audit, fallback]) => {
  const m = await import('/static/fairdeal.js');
  m.useFallbackCrypto(fallback);
  const cases = [];
  for (const c of deal.cases) {
    const ctx = m.dealContext(c.game, c.hand);
    const seats = [];
    for (const s of c.seats) {
      let secret;
      let commitment = s.commitment ?? null;
      if (s.kind === 'human') {
        secret = s.secret;
        commitment = await m.seatCommitment(c.game, c.hand, s.seat, s.secret);
      } else if (s.kind === 'bot') {
        secret = m.toHex(await m.botSecret(ctx, c.server_secret, s.seat));
      } else {
        secret = m.toHex(await m.absentSecret(ctx, c.server_secret, s.seat));
      }
      seats.push({seat: s.seat, kind: s.kind, commitment, secret});
    }
    const after = [];
    const keys = seats.map((s) => s.secret);
    const deck = await m.deriveDeck(ctx, c.server_secret, keys, (k, d) => after.push(d));
    cases.push({
      ctx: m.toHex(ctx),
      server_commitment: m.toHex(await m.serverCommitment(ctx, c.server_secret)),
      seats,
      stream: [m.toHex(await m.keyStreamBlock(ctx, c.server_secret, 0)),
               m.toHex(await m.keyStreamBlock(ctx, c.server_secret, 1))],
      deck_after_each_shuffle: after,
      deck: deck.map(m.cardName),
      hands: m.dealHands(deck),
    });
  }
  const invalid = [];
  for (const bad of audit.invalid) invalid.push(await m.verifyAudit(bad.audit, bad.own ?? null));
  const secret = m.makeSecret();
  return {
    backend: m.cryptoBackend(),
    cases,
    valid: await m.verifyAudit(audit.valid),
    validWithOwn: await m.verifyAudit(audit.valid, audit.own),
    ownMismatch: await m.verifyAudit(audit.valid, {...audit.own, secret}),
    invalid,
    secret,
    secretCommitment: await m.seatCommitment('g-0001', 1, 2, secret),
  };
}
"""


def test_fair_deal_matches_the_known_answers(browser: Any, server: ServerProcess) -> None:
    """fairdeal.js re-derives every vector of protocol/vectors (WebCrypto and the JS fallback)."""
    deal = json.loads((ROOT / "protocol/vectors/deal-v1.json").read_text())
    audit = json.loads((ROOT / "protocol/vectors/audit-v1.json").read_text())
    context, page = new_page(browser)
    page.goto(server.base + "/static/index.html")
    for fallback, backend in ((False, "webcrypto"), (True, "js")):
        got = page.evaluate(VECTORS_JS, [deal, audit, fallback])
        assert got["backend"] == backend
        for case, mine in zip(deal["cases"], got["cases"], strict=True):
            want = case["expected"]
            name = f"{case['name']} ({backend})"
            assert mine["ctx"] == want["ctx"], name
            assert mine["server_commitment"] == want["server_commitment"], name
            assert mine["seats"] == want["seats"], name
            assert mine["stream"] == want["server_stream"], name
            assert mine["deck_after_each_shuffle"] == want["deck_after_each_shuffle"], name
            assert mine["deck"] == want["deck"], name
            assert mine["hands"] == want["hands"], name
        assert got["valid"] == [], backend
        assert got["validWithOwn"] == [], backend
        assert any("not your secret" in p for p in got["ownMismatch"]), got["ownMismatch"]
        for bad, problems in zip(audit["invalid"], got["invalid"], strict=True):
            assert problems, f"{bad['name']} was not refused ({backend})"
        # A fresh browser secret: 32 random bytes whose commitment Python agrees with.
        assert re.fullmatch(r"[0-9a-f]{64}", got["secret"])
        python = seat_commitment(deal_context("g-0001", 1), 2, bytes.fromhex(got["secret"]))
        assert got["secretCommitment"] == python.hex()
    context.close()


# --- a whole game ----------------------------------------------------------------------------


def test_a_whole_game_with_bots_a_watcher_and_a_dropped_connection(
    browser: Any, server: ServerProcess
) -> None:
    context, page = new_page(browser)
    frames = Frames().attach(page)

    new_guest(page, server.base, "Ann")
    page.wait_for_selector("#room-form", state="visible")
    page.wait_for_function(
        "() => document.querySelector('#quick-panel').dataset.supported !== 'unknown'"
    )
    screenshot(page, "lobby")
    page.select_option("#opt-target", "50")
    page.click("#open-room")
    page.wait_for_selector("#table-view", state="visible")
    link = page.input_value("#invite-link")
    code = re.fullmatch(rf"{re.escape(server.base)}/r/([A-Za-z0-9_-]+)", link)
    assert code, link
    assert page.url == link  # a reload rejoins the same table
    assert page.locator(".seat.empty").count() == 3
    assert page.is_disabled("#start-btn")

    page.select_option("#bot-level", "random")
    page.click("#fill-bots")
    page.wait_for_selector("#start-btn:not([disabled])")
    # Every bot is marked as one.
    assert page.locator(".seat .badge.bot").count() == 3

    # A second browser (a phone) opens the invite link: every seat is taken, so it watches.
    watcher_context, watcher = new_page(browser, PHONE)
    new_guest(watcher, server.base, "Wes", f"/r/{code.group(1)}")
    watcher.wait_for_selector("#watching", state="visible")

    page.click("#start-btn")

    decisions = {"pass": 0, "play": 0, "moon": 0}
    checked_illegal = dropped = reloaded = shot = hinted = keyboard = False
    hands_seen: set[int] = set()
    while True:
        state = wait_for_decision(page, timeout=30)
        if state == "over":
            break
        model = page.evaluate(
            "() => ({hand: hearts.model.game.handNumber, tricks: hearts.model.game.tricks.length})"
        )
        hands_seen.add(model["hand"])
        decisions[state] += 1
        if state == "pass":
            assert page.is_visible("#pass-btn")
            assert page.is_disabled("#pass-btn")
            cards = page.locator("#hand button.card:not([disabled])")
            for i in range(3):
                click_card(cards.nth(i))
            assert page.locator('#hand button.card[aria-pressed="true"]').count() == 3
            page.click("#pass-btn")
            page.wait_for_selector("#pass-btn", state="hidden")
            continue
        if state == "moon":
            page.click('#moon-choice button[data-choice="others_26"]')
            page.wait_for_selector("#moon-choice", state="hidden")
            continue
        illegal = page.locator("#hand button.card.illegal")
        if not checked_illegal and illegal.count():
            # An illegal card is a disabled button: clicking it sends nothing.
            before = len(frames.sent_of("play"))
            card = illegal.first.get_attribute("data-card")
            assert illegal.first.is_disabled()
            illegal.first.click(force=True)
            time.sleep(0.2)
            assert len(frames.sent_of("play")) == before
            assert page.locator(f'#hand button[data-card="{card}"]').count() == 1
            checked_illegal = True
        if not shot and model["tricks"] >= 3:
            screenshot(page, "hand-in-progress")
            watcher.wait_for_function("() => hearts.model && hearts.model.game.tricks.length >= 3")
            screenshot(watcher, "watcher-phone")
            _check_watcher(watcher)
            shot = True
        if not hinted:
            _ask_for_a_hint(page)
            hinted = True
        if not keyboard and decisions["play"] >= 2:
            _play_with_the_keyboard(page)
            keyboard = True
            continue
        if dropped and not reloaded and model["tricks"] >= 8:
            # A reload mid-hand rejoins the same seat (the guest token is in localStorage).
            page.reload()
            page.wait_for_function("() => hearts.model && hearts.model.you === 0")
            reloaded = True
            continue
        if not dropped and model["tricks"] >= 5:
            # Drop the socket mid-hand: the client reconnects and resumes from its last seq.
            resumes = len(frames.sent_of("resume"))
            page.evaluate("hearts.conn.ws.close()")
            page.wait_for_selector('#conn-status[data-state="reconnecting"]')
            page.wait_for_selector('#conn-status[data-state="online"]')
            _wait_until(lambda n=resumes + 1: len(frames.sent_of("resume")) == n)
            assert frames.sent_of("resume")[-1]["room"] == code.group(1)
            dropped = True
            continue  # the page may have been re-rendered: look again
        legal = page.locator("#hand button.card.legal:not([disabled])")
        card = legal.first.get_attribute("data-card")
        # That very card: ``legal.first`` is looked up again at each use, and a render between
        # the two (a late event) could make it another card than the one waited for.
        click_card(page.locator(f'#hand button.card[data-card="{card}"]'))
        _wait_played(page, card, model["hand"])

    screenshot(page, "game-end")
    result = page.inner_text("#result")
    assert "Game over" in result
    assert re.search(r"Winners?:", result)
    assert page.is_visible("#rematch-btn")  # the host may start a rematch
    scores = page.evaluate("hearts.model.game.scores")
    assert max(scores) >= 50
    assert decisions["pass"] >= 1 and decisions["play"] >= 13
    assert checked_illegal and dropped and reloaded and shot and hinted and keyboard
    # Everything the page sent was understood: no command was refused as malformed.
    refused = [
        f
        for f in frames.received
        if f.get("type") == "error" and f.get("code") in ("bad_field", "malformed_frame")
    ]
    assert refused == []

    _check_fair_deal(page, frames, hands_seen)

    watcher.wait_for_selector("#result", state="visible")
    assert "Game over" in watcher.inner_text("#result")
    assert not watcher.is_visible("#rematch-btn")  # only the host

    # A rematch: a new game at the same table, for the watcher too.
    page.click("#rematch-btn")
    # The page shows the old game's end until the new game's events arrive.
    page.wait_for_function("() => hearts.model.gameNumber === 2", timeout=20_000)
    assert wait_for_decision(page) == "pass"
    assert page.evaluate("hearts.model.game.scores") == [0, 0, 0, 0]
    assert page.locator("#deal-list li.ok").count() == 0  # the new game's deals are unchecked
    watcher.wait_for_selector("#result", state="hidden")
    watcher_context.close()
    context.close()


def _ask_for_a_hint(page: Any) -> None:
    """The Hint button answers with a suggestion, or says plainly why there is none."""
    page.click("#hint-btn")
    page.wait_for_selector("#hint-box:not([hidden]), #toast:not([hidden])")
    if page.is_visible("#hint-box"):
        assert page.inner_text("#hint-box").startswith("Hint:")
        screenshot(page, "hint")
    else:
        assert "hint" in page.inner_text("#toast").lower()
    assert wait_for_decision(page) in ("play", "pass")  # nothing else changed


def _play_with_the_keyboard(page: Any) -> None:
    """Cards are buttons: Tab reaches the first playable one (with a visible focus ring),
    arrows move between playable cards, Enter plays."""
    legal = page.locator("#hand button.card.legal:not([disabled])")
    legal.first.focus()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")
    focused = "document.activeElement.dataset.card"
    assert page.evaluate(focused) == legal.first.get_attribute("data-card")
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"
    if legal.count() > 1:
        page.keyboard.press("ArrowRight")
        assert page.evaluate(focused) == legal.nth(1).get_attribute("data-card")
    card = page.evaluate(focused)
    hand = page.evaluate("hearts.model.game.handNumber")
    page.keyboard.press("Enter")
    _wait_played(page, card, hand)


def _wait_played(page: Any, card: str, hand: int) -> None:
    """The card left the hand (or the hand is over: the next deal may hold it again)."""
    page.wait_for_function(
        """([card, hand]) => {
          const m = hearts.model;
          return !m || !m.game || m.game.handNumber !== hand || !m.game.hand.includes(card);
        }""",
        arg=[card, hand],
    )


def _wait_until(condition: Any, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _check_watcher(watcher: Any) -> None:
    """A watcher sees the table but no hand, and the page fits a phone's width."""
    assert watcher.locator("#hand button.card").count() == 0
    assert watcher.evaluate("hearts.model.you") is None
    assert watcher.locator(".seat .badge.bot").count() == 3
    assert watcher.locator(".seat").count() == 4
    width = watcher.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the phone layout scrolls sideways ({width}px)"


def _check_fair_deal(page: Any, frames: Frames, hands: set[int]) -> None:
    """Each hand the server audited was committed to, revealed and verified in the page."""
    audits = frames.events("hand_audit")
    if not frames.events("shuffle_commit"):
        # A server without the commit-reveal shuffle yet: nothing to check, and nothing broke.
        assert page.locator("#deal-status.failed").count() == 0
        return
    assert len(frames.sent_of("commit")) >= len(hands)
    assert len(frames.sent_of("reveal")) >= len(hands)
    assert audits, "the server committed to shuffles but published no audit"
    page.wait_for_function(
        "(n) => document.querySelectorAll('#deal-list li.ok').length >= n", arg=len(audits)
    )
    assert page.locator("#deal-list li.bad").count() == 0
    assert page.is_hidden("#deal-warning")
    mark = page.inner_text("#deal-status")
    assert "Deal verified" in mark, mark
    assert "with your secret" in page.inner_text("#deal-list")


# --- prompts a random game seldom reaches -------------------------------------------------------


def test_moon_choice_refusals_and_a_deal_that_does_not_verify(
    browser: Any, server: ServerProcess
) -> None:
    """Events fed to the page as if from the server: the moon choice prompt sends `moon`
    (here refused by the server, which the page shows), and an audit that does not verify
    raises a loud warning."""
    context, page = new_page(browser)
    frames = Frames().attach(page)
    new_guest(page, server.base, "Mona")
    page.click("#open-room")
    page.select_option("#bot-level", "random")
    page.click("#fill-bots")
    page.click("#start-btn:not([disabled])")
    assert wait_for_decision(page) == "pass"

    page.evaluate(
        INJECT_JS,
        {
            "event": "your_turn",
            "seat": 0,
            "phase": "moon_choice",
            "legal": [],
            "choices": ["others_26", "shooter_minus_26"],
            "clock": None,
        },
    )
    assert wait_for_decision(page) == "moon"
    assert "shot the moon" in page.inner_text("#prompt-text")
    page.click('#moon-choice button[data-choice="shooter_minus_26"]')
    page.wait_for_selector("#toast:not([hidden])")
    assert frames.sent_of("moon")[-1]["choice"] == "shooter_minus_26"
    refusal = next(f for f in reversed(frames.received) if f.get("type") == "error")
    assert refusal["code"] == "wrong_phase"
    assert page.inner_text("#toast") == refusal["message"]

    # A fresh view puts the page back in step with the server.
    page.evaluate("hearts.conn.request('view')")
    assert wait_for_decision(page) == "pass"

    audit = json.loads((ROOT / "protocol/vectors/audit-v1.json").read_text())
    page.evaluate(
        INJECT_JS, {"event": "hand_audit", "hand": 1, "audit": audit["invalid"][0]["audit"]}
    )
    page.wait_for_selector("#deal-warning", state="visible")
    assert "did not verify" in page.inner_text("#deal-warning")
    assert "NOT verified" in page.inner_text("#deal-status")
    assert page.locator("#deal-list li.bad").count() == 1
    screenshot(page, "deal-warning")
    context.close()


# --- quick play and the ladder -----------------------------------------------------------------


def test_quick_play_and_the_ladder_light_up(browser: Any, server: ServerProcess) -> None:
    """The server offers quick play and a ladder: the lobby shows both, and a queued player
    is seated at a rated table (bots fill the empty seats)."""
    context, page = new_page(browser, PHONE)
    frames = Frames().attach(page)
    new_guest(page, server.base, "Quin")
    page.wait_for_selector('#quick-panel[data-supported="on"]')
    page.wait_for_selector("#ladder-panel", state="visible")
    assert "Your rating" in page.inner_text("#ladder-panel")
    page.select_option("#quick-target", "50")
    page.click("#quick-btn")
    page.wait_for_selector("#table-view", state="visible", timeout=15_000)
    assert frames.sent_of("queue")[0]["target"] == 50
    assert [f for f in frames.received if f.get("type") in ("queue", "matched")]
    assert wait_for_decision(page) == "pass"
    assert page.evaluate("hearts.model.kind") == "quick"
    assert "rated" in page.inner_text("#room-status")
    assert page.locator(".seat .badge.bot").count() == 3
    assert page.is_hidden("#hint-btn")  # no hints at a rated table
    # Seated by the matchmaker mid-shuffle, the page still took its part (from the view).
    if frames.events("shuffle_commit") or "shuffle" in json.dumps(frames.received):
        assert frames.sent_of("commit") and frames.sent_of("reveal")
        assert "did not take part in the shuffle" not in page.inner_text("#log")
    screenshot(page, "quick-play-phone")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the phone layout scrolls sideways ({width}px)"
    context.close()


# --- clocks and booting ----------------------------------------------------------------------


@pytest.fixture
def slow_server() -> Iterator[ServerProcess]:
    """Short clocks, so a seat runs out of time in seconds; a long boot window to click in."""
    proc = ServerProcess(
        HEARTS_BOT_THINK="0",
        HEARTS_BETWEEN_HANDS="0",
        HEARTS_GRACE_PASS="1.5",
        HEARTS_GRACE_PLAY="1.5",
        HEARTS_BANK="2.5",
        HEARTS_LAG_CAP="0.2",
        HEARTS_BOOT_WINDOW="60",
        HEARTS_RECONNECT="60",
    ).start()
    try:
        yield proc
    finally:
        proc.stop()


def _seat_clock(page: Any, seat: int) -> tuple[str, float]:
    clock = page.locator(f'.seat[data-seat="{seat}"] .clock')
    text = clock.inner_text()
    number = re.search(r"(\d+)s", text)
    return str(clock.get_attribute("data-mode")), float(number.group(1)) if number else 0.0


def test_an_idle_seat_runs_out_of_time_and_is_booted(
    browser: Any, slow_server: ServerProcess
) -> None:
    host_context, host = new_page(browser)
    new_guest(host, slow_server.base, "Hana")
    host.click("#open-room")
    host.wait_for_selector("#table-view", state="visible")
    link = host.input_value("#invite-link")

    idle_context, idle = new_page(browser)
    new_guest(idle, slow_server.base, "Ivo", link.removeprefix(slow_server.base))
    idle.wait_for_selector("#table-view", state="visible")
    assert idle.evaluate("hearts.model.you") == 1
    host.wait_for_selector('.seat[data-seat="1"]:not(.empty)')

    host.click("#fill-bots")
    host.click("#start-btn:not([disabled])")
    assert wait_for_decision(host) == "pass"
    cards = host.locator("#hand button.card:not([disabled])")
    for i in range(3):
        click_card(cards.nth(i))
    host.click("#pass-btn")

    # Ivo does nothing. Hana's page shows his grace, then his bank running down…
    running = '.seat[data-seat="1"] .clock[data-mode="{}"]'
    host.wait_for_selector(f"{running.format('grace')}, {running.format('bank')}", timeout=5000)
    host.wait_for_selector(running.format("bank"), timeout=5000)
    mode, first = _seat_clock(host, 1)
    assert mode == "bank" and first >= 1
    time.sleep(1.1)
    mode, later = _seat_clock(host, 1)
    assert mode == "out" or later < first, (first, later)
    # …and Ivo's own page shows his clock too.
    assert idle.locator("#my-clock").is_visible()

    # Out of time: the server says so, and a Boot button appears for the other human.
    boot = host.locator('.seat[data-seat="1"] button.boot')
    boot.wait_for(state="visible", timeout=8000)
    assert "out of time" in host.inner_text('.seat[data-seat="1"]')
    assert idle.locator("button.boot:visible").count() == 0  # nobody boots himself
    screenshot(host, "boot")
    boot.click()

    # A bot takes the seat at once, marked as a bot on both pages; Ivo now watches.
    host.wait_for_selector('.seat[data-seat="1"] .badge.bot')
    assert host.locator(".seat .badge.bot").count() == 3
    idle.wait_for_selector("#watching", state="visible")
    assert idle.locator("#hand button.card").count() == 0
    assert "booted" in host.inner_text("#log")
    idle_context.close()
    host_context.close()
