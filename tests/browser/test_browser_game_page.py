"""The game page (/g/ID) and the player page's history in a real browser (Chromium under
Playwright), under the service's Content-Security-Policy.

The replay steps trick by trick by its buttons, by the keyboard and by a swipe on a phone, at
1280x800 and 390x844, in English and in Arabic (mirrored: forward is to the left); what it shows
at each position is checked against the game document: the cards in each hand, the trick, the
pass, the scores after a hand. Each hand's fair deal is re-derived in the browser: verified for a
real game, failed for a tampered one. The in-play and not-found answers have their own message.
The player page pages through the whole history with "More games".

The game documents here are real games (load_tests/record_games.py plays them with the room
machine, every seat committing and revealing its own secrets) in the shape of GET /api/games/ID,
served to the page by route interception; test_browser_game_page_live.py plays a game on a real
server and opens its page with nothing intercepted. Screenshots go to the test's tmp dir and to
test-output/screenshots/.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from load_tests.record_games import played_game
from tests.support.browser_support import DESKTOP, PHONE, ROOT, Console, new_page, screenshot
from tests.support.server_process import ServerProcess

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

sync_api = pytest.importorskip("playwright.sync_api")

GAME_HTML = ROOT / "server" / "static" / "game.html"
LANGS = {
    "en": {"dir": "ltr", "forward": "ArrowRight", "back": "ArrowLeft"},
    "ar": {"dir": "rtl", "forward": "ArrowLeft", "back": "ArrowRight"},
}


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    proc = ServerProcess().start()
    try:
        yield proc
    finally:
        proc.stop()


# --- game documents ------------------------------------------------------------------------------


def document_of(record: dict[str, Any]) -> dict[str, Any]:
    """A stored game record (server/record/records.py) in the shape GET /api/games/ID answers."""
    return {
        "format": "hearts-game/1",
        "game": record["game_id"],
        "room": record["room_id"],
        "kind": record["kind"],
        "options": record["options"],
        "started_at": record["started_at"],
        "finished_at": record["finished_at"],
        "rated": record["rated"],
        "scores": record["scores"],
        "winners": record["winners"],
        "departures": record["departures"],
        "seats": [
            {
                "seat": s["seat"],
                "player": s["participant"],
                "name": s["name"],
                "bot": s["bot"],
                "rating_before": s["rating_before"],
                "rating_after": s["rating_after"],
            }
            for s in record["seats"]
        ],
        "hands": [
            {
                "number": h["number"],
                "over": h["over"],
                "audit": h["audit"]["audit"] if h["audit"] else None,
            }
            for h in record["hands"]
        ],
    }


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    """A real game to 100: four seats committing and revealing their own secrets every hand.
    Seat 2 is shown as a bot and seat 3 as a deleted account (names only: the audit is real)."""
    players = ["ann-0001", "bob-0002", "cy-00003", "dee-0004"]
    record, _ = played_game(random.Random(7), "fixroom", players, 1_760_000_000.0)
    doc = document_of(record.to_value())
    doc["seats"][0]["name"] = "Ann <b>bold</b>"  # text, never HTML
    doc["seats"][1]["name"] = "Bob"
    doc["seats"][2].update(
        player=None, name="Maya", bot="normal", rating_before=None, rating_after=None
    )
    doc["seats"][3].update(player=None, name=None)
    return doc


def serve_game(
    page: Any, doc: dict[str, Any] | None, *, status: int = 200, body: Any = None
) -> str:
    """Route the page's /g/ID and /api/games/ID to game.html and to ``doc`` (or an error)."""
    game = doc["game"] if doc else "nogame.1"
    page.route(
        f"**/g/{game}",
        lambda route: route.fulfill(
            status=200, content_type="text/html", body=GAME_HTML.read_text()
        ),
    )
    answer = doc if body is None else body
    page.route(
        f"**/api/games/{game}",
        lambda route: route.fulfill(
            status=status, content_type="application/json", body=json.dumps(answer)
        ),
    )
    return game


