"""A person's grant through the whole service (recording channel, fake model, a real MCP
server): MCP tools offered by `server:tool` grants, a denied skill answered in one line, a
conversation model outside the grant replaced, a role's upload limit, a chat's ceiling."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from bot import texts
from channels.types import Attachment
from tests.e2e.hands_helpers import chan, system_text
from tests.e2e.test_hands_extensions import MCP_SCRIPT, write_skills
from tests.fakes.openai_server import FakeOpenAI
from tests.harness import ServiceHarness

pytestmark = pytest.mark.usefixtures("test_channel_registered")

ACCESS: dict[str, Any] = {
    "default_role": "analyst",
    "roles": {
        "analyst": {
            "tools": ["read_file", "calc:add"],  # one MCP tool, without its server
            "mcp_servers": [],
            "skills": [],
            "models": ["fast"],
            "upload_mb": 1,
        },
    },
    "people": {"test:boss": "admin"},
    "chats": {"test:guests": "analyst"},
}


def service(tmp_path: Path, fake: FakeOpenAI) -> ServiceHarness:
    ext = tmp_path / "extensions_config.json"
    calc = {"type": "stdio", "command": sys.executable, "args": [str(MCP_SCRIPT)]}
    ext.write_text(json.dumps({"mcpServers": {"calc": calc}}))
    agent = {"skills": {"path": str(tmp_path / "skills")}, "extensions_config": str(ext)}
    return ServiceHarness(
        tmp_path / "data", fake, {"test": {"enabled": True}}, agent=agent, access=ACCESS
    )


async def test_the_grant_shapes_what_the_model_sees_and_what_runs(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    write_skills(tmp_path)
    async with service(tmp_path, fake_openai) as svc:
        ch = chan(svc)
        conv = await svc.running.conversations.get_or_create(ch.message("x").chat)
        await svc.running.conversations.update(conv.key, model="smart")  # set by someone else
        await ch.inject("hello")
        await svc.idle()
        await ch.inject("/haiku-writer about rain")
        await svc.idle()
        await ch.inject("/models smart")
        await svc.idle()
        assert svc.running.metrics.value("antler_access_denied_total", kind="model") == 1
        ch.files["big"] = b"x" * 1_500_000
        await ch.inject("read this", attachments=(Attachment(name="big.txt", ref="big"),))
        await svc.idle()
        await ch.inject("hello boss", chat_id="c2", user="boss")
        await svc.idle()
        await ch.inject(
            "hello boss", chat_id="guests", user="boss", chat_type="group", mentions_bot=True
        )
        await svc.idle()
    analyst, with_file, boss, capped = fake_openai.requests
    assert analyst.model == "fake-fast"  # "smart" is not in the analyst's grant
    assert sorted(analyst.tool_names) == ["calc_add", "read_file"]
    assert "haiku-writer" not in system_text(analyst)
    assert texts.skill_denied("haiku-writer", "analyst") in ch.texts()
    assert texts.model_denied("smart", "analyst") in ch.texts()
    assert "big.txt was not read: big.txt is larger than the 1 MB limit." in ch.texts()
    assert "big.txt" not in json.dumps(with_file.body)
    assert {"calc_add", "calc_whoami", "write_file", "task"} <= set(boss.tool_names)
    assert "haiku-writer" in system_text(boss)
    assert sorted(capped.tool_names) == ["calc_add", "read_file"]  # the chat's ceiling


async def test_without_a_grant_nothing_runs_and_the_user_is_told(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    async with ServiceHarness(tmp_path, fake_openai, {"test": {"enabled": True}}) as svc:
        ch = chan(svc)
        db = svc.running.stores.db
        assert db is not None
        db.execute("DROP TABLE access_roles")  # the roles cannot be read
        await ch.inject("hello")
        await svc.idle()
    assert fake_openai.requests == []  # never run with everything
    assert ch.texts() == [texts.TURN_FAILED]
