"""Helpers for the real-browser tests: Debian's Chromium under Playwright, frame capture, and
small page-reading functions that know the web client's markup (server/static/)."""

from __future__ import annotations

import json
import re
import shutil
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "test-output" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
SIZES = {"desktop": DESKTOP, "phone": PHONE}  # every screen is checked at both


def chromium_path() -> str:
    """Debian's Chromium (``make system-deps`` installs it); Playwright cannot download one here."""
    if Path(CHROMIUM).exists():
        return CHROMIUM
    found = shutil.which("chromium")
    if found is None:
        pytest.fail("chromium is not installed (apt-get install chromium, or make system-deps)")
    return found


@dataclass
class Console:
    """The console errors and uncaught exceptions of every page one test opened, less the ones
    a step of the test causes on purpose (``expect``)."""

    problems: list[str] = field(default_factory=list)
    expected: list[str] = field(default_factory=list)

    def watch(self, context: Any) -> None:
        """Listen to every page of ``context`` (Chromium reports CSP refusals and failed loads
        as console errors)."""

        def on_console(message: Any) -> None:
            if message.type == "error":
                where = message.location
                self._error(f"console: {message.text} ({where['url']}:{where['lineNumber']})")

        context.on("console", on_console)
        context.on("weberror", lambda e: self._error(f"page error: {e.error}"))

    def expect(self, fragment: str) -> None:
        """The next step logs one console error containing ``fragment`` on purpose, and must.
        Only for what no script can silence: Chromium logs every 4xx answer to a fetch."""
        self.expected.append(fragment)

    def _error(self, text: str) -> None:
        for i, fragment in enumerate(self.expected):
            if fragment in text:
                del self.expected[i]
                return
        self.problems.append(text)

    def verdict(self) -> str:
        """What went wrong, identical messages counted once ("" when nothing did)."""
        # CSP messages differ only by the refused text's hash.
        seen = Counter(re.sub(r"'sha256-[^']*'", "'sha256-…'", p) for p in self.problems)
        lines = [f"{n} × {text}" for text, n in seen.items()]
        lines += [f"expected, never logged: {fragment}" for fragment in self.expected]
        if not lines:
            return ""
        return f"{len(self.problems)} console errors or page errors:\n" + "\n".join(lines)


