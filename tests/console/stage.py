"""A service for the console's browser tests and screenshots: Telegram on its fake platform
server, the agent on the fake OpenAI server, an admin token, one skill, and Debian's chromium
driven by Playwright (never a downloaded browser)."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import TOKEN as BOT_TOKEN
from tests.fakes.telegram_server import FakeTelegram
from tests.harness import ServiceHarness

ADMIN_TOKEN = "console-admin-token"
CHROMIUM_HINT = (
    "the console's browser tests need Debian's chromium (apt-get install -y "
    "chromium) and the dev extras (pip install -e '.[dev]' for playwright)"
)


def chromium_path() -> str | None:
    for candidate in (
        os.environ.get("ANTLER_CHROMIUM", ""),
        "/usr/bin/chromium",
        shutil.which("chromium") or "",
        shutil.which("chromium-browser") or "",
    ):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


def browser_required() -> bool:
    """Under CI (.ci/run sets it) a missing browser fails the tests instead of skipping them."""
    return os.environ.get("ANTLER_TEST_PG_REQUIRED") == "1"


@asynccontextmanager
async def launch(**options: Any) -> AsyncIterator[Any]:
    from playwright.async_api import async_playwright

    path = chromium_path()
    assert path is not None, CHROMIUM_HINT
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=path, args=["--no-sandbox"], **options)
        try:
            yield browser
        finally:
            await browser.close()


@dataclass
class Stage:
    svc: ServiceHarness
    telegram: FakeTelegram
    openai: FakeOpenAI
    data_dir: Path

    @property
    def url(self) -> str:
        return self.svc.gateway_url

    @property
    def app(self) -> Any:
        assert self.svc.app is not None
        return self.svc.app


def write_skill(root: Path, name: str, description: str) -> None:
    folder = root / "public" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n"
    )


@asynccontextmanager
async def stage(data_dir: Path, openai: FakeOpenAI, **extra: Any) -> AsyncIterator[Stage]:
    telegram = FakeTelegram().start()
    skills = data_dir / "skills"
    write_skill(skills, "data-to-chart", "Turns a table into a chart.")
    write_skill(skills, "thread-digest", "Summarises a long thread.")
    conf = {
        "enabled": True,
        "bot_token": BOT_TOKEN,
        "api_base": telegram.api_base,
        "poll_timeout": 1,
    }
    agent = {
        "extensions_config": str(data_dir / "extensions_config.json"),
        "skills": {"path": str(skills)},
        **extra.pop("agent", {}),
    }
    svc = ServiceHarness(
        data_dir,
        openai,
        {"telegram": conf},
        only=["telegram"],
        gateway={"auth_token": ADMIN_TOKEN},
        agent=agent,
        **extra,
    )
    try:
        async with svc:
            yield Stage(svc, telegram, openai, data_dir)
    finally:
        openai.release()
        telegram.stop()
