"""The console in a real headless browser (Debian's chromium, Playwright): what an operator
does, against Telegram on its fake platform server and the agent on the fake OpenAI server."""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot import texts
from gateway.console.web import SERVICES_KEY
from tests.console.stage import (
    ADMIN_TOKEN,
    CHROMIUM_HINT,
    Stage,
    browser_required,
    chromium_path,
    launch,
    stage,
)
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply

CHAT = 4242  # a Telegram DM with user 42
TODAY = """(() => { const d = new Date(), two = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}`; })()"""
PAGES = (
    "channels",
    "conversations",
    "agents",
    "deliveries",
    "extensions",
    "mcp",
    "memory",
    "metrics",
    "schedules",
    "usage",
)


def _playwright_ready() -> bool:
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return False
    return chromium_path() is not None


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    if not _playwright_ready():
        if browser_required():
            pytest.fail(CHROMIUM_HINT)
        pytest.skip(CHROMIUM_HINT)
    async with launch() as chromium:
        yield chromium


@pytest.fixture
async def st(tmp_path: Path, fake_openai: FakeOpenAI) -> AsyncIterator[Stage]:
    async with stage(tmp_path, fake_openai) as s:
        yield s


async def login(page: Any, url: str) -> None:
    from playwright.async_api import expect

    await page.goto(url + "/console")
    await expect(page).to_have_url(url + "/console/login?next=%2Fconsole")
    await page.get_by_label("Admin token").fill(ADMIN_TOKEN)
    await page.get_by_role("button", name="Log in").click()
    await expect(page.get_by_role("heading", name="Channels", level=1)).to_be_visible()


async def remember(st: Stage, content: str) -> None:
    async with (
        aiohttp.ClientSession() as http,
        http.post(
            st.url + "/api/memory/facts?person=telegram:42",
            json={"content": content},
            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
        ) as resp,
    ):
        assert resp.status == 200, await resp.text()


async def restart_the_channel(page: Any, st: Stage) -> None:
    """Log in; the channel is connected; restart it."""
    from playwright.async_api import expect

    await login(page, st.url)
    row = page.locator("#channel-telegram")
    await expect(row.locator(".status")).to_have_text("connected")
    await page.get_by_role("button", name="Restart telegram").click()
    await expect(page.get_by_role("status")).to_contain_text("telegram restarted.")
    await expect(page.locator("#channel-telegram .status")).to_have_text("connected")


async def watch_the_metrics(page: Any, st: Stage) -> None:
    """The metrics page moves, live, when the fake platform's message is answered."""
    from playwright.async_api import expect

    await page.get_by_role("link", name="Metrics").click()
    await expect(page.locator("#m-answers")).to_have_text("0")
    await expect(page.locator(".chart[data-chart=answers] canvas")).to_have_count(1)
    st.telegram.push_message(CHAT, "hello there", user_id=42)
    await expect(page.locator("#m-answers")).to_have_text("1", timeout=15_000)
    # the chart polled its data: in the first minute it has no point, and says so
    await expect(page.locator(".chart[data-chart=answers]")).to_have_attribute("data-points", "0")
    await expect(page.locator("#collecting")).to_be_visible()


async def stop_a_running_reply(page: Any, st: Stage) -> None:
    """A conversation the platform produced: a running reply, stopped from the console."""
    from playwright.async_api import expect

    st.openai.script(Reply(text="a long answer " * 40, stall_after=2))
    st.telegram.push_message(CHAT, "write a long answer", user_id=42)
    await page.get_by_role("link", name="Conversations").click()
    conv_row = page.locator("#conversations tbody tr", has_text="telegram")
    await expect(conv_row.locator(".status-running")).to_be_visible(timeout=15_000)
    await conv_row.get_by_role("link").click()
    await expect(page.locator(".transcript")).to_contain_text("hello there")
    await expect(page.locator(".transcript")).to_contain_text("echo: hello there")
    await page.get_by_role("button", name="Stop the running reply").click()
    await expect(page.get_by_role("status")).to_contain_text("The running reply was stopped.")
    await expect(page.locator("#conversation-state")).to_contain_text("idle")
    await st.telegram.wait_for(
        lambda: any(texts.STOPPED in t for t in st.telegram.shown_texts(CHAT))
    )


