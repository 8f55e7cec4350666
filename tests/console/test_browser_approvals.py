"""The approvals page in a real headless browser (Debian's chromium, Playwright): a Telegram
user's tool call waits; the operator sees it on the page and presses Approve; the card in the
chat is updated in place and the run goes on, once."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.console.stage import Stage, stage
from tests.console.test_browser import CHAT, browser, login
from tests.deploy import ALWAYS, WRITE
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply

__all__ = ["browser"]  # the fixture


@pytest.fixture
async def st(tmp_path: Path, fake_openai: FakeOpenAI) -> AsyncIterator[Stage]:
    async with stage(tmp_path, fake_openai, access=ALWAYS) as s:
        yield s


async def test_an_operator_approves_a_waiting_call_in_the_browser(browser: Any, st: Stage) -> None:
    from playwright.async_api import expect

    page = await browser.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    await login(page, st.url)
    st.openai.script(WRITE, Reply(text="Deployed v7."))
    st.telegram.push_message(CHAT, "deploy v7", user_id=42)
    await st.telegram.wait_for(
        lambda: any("Approval needed" in t for t in st.telegram.shown_texts(CHAT)), timeout=20
    )
    await page.get_by_role("link", name="Approvals").click()
    row = page.locator("#approvals tbody tr").first
    await expect(row).to_contain_text("write_file(path='/mnt/user-data/outputs/deploy.txt'")
    await expect(row).to_contain_text("telegram:42")
    await row.get_by_role("button", name="Approve", exact=False).first.click()
    # generous bounds: the decision resumes the run before the page is drawn again (slow under
    # a loaded machine)
    await expect(page.get_by_role("status")).to_contain_text(
        "its conversation goes on", timeout=20_000
    )
    await expect(page.locator("#approvals")).to_contain_text(
        "No tool call is waiting", timeout=20_000
    )
    await st.telegram.wait_for(
        lambda: any("Deployed v7." in t for t in st.telegram.shown_texts(CHAT)), timeout=20
    )
    [card] = [t for t in st.telegram.shown_texts(CHAT) if "Approval needed" in t]
    assert "Approved by console" in card
    assert card.endswith("Deployed v7.")
    assert len(st.openai.requests) == 2
    assert problems == []
