"""The Usage page in headless Chromium: an answer on Telegram (the fake platform, the fake model's
usage chunk) shows per person, chat and model, its charts draw a point a UTC day with units,
a range is chosen in the form, and the CSV link downloads the rows."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.console.stage import Stage
from tests.console.test_browser import CHAT, browser, login, st  # noqa: F401 (fixtures)
from tests.fakes.openai_wire import Reply

USAGE = {"prompt_tokens": 400, "completion_tokens": 100, "total_tokens": 500}


async def csv_downloads_the_row(page: Any) -> None:
    async with page.expect_download() as download_info:
        await page.get_by_role("link", name="Export CSV").click()
    download = await download_info.value
    text = Path(await download.path()).read_text()
    header, row = text.strip().splitlines()
    assert header.startswith("day,person,chat,model,prompt_tokens")
    assert f",telegram:42,telegram:{CHAT},fast,400,100," in row


async def test_usage_page_shows_an_answer_charts_days_and_exports_csv(
    browser: Any,  # noqa: F811
    st: Stage,  # noqa: F811
    tmp_path: Path,
) -> None:
    from playwright.async_api import expect

    page = await browser.new_page(viewport={"width": 1100, "height": 1400})
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    st.openai.script(Reply(text="counted answer", usage=USAGE))
    st.telegram.push_message(CHAT, "hello there", user_id=42)
    await st.telegram.wait_for(
        lambda: any("counted answer" in t for t in st.telegram.shown_texts(CHAT))
    )
    await st.svc.idle()
    await login(page, st.url)
    await page.get_by_role("link", name="Usage").click()
    await expect(page.get_by_role("heading", name="Usage", level=1)).to_be_visible()
    await expect(page.locator("#u-tokens")).to_have_text("500")
    person = page.locator("#by-person tbody tr").first
    await expect(person.locator("th")).to_have_text("telegram:42")
    await expect(page.locator("#by-chat tbody tr").first.locator("th")).to_have_text(
        f"telegram:{CHAT}"
    )
    await expect(page.locator("#by-model tbody tr").first.locator("th")).to_have_text("fast")

    tokens = page.locator(".chart[data-chart=tokens]")
    await expect(tokens.locator("canvas")).to_have_count(1)
    await expect(tokens).to_have_attribute("data-days", "30")  # the last 30 days by default
    await expect(tokens).to_have_attribute("data-total", "500")
    xticks = (await tokens.get_attribute("data-xticks") or "").split("|")
    assert len(xticks) >= 3, xticks
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d", t) for t in xticks), xticks
    assert len(set(xticks)) == len(xticks), xticks
    await expect(page.locator(".chart[data-chart=cost] canvas")).to_have_count(1)
    await page.screenshot(path=str(tmp_path / "usage.png"), full_page=True)

    await csv_downloads_the_row(page)

    # a range before the answer: nothing in it, its chart a week of zeros
    await page.get_by_label("From (UTC day)").fill("2026-01-01")
    await page.get_by_label("To, not included").fill("2026-01-08")
    await page.get_by_role("button", name="Show").click()
    await expect(page.locator("#u-tokens")).to_have_text("0")
    await expect(page.locator("#by-person")).to_contain_text("No model call in this range.")
    await expect(tokens).to_have_attribute("data-days", "7")
    await expect(tokens).to_have_attribute("data-total", "0")
    assert problems == []