async def toggle_a_skill(page: Any, st: Stage) -> None:
    """Toggle a skill."""
    from playwright.async_api import expect

    await page.get_by_role("link", name="Models & skills").click()
    await page.get_by_role("button", name="Disable data-to-chart").click()
    await expect(page.get_by_role("status")).to_contain_text("Skill data-to-chart disabled.")
    await expect(page.locator("#skill-data-to-chart")).to_contain_text("disabled")
    config = json.loads((st.data_dir / "extensions_config.json").read_text())
    assert config["skills"]["data-to-chart"] == {"enabled": False}


async def forget_a_fact(page: Any, st: Stage) -> None:
    """Forget a memory fact."""
    from playwright.async_api import expect

    await remember(st, "Prefers metric units")
    await remember(st, "Works on the billing team")
    await page.get_by_role("link", name="Memory").click()
    await page.get_by_role("link", name="telegram:42").click()
    await page.get_by_role("button", name="Forget fact 1: Prefers metric units").click()
    await expect(page.get_by_role("status")).to_contain_text("Fact forgotten.")
    await expect(page.locator("#facts")).not_to_contain_text("Prefers metric units")
    await expect(page.locator("#facts")).to_contain_text("Works on the billing team")
    assert [f.content for f in await st.app.runner.memory.store.facts("telegram:42")] == [
        "Works on the billing team"
    ]


async def test_operator_flow(browser: Any, st: Stage) -> None:
    page = await browser.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on(
        "response", lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None
    )

    await restart_the_channel(page, st)
    await watch_the_metrics(page, st)
    await stop_a_running_reply(page, st)
    await toggle_a_skill(page, st)
    await forget_a_fact(page, st)

    assert problems == []  # no script error, no CSP violation


async def test_narrow_screen_keyboard_labels_and_no_javascript(browser: Any, st: Stage) -> None:
    from playwright.async_api import expect

    # 375 px wide: nothing scrolls sideways but the tables' own boxes; every control labelled
    context = await browser.new_context(viewport={"width": 375, "height": 740})
    page = await context.new_page()
    await login(page, st.url)
    for slug in PAGES:
        await page.goto(f"{st.url}/console/{slug}")
        width = await page.evaluate("document.documentElement.scrollWidth")
        assert width <= 375, (slug, width)
        unlabelled = await page.evaluate("""() => [...document.querySelectorAll(
            'input:not([type=hidden]), select, textarea, button')].filter(el => {
              const named = el.labels && el.labels.length || el.getAttribute('aria-label')
                || (el.tagName === 'BUTTON' && el.textContent.trim());
              return !named; }).map(el => el.outerHTML)""")
        assert unlabelled == [], (slug, unlabelled)
    # the keyboard: the skip link comes first, then the pages
    await page.goto(st.url + "/console/channels")
    await page.keyboard.press("Tab")
    assert await page.evaluate("document.activeElement.textContent") == "Skip to content"
    await page.keyboard.press("Tab")
    assert await page.evaluate("document.activeElement.textContent") == "Channels"
    await context.close()

    # without JavaScript: log in with the keyboard alone and read the channels
    context = await browser.new_context(java_script_enabled=False)
    page = await context.new_page()
    await page.goto(st.url + "/console/login")
    await expect(page.get_by_label("Admin token")).to_be_focused()  # autofocus, no script
    await page.keyboard.type(ADMIN_TOKEN)
    await expect(page.get_by_label("Admin token")).to_have_value(ADMIN_TOKEN)
    await page.keyboard.press("Enter")
    await expect(page.locator("#channel-telegram .status")).to_have_text("connected")
    await page.goto(st.url + "/console/metrics")
    await expect(page.locator("#m-answers")).to_have_text("0")
    await context.close()