def screenshot(page: Any, name: str, *, full_page: bool = True) -> Path:
    """Save a screenshot. A full-page one briefly resizes the viewport (a layout sized to the
    screen reflows), so checks of what is on screen come before it or use ``full_page=False``."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path


@dataclass
class Frames:
    """Every WebSocket frame a page sent and received, decoded (the client speaks JSON)."""

    sent: list[dict[str, Any]] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)

    def attach(self, page: Any) -> Frames:
        def on_socket(ws: Any) -> None:
            ws.on("framesent", lambda payload: self._add(self.sent, payload))
            ws.on("framereceived", lambda payload: self._add(self.received, payload))

        page.on("websocket", on_socket)
        return self

    @staticmethod
    def _add(into: list[dict[str, Any]], payload: Any) -> None:
        if isinstance(payload, bytes | bytearray):
            payload = payload.decode("utf-8", "replace")
        try:
            into.append(json.loads(payload))
        except ValueError:
            into.append({"raw": payload})

    def sent_of(self, kind: str) -> list[dict[str, Any]]:
        return [f for f in self.sent if f.get("type") == kind]

    def events(self, name: str) -> list[dict[str, Any]]:
        return [f for f in self.received if f.get("type") == "event" and f.get("event") == name]


# What the page asks of its player now: "over", "moon", "pass", "play" or false (nothing yet).
PAGE_STATE_JS = """() => {
  const shown = (sel) => { const el = document.querySelector(sel); return el && !el.hidden; };
  if (shown('#result')) return 'over';
  if (shown('#moon-choice')) return 'moon';
  const enabled = document.querySelector('#hand button.card:not([disabled])');
  if (shown('#pass-btn') && enabled) return 'pass';
  if (document.querySelector('#hand button.card.legal:not([disabled])')) return 'play';
  return false;
}"""


def wait_for_decision(page: Any, timeout: float = 20) -> str:
    """Block until the page offers a decision (or shows the game's end); which one."""
    handle = page.wait_for_function(PAGE_STATE_JS, timeout=timeout * 1000, polling=50)
    return str(handle.json_value())


def new_guest(page: Any, base: str, name: str, path: str = "/") -> None:
    """Open the client at ``path`` and pick a name (a fresh guest identity)."""
    page.goto(base + path)
    page.fill("#name-input", name)
    page.click("#name-save")


def click_card(card: Any) -> None:
    """Click a card of the overlapping hand where it shows: the strip at its left edge (the
    hand is one row, each card partly under the next). The mouse goes where a player's would,
    after checking that nothing else is on top there (Playwright's own retries would scroll)."""
    card.wait_for(state="visible")
    ends = time.monotonic() + 3.0
    while True:  # a hand that is still settling (a card leaving, a trick sweeping) takes no click
        box = card.bounding_box()
        assert box is not None
        x, y = box["x"] + 6, box["y"] + box["height"] / 2
        on_top = card.evaluate(
            "(el, [x, y]) => el.contains(document.elementFromPoint(x, y))", [x, y]
        )
        if on_top or time.monotonic() > ends:
            break
        card.page.wait_for_timeout(50)
    if not on_top:  # name what covers it: the failure then says what to fix
        cover = card.evaluate(
            "(el, [x, y]) => { const c = document.elementFromPoint(x, y);"
            " return c ? c.outerHTML.slice(0, 200) : 'nothing'; }",
            [x, y],
        )
        raise AssertionError(f"{cover} covers {card.get_attribute('data-card')} at {x:.0f},{y:.0f}")
    card.page.mouse.click(x, y)


OUT_OF_VIEW_JS = """(selectors) => {
  const vw = innerWidth, vh = innerHeight, bad = [];
  if (scrollX !== 0 || scrollY !== 0) bad.push(`the page is scrolled to ${scrollX},${scrollY}`);
  for (const sel of selectors) {
    const els = [...document.querySelectorAll(sel)];
    if (!els.length) bad.push(`${sel}: not in the page`);
    for (const el of els) {
      const r = el.getBoundingClientRect();
      if (!r.width || !r.height) bad.push(`${sel}: not shown`);
      else if (r.left < -0.5 || r.top < -0.5 || r.right > vw + 0.5 || r.bottom > vh + 0.5) {
        const at = [r.left, r.top, r.right, r.bottom].map(Math.round);
        bad.push(`${sel}: ${at[0]},${at[1]} to ${at[2]},${at[3]} in ${vw}x${vh}`);
      }
    }
  }
  return bad;
}"""


def out_of_view(page: Any, *selectors: str) -> list[str]:
    """Which of the elements (every match of each selector) are not wholly on screen, with the
    page unscrolled; [] when all are."""
    return list(page.evaluate(OUT_OF_VIEW_JS, list(selectors)))


# Feed the page an event as if from the server (prompts a random game seldom reaches).
INJECT_JS = """(event) => hearts.conn.dispatchEvent(new CustomEvent('event', {
  detail: {type: 'event', room: hearts.conn.room, seq: hearts.conn.seq, ...event},
}))"""


def open_table(page: Any, base: str, name: str, *, solo_clock: bool = False) -> None:
    """A fresh guest opens a friends' table to 50, fills it with random bots and starts."""
    new_guest(page, base, name)
    page.wait_for_selector("#room-form", state="visible")
    page.select_option("#opt-target", "50")
    if solo_clock:
        page.check("#opt-solo-clock")
    page.click("#open-room")
    page.wait_for_selector("#host-controls", state="visible")
    page.select_option("#bot-level", "random")
    page.click("#fill-bots")
    page.click("#start-btn:not([disabled])")


def pass_three(page: Any) -> None:
    cards = page.locator("#hand button.card:not([disabled])")
    for i in range(3):
        click_card(cards.nth(i))
    page.click("#pass-btn")
    page.wait_for_selector("#pass-btn", state="hidden")


def play_first_legal(page: Any) -> str:
    """Play the first playable card; wait until it left the hand (or the hand is over)."""
    legal = page.locator("#hand button.card.legal:not([disabled])").first
    card = str(legal.get_attribute("data-card"))
    hand = page.evaluate("hearts.model.game.handNumber")
    click_card(legal)
    page.wait_for_function(
        """([card, hand]) => {
          const m = hearts.model;
          const g = m.game;
          return m.status !== 'playing' || g.handNumber !== hand || !g.hand.includes(card);
        }""",
        arg=[card, hand],
    )
    return card


def new_page(browser: Any, viewport: dict[str, int] = DESKTOP, **options: Any) -> tuple[Any, Any]:
    """A fresh context and page at ``viewport`` (its errors go to the ``console`` guard)."""
    context = browser.new_context(viewport=viewport, **options)
    context.set_default_timeout(20_000)
    return context, context.new_page()


def play_until(page: Any, done: str, timeout: float = 60) -> None:
    """Pass and play first legal cards until the JS condition ``done`` holds (or the game ends)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    deadline = time.monotonic() + timeout
    while not page.evaluate(done):
        assert time.monotonic() < deadline, f"never reached: {done}"
        try:
            state = wait_for_decision(page, timeout=2)
        except PlaywrightTimeout:
            continue
        if state == "pass":
            pass_three(page)
        elif state == "play":
            play_first_legal(page)
        elif state == "moon":
            page.click('#moon-choice button[data-choice="others_26"]')
        else:
            return
