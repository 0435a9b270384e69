"""The browser's own check of a finished game's deals: how long the game page (/g/ID) takes to
verify every hand of a real game in Chromium.

    python -m load_tests.bench_replay_verify              # one game to 100, 7 page loads
    python -m load_tests.bench_replay_verify --loads 15 --seed 3

Plays a real game to 100 with the room machine (``load_tests/record_games.py``: four humans
committing and revealing fresh random secrets every hand), serves it to the game page in the
shape of ``GET /api/games/ID`` (Playwright's route interception, a private server for the static
files), and reads the time the page's ``verifyAll`` took (``fairdeal.js`` ``verifyAudit`` on every
hand, one after the other, as a visitor's browser does it). Prints ``name: value`` lines:

- ``replay_verify_ms``: the median over ``--loads`` page loads, WebCrypto (the page is a secure
  context: https, or localhost as here);
- ``replay_verify_ms_first_load``: the first of those loads (a fresh browser: cold code);
- ``replay_verify_ms_js``: the same hands through the pure-JS SHA-256 (``sha256.js``), what a page
  served over plain http from a LAN address uses, where browsers offer no ``crypto.subtle``;
- ``hands``, and ``machine_rules_hands_per_second`` to compare machines.

Needs Chromium at /usr/bin/chromium and Playwright (the browser tests' own).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
from pathlib import Path
from typing import Any

from load_tests.bench_rules import machine_speed, machine_speed_line
from load_tests.record_games import played_game
from tests.support.browser_support import CHROMIUM_ARGS, DESKTOP, chromium_path
from tests.support.server_process import ServerProcess

GAME_HTML = Path(__file__).resolve().parents[1] / "server" / "static" / "game.html"

# Every hand again through the pure-JS hashes, timed in the page.
JS_ONLY = """async (doc) => {
  const m = await import('/static/fairdeal.js');
  m.useFallbackCrypto(true);
  const started = performance.now();
  for (const hand of doc.hands) {
    const problems = await m.verifyAudit(hand.audit);
    if (problems.length) throw new Error(`hand ${hand.number}: ${problems[0]}`);
  }
  const ms = performance.now() - started;
  m.useFallbackCrypto(false);
  return ms;
}"""


def game_document(seed: int) -> dict[str, Any]:
    """A real game to 100 in the shape the API serves (docs/game-format.md)."""
    players = [f"bench-{i}-{seed:04d}" for i in range(4)]
    record, _ = played_game(random.Random(seed), f"bench{seed:04d}", players, 1_760_000_000.0)
    r = record.to_value()
    return {
        "format": "hearts-game/1",
        "game": r["game_id"],
        "room": r["room_id"],
        **{k: r[k] for k in ("kind", "options", "started_at", "finished_at", "rated")},
        **{k: r[k] for k in ("scores", "winners", "departures")},
        "seats": [
            {
                "seat": s["seat"],
                "player": s["participant"],
                "name": s["name"],
                "bot": s["bot"],
                "rating_before": s["rating_before"],
                "rating_after": s["rating_after"],
            }
            for s in r["seats"]
        ],
        "hands": [
            {
                "number": h["number"],
                "over": h["over"],
                "audit": h["audit"]["audit"] if h["audit"] else None,
            }
            for h in r["hands"]
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=7)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    from playwright.sync_api import ViewportSize, sync_playwright

    doc = game_document(args.seed)
    game = doc["game"]
    server = ServerProcess().start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            size = ViewportSize(width=DESKTOP["width"], height=DESKTOP["height"])
            page = browser.new_page(viewport=size)
            page.route(
                f"**/g/{game}",
                lambda route: route.fulfill(
                    status=200, content_type="text/html", body=GAME_HTML.read_text()
                ),
            )
            page.route(
                f"**/api/games/{game}",
                lambda route: route.fulfill(
                    status=200, content_type="application/json", body=json.dumps(doc)
                ),
            )
            times = []
            for _ in range(args.loads):
                page.goto(f"{server.base}/g/{game}")
                page.wait_for_function(
                    "() => document.body.dataset.verifyMs !== undefined", timeout=120_000
                )
                state = page.get_attribute("#deal-summary", "data-state")
                if state != "verified":
                    raise SystemExit(f"the page did not verify the game: {state}")
                times.append(float(page.evaluate("document.body.dataset.verifyMs")))
            js = [float(page.evaluate(JS_ONLY, doc)) for _ in range(3)]
            browser.close()
    finally:
        server.stop()
    print(f"hands: {len(doc['hands'])}")
    print(
        f"replay_verify_ms_first_load: {times[0]:.0f}  (the first load: nothing compiled or cached)"
    )
    print(
        f"replay_verify_ms_js: {statistics.median(js):.0f}  (pure-JS SHA-256: a page on plain http)"
    )
    print(machine_speed_line(machine_speed()))
    print(
        f"replay_verify_ms: {statistics.median(times):.0f}  (every hand's deal, WebCrypto, "
        f"median of {len(times)} loads)"
    )


if __name__ == "__main__":
    main()