async def test_a_running_reply_is_watched_live_then_kept_and_a_stopped_one_marked(
    browser: Any, st: Stage, tmp_path: Path
) -> None:
    from playwright.async_api import expect

    page = await browser.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    await login(page, st.url)
    st.telegram.push_message(CHAT, "hello there", user_id=42)
    await st.telegram.wait_for(
        lambda: any("echo: hello there" in t for t in st.telegram.shown_texts(CHAT))
    )
    await st.svc.idle()
    conv = await st.app.conversations.get(f"telegram:{CHAT}")
    assert conv is not None
    await page.goto(f"{st.url}/console/conversations/{conv.thread_id}")
    await expect(page.locator("#transcript")).to_contain_text("echo: hello there")

    live = page.locator("#live")
    # a reply starts while the page is open and is stopped: what was shown stays, marked
    st.openai.script(Reply(text="cut short here and never finished " * 10, stall_after=4))
    st.telegram.push_message(CHAT, "another long one", user_id=42)
    await expect(live).to_contain_text("cut short", timeout=15_000)
    await page.get_by_role("button", name="Stop the running reply").click()
    await expect(page.get_by_role("status")).to_contain_text("The running reply was stopped.")
    stopped = page.locator("#transcript .msg-stopped")
    await expect(stopped).to_contain_text("cut short")
    await expect(stopped.locator(".status")).to_have_text("stopped")

    # the list: each chat's last message and its time
    await page.get_by_role("link", name="Conversations").click()
    last = page.locator("#conversations tbody tr", has_text="telegram").locator("td.last")
    await expect(last).to_contain_text("assistant (stopped): cut short")
    await expect(last.locator(".when")).to_have_text(
        re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")
    )

    # a reply watched live until it ends: the transcript is read again, the live item gone
    await page.goto(f"{st.url}/console/conversations/{conv.thread_id}")
    st.openai.script(Reply(text="streaming words arrive one by one " * 10, stall_after=4))
    st.telegram.push_message(CHAT, "stream something", user_id=42)
    await expect(live).to_contain_text("streaming word", timeout=15_000)
    await expect(live.locator(".status")).to_have_text("writing…")
    await page.screenshot(path=str(tmp_path / "conversation-live.png"), full_page=True)
    st.openai.release()
    await expect(page.locator("#transcript")).to_contain_text(
        "one by one streaming words arrive one by one", timeout=15_000
    )
    await expect(live).to_have_count(0)

    assert problems == []


async def test_metrics_charts_collect_a_minute_then_draw_minute_ticks_with_units(
    browser: Any, st: Stage, tmp_path: Path
) -> None:
    from playwright.async_api import expect

    history = st.app.gateway.app[SERVICES_KEY].history
    metrics = st.app.metrics
    page = await browser.new_page(viewport={"width": 1100, "height": 1000})
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    await login(page, st.url)
    await page.goto(st.url + "/console/metrics")
    answers = page.locator(".chart[data-chart=answers]")
    # a page just opened: no minute lies before any sample, so no point, and the page says so
    await expect(page.locator("#collecting")).to_be_visible()
    await expect(answers).to_have_attribute("data-points", "0")

    # ten minutes of samples every 2 s (a clock moved back), answers and latencies among them
    start = time.time() - 600
    history.snapshots.clear()
    for i in range(300):
        history.clock = lambda at=start + 2 * i: at
        if i % 5 == 0:
            metrics.run_finished("telegram", "succeeded", 2.0 + (i % 40) / 10)
            metrics.first_visible.labels(channel="telegram").observe(0.15 + (i % 30) / 100)
        history.sample()
    history.clock = time.time
    await expect(page.locator("#collecting")).to_be_hidden(timeout=10_000)
    await expect(answers).to_have_attribute("data-points", re.compile(r"^2\d\d$"))
    await page.screenshot(path=str(tmp_path / "metrics.png"), full_page=True)
    for chart in ("first_visible", "answers", "rate_limited", "run"):
        box = page.locator(f".chart[data-chart={chart}]")
        xticks = (await box.get_attribute("data-xticks") or "").split("|")
        assert len(xticks) >= 3, (chart, xticks)  # minute ticks over ten minutes
        assert all(re.fullmatch(r"\d\d:\d\d", t) for t in xticks), (chart, xticks)
        assert len(set(xticks)) == len(xticks), (chart, xticks)  # never two ticks in a minute
        today = await page.evaluate(TODAY)
        assert await box.get_attribute("data-day") == today
    for chart in ("first_visible", "run"):  # latency axes say their unit on every tick
        yticks = (
            await page.locator(f".chart[data-chart={chart}]").get_attribute("data-yticks") or ""
        ).split("|")
        assert yticks
        assert all(re.fullmatch(r"\d+(\.\d+)? (ms|s)", t) for t in yticks), (chart, yticks)
    assert problems == []
