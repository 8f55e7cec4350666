"""Skills and MCP servers through the whole service."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.e2e.hands_helpers import chan, service, system_text, tool_results
from tests.fakes.openai_server import FakeOpenAI, Reply, ToolCall

if TYPE_CHECKING:
    from tests.fakes.mcp_server import HttpMcpServer

pytestmark = pytest.mark.usefixtures("test_channel_registered")

MCP_SCRIPT = Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py"
HAIKU = """---
name: haiku-writer
description: Write a haiku about anything.
license: MIT
---
# Haiku writer
Always answer in 5-7-5 syllables. MARKER-HAIKU-BODY
"""


@pytest.fixture
def mcp_http() -> Iterator[HttpMcpServer]:
    from tests.fakes.mcp_server import HttpMcpServer  # the MCP SDK loads for these tests only

    server = HttpMcpServer().start()
    try:
        yield server
    finally:
        server.stop()


def write_skills(tmp_path: Path) -> None:
    good = tmp_path / "skills" / "public" / "haiku-writer"
    good.mkdir(parents=True)
    (good / "SKILL.md").write_text(HAIKU)
    broken = tmp_path / "skills" / "public" / "broken"
    broken.mkdir()
    (broken / "SKILL.md").write_text("no front matter here")


async def test_skill_listed_and_activated_by_slash_command(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    write_skills(tmp_path)
    async with service(tmp_path, fake_openai) as svc:
        ch = chan(svc)
        await ch.say("hello", "/haiku-writer about rain", "/status")
        await svc.idle()
    plain, activated = fake_openai.requests
    assert "<location>/mnt/skills/public/haiku-writer/SKILL.md</location>" in system_text(plain)
    assert "MARKER-HAIKU-BODY" not in system_text(plain)
    assert "MARKER-HAIKU-BODY" in system_text(activated)
    assert FakeOpenAI.user_texts(activated)[-1] == "/haiku-writer about rain"
    status = next(t for t in ch.texts() if t.startswith("Thread: "))
    assert "Skills: /haiku-writer" in status
    assert "skill public/broken skipped: no YAML front matter" in status


async def test_mcp_tools_over_stdio_and_http(
    tmp_path: Path,
    fake_openai: FakeOpenAI,
    mcp_http: HttpMcpServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTLER_TEST_MCP_USER", "alice")
    ext = tmp_path / "extensions_config.json"
    servers = {
        "calc": {
            "type": "stdio",
            "command": sys.executable,
            "args": [str(MCP_SCRIPT)],
            "env": {"MCP_TEST_USER": "$ANTLER_TEST_MCP_USER"},
        },
        "remote": {
            "type": "http",
            "url": mcp_http.url,
            "headers": {"X-Test": "$ANTLER_TEST_MCP_USER"},
        },
        "broken": {"type": "stdio", "command": str(tmp_path / "no-such-server")},
    }
    ext.write_text(json.dumps({"mcpServers": servers}))
    fake_openai.script(
        Reply(
            tool_calls=[
                ToolCall("calc_add", {"a": 2, "b": 3}),
                ToolCall("calc_whoami", {}),
                ToolCall("remote_shout", {"text": "quiet"}),
            ]
        ),
        Reply(text="Done with MCP."),
    )
    async with service(tmp_path, fake_openai) as svc:
        ch = chan(svc)
        await ch.inject("use the servers")
        await svc.idle()
        await ch.inject("/status")
        await svc.idle()
        del servers["remote"]
        ext.write_text(json.dumps({"mcpServers": servers}))
        await ch.inject("again")
        await svc.idle()
    first, second, third = fake_openai.requests
    assert {"calc_add", "calc_whoami", "remote_shout"} <= set(first.tool_names)
    results = tool_results(second)
    assert any("sum=5" in r for r in results)
    assert any("user=alice" in r for r in results)
    assert any("QUIET" in r for r in results)
    assert ch.texts()[0] == "Done with MCP."
    status = next(t for t in ch.texts() if t.startswith("Thread: "))
    assert "MCP server 'broken' unavailable" in status
    assert "calc (3 tools)" in status
    assert "calc_add" in third.tool_names
    assert "remote_shout" not in third.tool_names  # the changed file was picked up
