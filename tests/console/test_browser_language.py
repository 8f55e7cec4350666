"""The console in Chinese, in a real headless browser (Debian's chromium, Playwright): chosen by
the browser's Accept-Language, by the `lang` cookie, by the header's "en / 中文" switch; the
headings, buttons, flash messages and server-rendered times follow it."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from gateway.console.language import accepted
from tests.console.stage import ADMIN_TOKEN, Stage, stage
from tests.console.test_browser import browser  # noqa: F401  (the fixture)
from tests.fakes.openai_server import FakeOpenAI

CHINESE_DATE = re.compile(r"\d{4}年\d{1,2}月\d{1,2}日 \d\d:\d\d:\d\d UTC")
PAGES = {  # page → its heading and a button or text of it, in Chinese
    "channels": ("渠道", "连接起始时间"),
    "conversations": ("对话", "显示"),
    "extensions": ("模型与技能", "安装"),
    "mcp": ("MCP 服务器", "添加服务器"),
    "memory": ("记忆", "还没有记住任何人。"),
    "metrics": ("指标", "自服务启动以来"),
    "schedules": ("定时任务", "没有定时任务。"),
    "usage": ("用量", "导出 CSV"),
    "people": ("人员", "还没有人被分配角色或关联账号；所有人都使用默认角色。"),
    "approvals": ("审批", "没有等待审批的工具调用。"),
}


@pytest.fixture
async def st(tmp_path: Path, fake_openai: FakeOpenAI) -> AsyncIterator[Stage]:
    async with stage(tmp_path, fake_openai) as s:
        yield s


@pytest.mark.parametrize(
    ("header", "locale"),
    [("zh-CN,zh;q=0.9,en;q=0.8", "zh_CN"), ("fr, zh;q=0.5, en;q=0.7", "en"),
     ("fr, zh-TW;q=0.5", "zh_CN"), ("en-GB", "en"), ("fr, de", None), ("", None),
     ("zh;q=0, en;q=0.1", "en"), ("zh;q=abc, en", "en"), ("*", None)],
)  # fmt: skip
def test_accept_language_is_read_by_its_weights(header: str, locale: str | None) -> None:
    assert accepted(header) == locale


async def test_the_console_speaks_chinese_and_switches_back(browser: Any, st: Stage) -> None:  # noqa: F811
    from playwright.async_api import expect

    context = await browser.new_context(locale="zh-CN")  # Accept-Language: zh-CN
    page = await context.new_page()
    await page.goto(st.url + "/console")
    await expect(page.get_by_role("heading", name="登录", level=1)).to_be_visible()
    assert await page.get_attribute("html", "lang") == "zh-CN"
    await page.get_by_label("管理员令牌").fill("not the token")
    await page.get_by_role("button", name="登录").click()
    await expect(page.locator(".field-error")).to_have_text("该令牌不是管理员令牌。")
    await page.get_by_label("管理员令牌").fill(ADMIN_TOKEN)
    await page.get_by_role("button", name="登录").click()
    await expect(page.get_by_role("heading", name="渠道", level=1)).to_be_visible()

    for slug, (heading, shown) in PAGES.items():
        await page.get_by_role("navigation").get_by_role("link", name=heading).click()
        await expect(page.get_by_role("heading", name=heading, level=1)).to_be_visible()
        await expect(page.locator("main")).to_contain_text(shown)
        assert page.url.endswith(f"/console/{slug}")
    await expect(page.get_by_role("button", name="退出登录")).to_be_visible()

    # the charts' words too (the template hands them to the page's script)
    await page.get_by_role("navigation").get_by_role("link", name="指标").click()
    await expect(page.locator(".chart[data-chart=answers] .u-legend")).to_contain_text("回答")
    await expect(page.locator(".chart[data-chart=answers] .u-legend")).not_to_contain_text(
        "answers"
    )

    # a change's flash message, and a time written the Chinese way
    await page.get_by_role("link", name="渠道").click()
    await page.get_by_role("button", name="重启 telegram").click()
    await expect(page.get_by_role("status")).to_contain_text("telegram 已重启。")
    connected = page.locator("#channel-telegram td").nth(1)
    await expect(connected).to_have_text(CHINESE_DATE)

    # the header's switch: back to English, kept over the browser's Chinese
    await page.locator("#lang-switch").get_by_role("link", name="en").click()
    await expect(page.get_by_role("heading", name="Channels", level=1)).to_be_visible()
    assert page.url.endswith("/console/channels")
    assert await page.get_attribute("html", "lang") == "en"
    await expect(page.locator("#channel-telegram td").nth(1)).to_have_text(
        re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")
    )
    await page.reload()
    await expect(page.get_by_role("button", name="Restart telegram")).to_be_visible()
    cookies = {c["name"]: c["value"] for c in await context.cookies()}
    assert cookies["lang"] == "en"
    await context.close()


async def test_the_cookie_chooses_over_the_browser(browser: Any, st: Stage) -> None:  # noqa: F811
    from playwright.async_api import expect

    context = await browser.new_context(locale="en-US")
    host = st.url.split("//", 1)[1].split(":")[0]
    await context.add_cookies(
        [{"name": "lang", "value": "zh-CN", "domain": host, "path": "/console"}]
    )
    page = await context.new_page()
    await page.goto(st.url + "/console/login")
    await expect(page.get_by_role("heading", name="登录", level=1)).to_be_visible()
    # the switch itself works on the login page too, and only goes to console pages
    await page.goto(st.url + "/console/lang?to=en&next=//evil.example/x")
    await expect(page.get_by_role("heading", name="Log in", level=1)).to_be_visible()
    await page.locator("#lang-switch").get_by_role("link", name="中文").click()
    await expect(page.get_by_role("heading", name="登录", level=1)).to_be_visible()
    await page.goto(st.url + "/console/lang?to=fr&next=/console/login")  # changes nothing
    await expect(page.get_by_role("heading", name="登录", level=1)).to_be_visible()
    await context.close()
