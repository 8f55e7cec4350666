"""Screenshots of every console page for docs/console.md, taken with the browser tests' setup:
`python -m tests.console.shots` writes docs/console/*.png (needs Debian's chromium)."""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

import aiohttp

from tests.console.stage import ADMIN_TOKEN, Stage, launch, stage
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply

OUT = Path(__file__).resolve().parents[2] / "docs" / "console"
AUTH = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


async def api(st: Stage, method: str, path: str, body: Any) -> None:
    async with (
        aiohttp.ClientSession() as http,
        http.request(method, st.url + path, json=body, headers=AUTH) as resp,
    ):
        assert resp.status < 300, await resp.text()


async def populate(st: Stage) -> None:
    """Conversations, a refused delivery, memory, an MCP server and a schedule to show."""
    tg = st.telegram
    blocked = "Forbidden: bot was blocked by the user"
    tg.fail_next("sendMessage", 403, blocked, times=5)
    tg.fail_next("sendChatAction", 403, blocked, times=5)
    tg.push_message(777, "hello?", user_id=77)
    for _ in range(500):
        if await st.app.journal.count("failed"):
            break
        await asyncio.sleep(0.02)
    tg.clear_failures()
    tg.push_message(4242, "What changed in the billing service this week?", user_id=42)
    await tg.wait_for(lambda: len(tg.shown_texts(4242)) >= 1, 15)
    for content in (
        "Prefers metric units",
        "Works on the billing team",
        "On call in the first week of each month",
    ):
        await api(st, "POST", "/api/memory/facts?person=telegram:42", {"content": content})
    await api(
        st,
        "PUT",
        "/api/mcp/config",
        {
            "mcp_servers": {
                "github": {
                    # disabled: the agent would launch an enabled stdio server on its next turn
                    "enabled": False,
                    "type": "stdio",
                    "command": "npx",
                    "args": ["-y", "@modelcontextprotocol/server-github"],
                    "env": {"GITHUB_TOKEN": "ghp_not_a_real_token"},
                    "description": "Issues and PRs",
                },
                "docs": {
                    "enabled": False,
                    "type": "http",
                    "url": "http://127.0.0.1:9/mcp",
                    "headers": {"Authorization": "Bearer not-a-real-token"},
                },
            }
        },
    )
    await api(
        st,
        "POST",
        "/api/scheduled-tasks",
        {
            "chat": {"channel": "telegram", "chat_id": "4242"},
            "creator": {"id": "42", "name": "Ada"},
            "schedule": "every weekday 09:00",
            "prompt": "Post the on-call handover",
            "timezone": "Europe/Berlin",
        },
    )
    await asyncio.sleep(1)


async def shoot(st: Stage) -> list[Path]:
    OUT.mkdir(parents=True, exist_ok=True)
    shots = []
    async with launch() as browser:
        page = await browser.new_page(viewport={"width": 1280, "height": 800})
        await page.goto(st.url + "/console/login")
        shots.append(await save(page, "login"))
        await page.get_by_label("Admin token").fill(ADMIN_TOKEN)
        await page.get_by_role("button", name="Log in").click()
        await page.wait_for_url("**/console/channels")
        shots.append(await save(page, "channels"))
        await page.goto(st.url + "/console/metrics")
        # answers for a minute and a half: a point needs a full minute of samples before it
        for n in range(18):
            st.telegram.push_message(4242, f"Quick question {n}", user_id=42)
            await asyncio.sleep(5)
        await page.locator("#collecting").wait_for(state="hidden")
        shots.append(await save(page, "metrics"))
        st.openai.script(Reply(text="Here is the summary you asked for " * 30, stall_after=3))
        st.telegram.push_message(4242, "Summarise the incident thread", user_id=42)
        await asyncio.sleep(1.5)
        for slug in (
            "conversations",
            "deliveries",
            "extensions",
            "mcp",
            "memory",
            "schedules",
            "usage",
        ):
            await page.goto(f"{st.url}/console/{slug}")
            shots.append(await save(page, slug))
        await page.goto(st.url + "/console/memory/telegram:42")
        shots.append(await save(page, "person"))
        await page.goto(st.url + "/console/conversations")
        await page.locator("#conversations tbody tr", has_text="4242").get_by_role("link").click()
        await page.locator("#live").wait_for()  # the running reply, shown as it streams
        shots.append(await save(page, "conversation"))
        mobile = await browser.new_page(viewport={"width": 375, "height": 740})
        await mobile.context.add_cookies(await page.context.cookies())
        await mobile.goto(st.url + "/console/channels")
        shots.append(await save(mobile, "channels-375px"))
    return shots


async def save(page: Any, name: str) -> Path:
    path = OUT / f"{name}.png"
    await page.screenshot(path=str(path), full_page=True)
    return path


async def main() -> int:
    openai = FakeOpenAI().start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            async with stage(Path(tmp), openai) as st:
                await populate(st)
                for path in await shoot(st):
                    print(path.relative_to(OUT.parents[1]))
    finally:
        openai.release()
        openai.stop()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
