"""The web client in English, Brazilian Portuguese and Arabic: the language comes from the
browser and can be switched (and is remembered), every catalog has every key, a hand is played
in each language with card names spoken in it, and the Arabic page is mirrored right to left
with nothing running off the screen.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.browser_support import (
    DESKTOP,
    INJECT_JS,
    PHONE,
    new_page,
    open_table,
    out_of_view,
    pass_three,
    play_first_legal,
    screenshot,
    wait_for_decision,
)
from tests.support.server_process import ServerProcess

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

sync_api = pytest.importorskip("playwright.sync_api")

# What each language calls a few things: the Leave button, a suit as spoken in a card's name.
WORDS = {
    "en": {"leave": "Leave table", "card": " of ", "dir": "ltr"},
    "pt-BR": {"leave": "Sair da mesa", "card": " de ", "dir": "ltr"},
    "ar": {"leave": "غادر الطاولة", "card": "ال", "dir": "rtl"},
}


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    proc = ServerProcess(HEARTS_BOT_THINK="0", HEARTS_BETWEEN_HANDS="0.5").start()
    try:
        yield proc
    finally:
        proc.stop()


def test_every_catalog_has_every_key(browser: Any, server: ServerProcess) -> None:
    page = browser.new_page()
    page.goto(server.base + "/static/index.html")
    missing = page.evaluate(
        """async () => {
          const {LANGUAGES} = await import('/static/i18n.js');
          const keys = (c) => Object.keys(c).filter((k) => k !== 'cards');
          const en = keys(LANGUAGES.en);
          const out = {};
          for (const [lang, c] of Object.entries(LANGUAGES)) {
            out[lang] = en.filter((k) => !(k in c));
            for (const part of ['ranks', 'suits']) {
              const want = Object.keys(LANGUAGES.en.cards[part]);
              const gone = want.filter((k) => !(k in c.cards[part]));
              out[lang].push(...gone.map((k) => `${part}.${k}`));
            }
          }
          return out;
        }"""
    )
    assert missing == {"en": [], "pt-BR": [], "ar": []}
    page.close()


@pytest.mark.parametrize(
    ("lang", "size"), [("en", "phone"), ("pt-BR", "phone"), ("ar", "phone"), ("ar", "desktop")]
)
def test_a_hand_in_each_language(browser: Any, server: ServerProcess, lang: str, size: str) -> None:
    viewport = PHONE if size == "phone" else DESKTOP
    context, page = new_page(browser, viewport, locale=lang)
    words = WORDS[lang]
    open_table(page, server.base, "Lia")
    assert page.evaluate("[document.documentElement.lang, document.documentElement.dir]") == [
        lang,
        words["dir"],
    ]
    assert page.inner_text("#leave-btn") == words["leave"]
    assert wait_for_decision(page) == "pass"
    pass_three(page)
    checked = False
    while page.evaluate("hearts.model.handLog.length") < 1:
        state = wait_for_decision(page, timeout=30)
        if state == "moon":
            page.click('#moon-choice button[data-choice="others_26"]')
            continue
        if state == "pass":
            break  # the next hand has begun
        assert state == "play"
        if not checked:
            labels = page.eval_on_selector_all(
                "#hand button.card", "els => els.map((e) => e.getAttribute('aria-label'))"
            )
            assert labels and all(words["card"] in label for label in labels), labels
            _no_overflow(page, f"lang-{lang}-{size}")
            if lang == "ar":
                _mirrored(page, size)
            checked = True
        play_first_legal(page)
    assert checked and page.evaluate("hearts.model.handLog.length") >= 1
    context.close()


def _no_overflow(page: Any, name: str) -> None:
    """Nothing runs off the screen, and no seat's parts stick out of the seat."""
    screenshot(page, name, full_page=False)
    assert out_of_view(page, ".seat", ".seat .badge", "#hand button.card", "#prompt-text") == []
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]
    sticking_out = page.evaluate(
        """() => [...document.querySelectorAll('.seat > *:not([hidden]), .seat .badge')]
          .filter((el) => {
            const seat = el.closest('.seat').getBoundingClientRect();
            const r = el.getBoundingClientRect();
            return r.width && (r.left < seat.left - 1 || r.right > seat.right + 1);
          })
          .map((el) => el.className)"""
    )
    assert sticking_out == []


def _mirrored(page: Any, size: str) -> None:
    """Right to left: the page's furniture is mirrored; the felt keeps its geometry, because
    seats are places at a table (the player on your left stays on your left)."""
    box = lambda sel: page.locator(sel).bounding_box()  # noqa: E731
    brand, settings = box(".brand"), box("#settings")
    assert brand["x"] > settings["x"]  # the name of the site at the right, settings at the left
    title, leave = box("#room-title"), box("#leave-btn")
    assert title["x"] > leave["x"]
    if size == "desktop":
        assert box(".side")["x"] + box(".side")["width"] <= box(".play-area")["x"]
    left, right = box(".seat-slot.pos-left"), box(".seat-slot.pos-right")
    assert left["x"] < right["x"]
    assert (
        page.evaluate("getComputedStyle(document.querySelector('#prompt-text')).direction") == "rtl"
    )


def test_the_language_can_be_switched_and_is_remembered(
    browser: Any, server: ServerProcess
) -> None:
    context, page = new_page(browser, DESKTOP, locale="en-US")
    open_table(page, server.base, "Sol")
    assert wait_for_decision(page) == "pass"
    assert page.inner_text("#leave-btn") == "Leave table"
    page.click("#settings > summary")
    page.select_option("#set-lang", "pt-BR")
    assert page.inner_text("#leave-btn") == "Sair da mesa"
    assert "Escolha três cartas" in page.inner_text("#prompt-text")
    # A refusal from the server is told in the page's language (by its error code).
    page.click("#settings > summary")
    page.evaluate(
        INJECT_JS,
        {"event": "your_turn", "seat": 0, "phase": "moon_choice", "legal": [], "clock": None},
    )
    page.click('#moon-choice button[data-choice="others_26"]')
    page.wait_for_selector("#toast:not([hidden])")
    assert page.inner_text("#toast") == "Não neste momento do jogo."
    page.click("#settings > summary")
    page.select_option("#set-lang", "ar")
    assert page.evaluate("document.documentElement.dir") == "rtl"
    page.reload()
    page.wait_for_function("() => hearts.model && hearts.model.game")
    assert page.evaluate("[document.documentElement.lang, document.documentElement.dir]") == [
        "ar",
        "rtl",
    ]
    assert page.inner_text("#leave-btn") == "غادر الطاولة"
    context.close()
