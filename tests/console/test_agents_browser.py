"""The console's agents in a real headless browser (Debian's chromium, Playwright): the agents
page, and a conversation switched to another agent from its page under `/agent`'s rule (the
chat person's role allows it; a refused switch is audited), the next answer coming from it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.access.store import AuditQuery
from tests.console.stage import Stage, stage
from tests.console.test_browser import CHAT, browser, login  # noqa: F401 (the fixture)
from tests.e2e.config.service import system_text
from tests.fakes.openai_server import FakeOpenAI

AGENTS = [
    {"name": "support", "display_name": "Support desk", "description": "answers customers",
     "system_prompt": "You are the support desk.", "model": "smart"},
    {"name": "eng", "display_name": "Engineering", "system_prompt": "You are the eng bot."},
]  # fmt: skip
ACCESS = {"roles": {"member": {"agents": ["lead_agent", "support"]}}}


@pytest.fixture
async def st(tmp_path: Path, fake_openai: FakeOpenAI) -> AsyncIterator[Stage]:
    async with stage(tmp_path, fake_openai, agents=AGENTS, access=ACCESS) as s:
        yield s


async def test_switch_a_conversations_agent(browser: Any, st: Stage) -> None:  # noqa: F811
    from playwright.async_api import expect

    page = await browser.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    await login(page, st.url)

    await page.get_by_role("link", name="Agents").click()
    await expect(page.get_by_role("heading", name="Agents", level=1)).to_be_visible()
    rows = page.locator("#agents tbody tr")
    await expect(rows).to_have_count(3)
    await expect(rows.nth(1)).to_contain_text("Support desk")
    await expect(rows.nth(1)).to_contain_text("answers customers")
    await expect(rows.nth(1)).to_contain_text("Smart")

    st.telegram.push_message(CHAT, "hello there", user_id=42)
    await st.telegram.wait_for(
        lambda: any("hello there" in t for t in st.telegram.sent_texts(CHAT))
    )
    await page.get_by_role("link", name="Conversations").click()
    await page.locator("#conversations tbody tr", has_text="telegram").get_by_role("link").click()
    await expect(page.locator("#conversation-state")).to_contain_text("Lead agent")
    choice = page.get_by_label("Agent")
    # only what the chat's person (a member) may use is offered
    options = await choice.locator("option").all_inner_texts()
    assert options == ["Lead agent (lead_agent)", "Support desk (support)"]
    await choice.select_option("support")
    await page.get_by_role("button", name="Switch agent").click()
    await expect(page.get_by_role("status")).to_contain_text("Agent switched to Support desk")
    await expect(page.locator("#conversation-state")).to_contain_text("Support desk")

    before = len(st.openai.requests)
    st.telegram.push_message(CHAT, "who are you?", user_id=42)
    await st.openai.wait_requests(before + 1, timeout=15)
    assert "You are the support desk." in system_text(st.openai.requests[before])
    assert problems == []


async def test_a_switch_the_role_forbids_is_refused_and_audited(browser: Any, st: Stage) -> None:  # noqa: F811
    from playwright.async_api import expect

    page = await browser.new_page()
    await login(page, st.url)
    st.telegram.push_message(CHAT, "hello there", user_id=42)
    await st.telegram.wait_for(
        lambda: any("hello there" in t for t in st.telegram.sent_texts(CHAT))
    )
    conv = (await st.app.conversations.all(limit=10))[0]
    await page.goto(f"{st.url}/console/conversations/{conv.thread_id}")
    # a form posted by hand (or a stale page) naming an agent the member may not use
    await page.evaluate("""() => { const o = document.createElement("option");
        o.value = "eng"; o.text = "eng"; document.getElementById("agent").append(o); }""")
    await page.get_by_label("Agent").select_option("eng")
    await page.get_by_role("button", name="Switch agent").click()
    await expect(page.get_by_role("status")).to_contain_text("not allowed for member")
    assert (await st.app.conversations.get(conv.key)).agent is None
    entries = await st.app.people.store.audit(AuditQuery(kind="denied"))
    assert [(e.subject, e.outcome) for e in entries] == [("eng", "agent")]