def shot(page: Any, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    screenshot(page, name)


# --- what the page shows -------------------------------------------------------------------------

SHOWN_JS = """() => {
  const seat = (s, sel = '') => document.querySelector(`.replay-seat[data-seat="${s}"] ${sel}`);
  const seats = [0, 1, 2, 3];
  return {
    hand: Number(document.querySelector('#replay').dataset.hand),
    trick: Number(document.querySelector('#replay').dataset.trick),
    position: document.querySelector('#position').textContent,
    cards: seats.map((s) => Number(seat(s).dataset.cards)),
    held: seats.map((s) => [...seat(s).querySelectorAll('.chip')].map((c) => c.dataset.card)),
    trickCards: [...document.querySelectorAll('.trick-slot')].map((el) => el.dataset.card),
    scores: seats.map((s) => Number(seat(s, '.seat-game').dataset.score)),
    points: seats.map((s) => Number(seat(s, '.seat-hand').dataset.points)),
    passes: document.querySelectorAll('.pass-list li').length,
    passing: document.querySelectorAll('.chip.passing').length,
  };
}"""


def shown(page: Any) -> dict[str, Any]:
    return dict(page.evaluate(SHOWN_JS))


def expected_at(doc: dict[str, Any], hand: int, k: int) -> dict[str, Any]:
    """What each seat holds after k tricks of hand ``hand`` (k = 0: the deal, before the pass),
    the trick shown, the hand's points so far and the game's scores, from the document."""
    h = doc["hands"][hand - 1]
    audit = h["audit"]
    held = [list(cards) for cards in audit["deal"]]
    if k > 0 and audit["passes"]:
        shift = {"left": 1, "right": 3, "across": 2}[audit["pass_direction"]]
        for s in range(4):
            for card in audit["passes"][s]:
                held[s].remove(card)
                held[(s + shift) % 4].append(card)
    points = [0, 0, 0, 0]
    for trick in h["over"]["tricks"][:k]:
        for m, card in enumerate(trick["cards"]):
            held[(trick["leader"] + m) % 4].remove(card)
        points[trick["winner"]] += sum(
            13 if c == "QS" else 1 if c[1] == "H" else 0 for c in trick["cards"]
        )
    before = doc["hands"][hand - 2]["over"]["scores"] if hand > 1 else [0, 0, 0, 0]
    end = k == len(h["over"]["tricks"])
    return {
        "held": [sorted(cards) for cards in held],
        "trick": h["over"]["tricks"][k - 1]["cards"] if k else [],
        "points": h["over"]["points"] if end else points,
        "scores": h["over"]["scores"] if end else before,
    }


def check_position(page: Any, doc: dict[str, Any], hand: int, k: int) -> None:
    page.wait_for_function(
        "([h, k]) => { const r = document.querySelector('#replay');"
        " return Number(r.dataset.hand) === h && Number(r.dataset.trick) === k; }",
        arg=[hand, k],
    )
    now, want = shown(page), expected_at(doc, hand, k)
    assert [sorted(cards) for cards in now["held"]] == want["held"], (hand, k)
    assert now["cards"] == [len(c) for c in want["held"]]
    assert sorted(now["trickCards"]) == sorted(want["trick"])
    assert now["points"] == want["points"], (hand, k)
    assert now["scores"] == want["scores"], (hand, k)


def wait_verified(page: Any, doc: dict[str, Any]) -> None:
    page.wait_for_function(
        "() => document.querySelector('#deal-summary').dataset.state !== 'checking'", timeout=60_000
    )


def no_serious_violation(page: Any, where: str) -> None:
    """axe-core finds nothing serious or critical on the page as it is now."""
    axe = pytest.importorskip("axe_playwright_python.sync_playwright").Axe()
    results = axe.run(page)
    serious = [
        v for v in results.response["violations"] if v.get("impact") in ("serious", "critical")
    ]
    assert serious == [], f"{where}: " + "; ".join(
        f"{v['id']}: {v['help']} ({[n['target'] for n in v['nodes']]})" for v in serious
    )


def swipe(page: Any, x_from: float, x_to: float, y: float) -> None:
    """A finger drawn sideways across the screen (real touch input through the DevTools protocol:
    Chromium turns it into pointer events, as on a phone)."""
    cdp = page.context.new_cdp_session(page)
    cdp.send(
        "Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x_from, "y": y}]}
    )
    for i in range(1, 9):
        x = x_from + (x_to - x_from) * i / 8
        cdp.send(
            "Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": y}]}
        )
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    cdp.detach()


