"""Deleting an account from the lobby's account panel, in a real browser (Chromium under
Playwright), real server, at 1280×800 and 390×844: the control asks for the password and a
ticked box before it sends anything; a wrong password says so and deletes nothing; the right
one deletes the account, the page becomes a newcomer's and says the account is deleted, and
the name is free. The panel speaks each of the client's languages (Arabic right to left).
Screenshots go to test-output/screenshots/.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from protocol.account_api import login, sign_up
from protocol.client import CommandError
from tests.support.browser_support import (
    DESKTOP,
    PHONE,
    Console,
    new_page,
    out_of_view,
    screenshot,
)
from tests.support.server_process import ServerProcess

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]

sync_api = pytest.importorskip("playwright.sync_api")

PASSWORD = "a password to delete"


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    proc = ServerProcess().start()
    try:
        yield proc
    finally:
        proc.stop()


def _in_thread(coroutine: Any) -> Any:
    """Run a coroutine on its own loop (Playwright's sync API holds this thread's)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def signed_in_page(
    browser: Any, server: ServerProcess, viewport: dict[str, int], **options: Any
) -> tuple[Any, Any, dict[str, Any]]:
    """A page of the lobby signed in to a new account (its session in localStorage, as the
    sign-up form leaves it)."""
    account = _in_thread(sign_up(server.base, f"Del{secrets.token_hex(3)}x", PASSWORD))
    context, page = new_page(browser, viewport, **options)
    page.goto(server.base)
    page.evaluate("(me) => localStorage.setItem('hearts.guest', JSON.stringify(me))", account)
    page.reload()
    page.wait_for_selector("#delete-account-btn")
    page.wait_for_function("() => document.querySelector('#whoami').textContent.length > 0")
    return context, page, account


def catalog(page: Any, lang: str) -> dict[str, str]:
    return dict(
        page.evaluate(
            """async (lang) => {
              const {LANGUAGES} = await import('/static/i18n.js');
              return Object.fromEntries(Object.entries(LANGUAGES[lang])
                .filter(([k, v]) => k.startsWith('account.') && typeof v === 'string'));
            }""",
            lang,
        )
    )


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_deleting_my_account_asks_then_deletes_it(
    browser: Any, server: ServerProcess, console: Console, size: str
) -> None:
    viewport = DESKTOP if size == "desktop" else PHONE
    context, page, account = signed_in_page(browser, server, viewport)
    words = catalog(page, "en")
    # Closed at first; opening it shows the form, whose button waits for both answers.
    assert page.locator("#delete-account-form").is_hidden()
    page.click("#delete-account-btn")
    page.wait_for_selector("#delete-account-form", state="visible")
    assert page.get_attribute("#delete-account-btn", "aria-expanded") == "true"
    assert page.is_disabled("#delete-submit")
    page.fill("#delete-password", PASSWORD)
    assert page.is_disabled("#delete-submit")  # the box is not ticked yet
    page.uncheck("#delete-confirm")
    page.fill("#delete-password", "")
    page.check("#delete-confirm")
    assert page.is_disabled("#delete-submit")  # ticked, but no password
    # Cancel forgets what was typed.
    page.fill("#delete-password", PASSWORD)
    page.click("#delete-cancel")
    assert page.locator("#delete-account-form").is_hidden()
    page.click("#delete-account-btn")
    assert page.input_value("#delete-password") == ""
    assert not page.is_checked("#delete-confirm")

    # A wrong password: the server answers 401 (which Chromium logs), nothing is deleted.
    page.fill("#delete-password", "not my password")
    page.check("#delete-confirm")
    console.expect(f"status of 401 (Unauthorized) ({server.base}/api/account/delete")
    page.click("#delete-submit")
    page.wait_for_function(
        "() => document.querySelector('#delete-account-form .account-error').textContent"
    )
    error = page.inner_text("#delete-account-form .account-error")
    assert error == words["account.delete_wrong"]
    assert _in_thread(login(server.base, account["name"], PASSWORD))["player"] == account["player"]

    # The form fits the screen; nothing scrolls sideways.
    assert out_of_view(page, "#delete-account-form", "#delete-submit", "#delete-cancel") == []
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    page.locator("#account-panel").scroll_into_view_if_needed()
    screenshot(page, f"account-delete-form-{size}", full_page=False)

    # The right password deletes it: the page forgets the session and says so once.
    page.fill("#delete-password", PASSWORD)
    with page.expect_navigation():
        page.click("#delete-submit")
    page.wait_for_selector("#account-deleted")
    assert page.inner_text("#account-deleted") == words["account.deleted"]
    assert page.evaluate("localStorage.getItem('hearts.guest')") is None
    page.wait_for_selector("#signup-form")
    screenshot(page, f"account-deleted-{size}", full_page=False)
    with pytest.raises(CommandError) as refused:
        _in_thread(login(server.base, account["name"], PASSWORD))
    assert refused.value.code == "wrong_credentials"
    again = _in_thread(sign_up(server.base, account["name"], "the name is free again"))
    assert again["player"] != account["player"]
    page.reload()  # the notice was said once
    page.wait_for_selector("#signup-form")
    assert page.locator("#account-deleted").count() == 0
    context.close()


@pytest.mark.parametrize("lang", ["pt-BR", "ar"])
def test_the_delete_control_speaks_each_language(
    browser: Any, server: ServerProcess, lang: str
) -> None:
    context, page, _ = signed_in_page(browser, server, PHONE, locale=lang)
    words = catalog(page, lang)
    english = catalog(page, "en")
    page.click("#delete-account-btn")
    page.wait_for_selector("#delete-account-form", state="visible")
    for selector, key in [
        ("#delete-account-btn", "account.delete"),
        ("#delete-account-form h3", "account.delete_title"),
        ("#delete-submit", "account.delete_submit"),
        ("#delete-cancel", "account.delete_cancel"),
        ("#logout-btn", "account.log_out"),
        ("#account-panel h2", "account.title"),
    ]:
        assert page.inner_text(selector) == words[key] != english[key], selector
    assert out_of_view(page, "#delete-account-form", "#delete-submit", "#delete-cancel") == []
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    page.locator("#account-panel").scroll_into_view_if_needed()
    screenshot(page, f"account-delete-form-{lang}-phone", full_page=False)
    # Switching the language redraws the panel in place, the open form too.
    page.click("#settings summary")
    page.select_option("#set-lang", "en")
    assert page.inner_text("#delete-submit") == english["account.delete_submit"]
    assert page.inner_text("#account-panel h2") == english["account.title"]
    assert json.loads(page.evaluate("localStorage.getItem('hearts.guest')"))["account"] is True
    context.close()
