"""Accessibility and attention in a real browser: cards are named buttons, turns and tricks are
announced, axe-core finds no serious violation at either size, and the sound and notification
for a turn while the tab is hidden are off until the player turns them on."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.browser_support import (
    SIZES,
    new_guest,
    new_page,
    open_table,
    pass_three,
    play_until,
    wait_for_decision,
)
from tests.support.server_process import ServerProcess

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    proc = ServerProcess(HEARTS_BOT_THINK="0.05", HEARTS_BETWEEN_HANDS="1").start()
    try:
        yield proc
    finally:
        proc.stop()


# --- your turn while the tab is hidden --------------------------------------------------------

FAKE_HIDDEN_JS = """
window.__notes = []; window.__chimes = 0;
Object.defineProperty(document, 'hidden', {get: () => window.__hidden === true});
class FakeNotification { constructor(title, opts) { window.__notes.push(opts.body); } close() {} }
FakeNotification.permission = 'default';
FakeNotification.requestPermission = async () => (FakeNotification.permission = 'granted');
window.Notification = FakeNotification;
window.AudioContext = class {
  createOscillator() {
    window.__chimes += 1;
    return {frequency: {}, connect: (g) => g, start() {}, stop() {}};
  }
  createGain() {
    return {gain: {setValueAtTime() {}, exponentialRampToValueAtTime() {}}, connect: (d) => d};
  }
  get currentTime() { return 0; }
  get destination() { return {}; }
};
"""


def test_hidden_tab_sound_and_notification_are_opt_in(browser: Any, server: ServerProcess) -> None:
    context, page = new_page(browser)
    context.add_init_script(FAKE_HIDDEN_JS)
    open_table(page, server.base, "Nia")
    assert wait_for_decision(page) == "pass"
    pass_three(page)
    page.evaluate("window.__hidden = true")
    play_until(page, "hearts.model.game.tricks.length >= 2")
    # Off by default: the title changes, nothing rings, nothing is asked.
    assert page.evaluate("[window.__notes.length, window.__chimes, Notification.permission]") == [
        0,
        0,
        "default",
    ]
    assert page.evaluate("window.__hidden = false") is False
    page.click("#settings > summary")
    page.check("#set-notify")  # only now is permission asked for
    page.check("#set-sound")
    page.wait_for_function("() => Notification.permission === 'granted'")
    page.click("#settings > summary")
    chimes = page.evaluate("window.__chimes")  # turning the sound on plays a sample
    page.evaluate("window.__hidden = true")
    before = page.evaluate("hearts.model.game.tricks.length")
    play_until(page, f"hearts.model.game.tricks.length >= {before + 2}")
    notes, rang = page.evaluate("[window.__notes, window.__chimes]")
    assert notes and all("turn" in n.lower() for n in notes)
    assert rang > chimes
    assert wait_for_decision(page) == "play"
    assert page.title().startswith("▶")
    context.close()


# --- accessibility --------------------------------------------------------------------------------


def test_cards_are_named_buttons_turns_are_announced_and_axe_finds_nothing_serious(
    browser: Any, server: ServerProcess
) -> None:
    axe_module = pytest.importorskip("axe_playwright_python.sync_playwright")
    axe = axe_module.Axe()
    for size, viewport in SIZES.items():
        context, page = new_page(browser, viewport)
        new_guest(page, server.base, "Ari")
        page.wait_for_selector("#room-form", state="visible")
        _no_serious(axe, page, f"lobby {size}")
        page.click("#open-room")
        page.wait_for_selector("#host-controls", state="visible")
        _no_serious(axe, page, f"open table {size}")
        page.select_option("#bot-level", "random")
        page.click("#fill-bots")
        page.click("#start-btn:not([disabled])")
        assert wait_for_decision(page) == "pass"
        pass_three(page)
        assert wait_for_decision(page) == "play"
        labels = page.eval_on_selector_all(
            "#hand button.card", "els => els.map((e) => [e.tagName, e.getAttribute('aria-label')])"
        )
        assert all(tag == "BUTTON" and label and " of " in label for tag, label in labels)
        assert any(", playable" in label for _, label in labels)
        assert any("cannot be played now" in label for _, label in labels) or len(labels) == 1
        _no_serious(axe, page, f"play {size}")
        page.wait_for_function("() => document.querySelector('#announce').textContent.length > 0")
        play_until(page, "hearts.model.game.tricks.length >= 1")
        page.wait_for_function(
            "() => /took the trick|turn/i.test(document.querySelector('#announce').textContent)"
        )
        context.close()


def _no_serious(axe: Any, page: Any, where: str) -> None:
    # Judged at rest: a card still fading in (the pass's received cards slide in over about
    # 0.6 s) has a contrast of its own for that moment, and axe once caught one mid-fade.
    page.wait_for_function("() => document.getAnimations().every((a) => a.playState !== 'running')")
    results = axe.run(page)
    serious = [
        v for v in results.response["violations"] if v.get("impact") in ("serious", "critical")
    ]
    assert serious == [], f"{where}: " + "; ".join(
        f"{v['id']}: {v['help']} ({[n['target'] for n in v['nodes']]})" for v in serious
    )
