"""Console fixtures: the service with the recording channel `test` and a token, and a client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.console.client import Console
from tests.fakes.openai_server import FakeOpenAI
from tests.gateway.conftest import TOKEN, make_harness
from tests.harness import ServiceHarness


def write_skill(root: Path, category: str, name: str) -> None:
    folder = root / category / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: The {name} skill.\n---\nDo the thing.\n"
    )


@pytest.fixture
async def svc(
    tmp_path: Path, fake_openai: FakeOpenAI, test_channel_registered: None
) -> AsyncIterator[ServiceHarness]:
    root = tmp_path / "skills"
    write_skill(root, "public", "pdf-tools")
    async with make_harness(tmp_path, fake_openai, agent={"skills": {"path": str(root)}}) as s:
        yield s


@pytest.fixture
async def console(svc: ServiceHarness) -> AsyncIterator[Console]:
    client = Console(svc.gateway_url)
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture
async def admin(console: Console) -> Console:
    await console.login(TOKEN)
    return console