# --- the replay ----------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "ar"])
@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_the_replay_steps_by_buttons_keys_and_swipes(
    browser: Any,
    server: ServerProcess,
    document: dict[str, Any],
    size: str,
    lang: str,
    tmp_path: Path,
) -> None:
    doc = document
    viewport = DESKTOP if size == "desktop" else PHONE
    touch = {"has_touch": True, "is_mobile": True} if size == "phone" else {}
    context, page = new_page(browser, viewport, locale=lang, **touch)
    game = serve_game(page, doc)
    page.goto(f"{server.base}/g/{game}")
    page.wait_for_selector("#game:not([hidden])")
    assert page.evaluate("document.documentElement.dir") == LANGS[lang]["dir"]
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"], (
        "no sideways scrolling"
    )

    # The start: hand 1's deal, with its pass shown.
    check_position(page, doc, 1, 0)
    first = doc["hands"][0]["audit"]
    assert first["pass_direction"] == "left"
    assert shown(page)["passes"] == 4 and shown(page)["passing"] == 12
    assert page.locator("#first-btn").is_disabled() and page.locator("#back-btn").is_disabled()
    # The names are text: the markup in Ann's name is shown, not made.
    assert (
        page.locator(".replay-seat[data-seat='0'] .seat-head")
        .inner_text()
        .startswith("Ann <b>bold</b>")
    )
    assert page.locator(".replay-seat b").count() == 0
    wait_verified(page, doc)
    shot(page, tmp_path, f"game-{size}-{lang}-pass")
    no_serious_violation(page, f"the pass, {size}, {lang}")

    # Forward by the button: trick 1 on the table, each hand a card shorter.
    page.click("#forward-btn")
    check_position(page, doc, 1, 1)
    assert "2C" in shown(page)["trickCards"]
    # By the keyboard, in the reading direction (forward is ← in Arabic).
    page.keyboard.press(LANGS[lang]["forward"])
    check_position(page, doc, 1, 2)
    page.keyboard.press(LANGS[lang]["back"])
    check_position(page, doc, 1, 1)
    page.click("#back-btn")
    check_position(page, doc, 1, 0)
    for k in range(1, 14):
        page.click("#forward-btn")
        check_position(page, doc, 1, k)
    # The end of hand 1: its score, and the game's scores after it.
    assert shown(page)["scores"] == doc["hands"][0]["over"]["scores"]
    assert page.locator(".hand-end").count() == 1
    no_serious_violation(page, f"a hand's end, {size}, {lang}")
    shot(page, tmp_path, f"game-{size}-{lang}-hand1-end")
    page.keyboard.press(LANGS[lang]["forward"])
    check_position(page, doc, 2, 0)
    assert doc["hands"][1]["audit"]["pass_direction"] == "right"
    assert shown(page)["passing"] == 12

    if size == "phone":
        # A swipe on the table: the finger goes against the reading direction to go forward.
        box = page.locator("#board").bounding_box()
        y = box["y"] + min(box["height"] / 2, 200)
        left, right = box["x"] + 30, box["x"] + box["width"] - 30
        page.evaluate("window.scrollTo(0, 0)")
        box = page.locator("#board").bounding_box()
        y = box["y"] + 60
        forward = (right, left) if lang == "en" else (left, right)
        swipe(page, forward[0], forward[1], y)
        check_position(page, doc, 2, 1)
        swipe(page, forward[1], forward[0], y)
        check_position(page, doc, 2, 0)
        swipe(page, forward[0], forward[1], y)
        check_position(page, doc, 2, 1)
        shot(page, tmp_path, f"game-{size}-{lang}-swiped")

    # End and Home: the last trick of the game, with the final scores; then the start again.
    page.keyboard.press("End")
    last = len(doc["hands"])
    check_position(page, doc, last, len(doc["hands"][-1]["over"]["tricks"]))
    assert shown(page)["scores"] == doc["scores"]
    assert page.locator("#forward-btn").is_disabled()
    shot(page, tmp_path, f"game-{size}-{lang}-end")
    page.keyboard.press("Home")
    check_position(page, doc, 1, 0)

    # Every hand's deal re-derived in this browser: verified.
    assert page.locator("#deal-summary").get_attribute("data-state") == "verified"
    states = page.eval_on_selector_all("#verdicts > li", "els => els.map((e) => e.dataset.state)")
    assert states == ["verified"] * len(doc["hands"])
    # The result: winners, bots marked, a deleted player, rating changes, links to players' pages.
    result = page.locator("#result-box")
    assert result.locator(".badge.bot").count() == 1
    assert result.locator(".deleted").count() == 1
    links = result.locator("a.player-link")
    assert links.count() == 2
    assert {links.nth(i).get_attribute("href") for i in range(2)} == {"/p/ann-0001", "/p/bob-0002"}
    ann = doc["seats"][0]
    change = ann["rating_after"] - ann["rating_before"]
    shown_change = f"+{change}" if change > 0 else f"−{-change}" if change else "±0"
    assert f"{ann['rating_before']} → {ann['rating_after']} ({shown_change})" in result.inner_text()
    assert page.locator("#download").get_attribute("href") == f"/api/games/{game}?download=1"
    shot(page, tmp_path, f"game-{size}-{lang}-start")
    context.close()


