"""Every browser test fails when a page it opened logged a console error or threw."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.browser_support import Console


@pytest.fixture(autouse=True, name="console")
def console_guard(browser: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Console]:
    """Fail the test if any page it opened logged a console error or threw: every context and
    page made through ``browser`` during the test is watched. A test asks for ``console`` to
    declare an expected error."""
    console = Console()
    new_context, new_page = browser.new_context, browser.new_page

    def watched_context(**options: Any) -> Any:
        context = new_context(**options)
        console.watch(context)
        return context

    def watched_page(**options: Any) -> Any:
        page = new_page(**options)
        console.watch(page.context)
        return page

    monkeypatch.setattr(browser, "new_context", watched_context)
    monkeypatch.setattr(browser, "new_page", watched_page)
    yield console
    if verdict := console.verdict():
        pytest.fail(verdict)