def test_a_tampered_game_fails_its_deal_check(
    browser: Any, server: ServerProcess, document: dict[str, Any], tmp_path: Path
) -> None:
    """A card moved between two hands of hand 2's deal, hand 3's server secret changed, hand
    4's points told otherwise in its summary, hand 5's first trick given to another seat: those
    hands fail, in plain words; the others stay verified."""
    doc = copy.deepcopy(document)
    deal = doc["hands"][1]["audit"]["deal"]
    deal[0][0], deal[1][0] = deal[1][0], deal[0][0]
    audit3 = doc["hands"][2]["audit"]
    audit3["server_secret"] = "00" * 32
    points4 = doc["hands"][3]["over"]["points"]
    low, high = points4.index(min(points4)), points4.index(max(points4))
    points4[low], points4[high] = points4[high], points4[low]
    first5 = doc["hands"][4]["over"]["tricks"][0]
    first5["winner"] = (first5["winner"] + 1) % 4
    context, page = new_page(browser, DESKTOP)
    game = serve_game(page, doc)
    page.goto(f"{server.base}/g/{game}")
    wait_verified(page, doc)
    assert page.locator("#deal-summary").get_attribute("data-state") == "failed"
    assert "4 hands" in page.locator("#deal-summary").inner_text()
    states = page.eval_on_selector_all("#verdicts > li", "els => els.map((e) => e.dataset.state)")
    assert states == ["verified"] + ["failed"] * 4 + ["verified"] * (len(doc["hands"]) - 5)
    verdict = [page.locator(f"#verdicts > li[data-hand='{n}']").inner_text() for n in range(6)[1:]]
    assert "Deal check failed:" in verdict[1] and "does not re-derive" in verdict[1]
    assert "server's secret does not match its commitment" in verdict[2]
    assert "the hand's points are not what its tricks give" in verdict[3]
    assert "trick 1's taker in the summary did not play the highest card" in verdict[4]
    # Going to hand 2 from its line: the replay's own verdict says so too.
    page.click("#verdicts > li[data-hand='2'] button")
    page.wait_for_function("() => document.querySelector('#replay').dataset.hand === '2'")
    assert page.locator("#hand-verdict").get_attribute("data-state") == "failed"
    shot(page, tmp_path, "game-desktop-tampered")
    context.close()


@pytest.mark.parametrize("lang", ["en", "ar"])
def test_a_game_in_play_and_a_game_not_found(
    browser: Any, server: ServerProcess, console: Console, lang: str, tmp_path: Path
) -> None:
    words = {
        "en": ("This game is still in play.", "There is no finished game with this id."),
        "ar": ("هذه اللعبة ما زالت جارية.", "لا توجد لعبة منتهية بهذا المعرّف."),
    }[lang]
    context, page = new_page(browser, PHONE, locale=lang)
    error = {
        "type": "error",
        "re": None,
        "code": "game_in_play",
        "message": "This game is still in play.",
    }
    game = serve_game(page, None, status=409, body=error)
    console.expect("409")  # Chromium logs every 4xx answer to a fetch
    page.goto(f"{server.base}/g/{game}")
    page.wait_for_selector("#game-status[data-state='in-play']")
    assert page.locator("#game-status").inner_text() == words[0]
    assert page.locator("#game").is_hidden()
    shot(page, tmp_path, f"game-phone-{lang}-in-play")
    page.unroute("**")
    error = {"type": "error", "re": None, "code": "game_not_found", "message": "No such game."}
    serve_game(page, None, status=404, body=error)
    console.expect("404")
    page.goto(f"{server.base}/g/{game}")
    page.wait_for_selector("#game-status[data-state='not-found']")
    assert page.locator("#game-status").inner_text() == words[1]
    assert page.locator("#game").is_hidden()
    context.close()


# --- the player page's history ------------------------------------------------------------------


def history_rows(count: int) -> list[dict[str, Any]]:
    """``count`` finished games of player "pat-0001", newest first, in the shape of
    GET /api/players/ID/games: seat 0 hers, seat 1 a bot, seat 3 a deleted player."""
    rng = random.Random(3)
    rows = []
    for i in range(count):
        scores = [rng.randrange(0, 100) for _ in range(4)]
        scores[rng.randrange(4)] = 100 + rng.randrange(20)
        low = min(scores)
        before = 1500 + i
        after = before + rng.randrange(-20, 21)
        rows.append(
            {
                "game": f"room{count - i:03d}.1",
                "finished_at": 1_760_000_000 - 3600 * i,
                "kind": "quick",
                "rated": True,
                "seat": 0,
                "scores": scores,
                "winners": [s for s in range(4) if scores[s] == low],
                "names": ["Pat", None, "Quinn", None],
                "bots": [None, "strong", None, None],
                "rating_before": before,
                "rating_after": after,
                "change": after - before,
            }
        )
    return rows


@pytest.mark.parametrize("lang", ["en", "ar"])
def test_the_player_page_pages_through_every_game(
    browser: Any, server: ServerProcess, lang: str, tmp_path: Path
) -> None:
    rows = history_rows(45)
    player = {
        "player": "pat-0001",
        "name": "Pat",
        "display": 1530,
        "mu": 26.0,
        "sigma": 2.0,
        "games": 45,
        "provisional": False,
        "rank": 3,
        "recent_games": [],
        "history": [
            {
                "game": r["game"],
                "at": r["finished_at"],
                "mu": 26.0,
                "sigma": 2.0 + i / 50,
                "display": r["rating_after"],
                "games": 45 - i,
            }
            for i, r in enumerate(rows)
        ],
    }
    asked: list[str] = []

    def games(route: Any) -> None:
        url = route.request.url
        asked.append(url.split("?", 1)[1] if "?" in url else "")
        before = None if "before=" not in url else url.split("before=")[1].split("&")[0]
        start = 0 if before is None else int(before)
        page_rows = rows[start : start + 20]
        nxt = str(start + 20) if start + 20 < len(rows) else None
        route.fulfill(
            status=200,
            content_type="application/json",
            body=json.dumps({"games": page_rows, "next": nxt}),
        )

    context, page = new_page(browser, PHONE if lang == "ar" else DESKTOP, locale=lang)
    page.route("**/api/players/pat-0001/games*", games)
    page.route(
        "**/api/players/pat-0001",
        lambda route: route.fulfill(
            status=200, content_type="application/json", body=json.dumps(player)
        ),
    )
    page.goto(f"{server.base}/p/pat-0001")
    page.wait_for_selector("#recent-games tbody tr")
    assert page.locator("#recent-games tbody tr").count() == 20
    first = page.locator("#recent-games tbody tr").first
    assert first.locator("a.game-link").get_attribute("href") == f"/g/{rows[0]['game']}"
    text = first.inner_text()
    assert "Pat" in text and "Quinn" in text
    assert first.locator(".badge.bot").count() == 1
    assert first.locator(".deleted").count() == 1
    assert page.locator("#rating-plot svg polyline").count() == 1
    page.click("#more-games")
    page.wait_for_function(
        "() => document.querySelectorAll('#recent-games tbody tr').length === 40"
    )
    page.click("#more-games")
    page.wait_for_function(
        "() => document.querySelectorAll('#recent-games tbody tr').length === 45"
    )
    assert page.locator("#more-games").is_hidden()
    assert asked == ["limit=20", "limit=20&before=20", "limit=20&before=40"]
    games_shown = page.eval_on_selector_all(
        "#recent-games tbody tr", "els => els.map((e) => e.dataset.game)"
    )
    assert games_shown == [r["game"] for r in rows]
    shot(page, tmp_path, f"player-history-{lang}")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], "the player page must not scroll sideways"
    context.close()


def test_the_rating_plot_draws_the_whole_history(browser: Any, server: ServerProcess) -> None:
    """A player's answer with fewer rating points than rated games: the plot asks for all of
    them (up to 1,000) and draws every one."""
    points = [
        {
            "game": f"r{i:04d}.1",
            "at": 1_760_000_000 - i,
            "mu": 25.0,
            "sigma": 1.5,
            "display": 1500 + (i % 37),
            "games": 300 - i,
        }
        for i in range(300)
    ]
    player = {
        "player": "pat-0002",
        "name": "Pat",
        "display": 1500,
        "mu": 25.0,
        "sigma": 1.5,
        "games": 300,
        "provisional": False,
        "rank": None,
        "recent_games": [],
        "history": points[:50],
    }
    context, page = new_page(browser, DESKTOP)
    page.route(
        "**/api/players/pat-0002",
        lambda route: route.fulfill(
            status=200, content_type="application/json", body=json.dumps(player)
        ),
    )
    page.route(
        "**/api/players/pat-0002/ratings?limit=1000",
        lambda route: route.fulfill(
            status=200,
            content_type="application/json",
            body=json.dumps({"player": "pat-0002", "history": points}),
        ),
    )
    page.route(
        "**/api/players/pat-0002/games*",
        lambda route: route.fulfill(
            status=200,
            content_type="application/json",
            body=json.dumps({"games": [], "next": None}),
        ),
    )
    page.goto(f"{server.base}/p/pat-0002")
    page.wait_for_selector("#rating-plot svg polyline")
    drawn = page.evaluate(
        "document.querySelector('#rating-plot polyline').getAttribute('points').split(' ').length"
    )
    assert drawn == 300
    assert "300 rated games" in page.inner_text("#rating-plot")
    assert page.inner_text("#recent-games") == "No finished games yet."
    context.close()
