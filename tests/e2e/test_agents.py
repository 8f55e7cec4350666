"""Agent profiles through the whole service (the real python-telegram-bot against the fake
Telegram server, the agent against the fake OpenAI server): `/agent` lists the profiles a role
allows and switches a chat's agent, and the system prompt, model and tools reaching the model
show which profile ran; a SOUL file is the prompt; `memory: own` keeps the person's shared
memory out; `/status` names the agent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.memory.records import NewFact
from bot import texts
from tests.e2e.hands_helpers import system_text
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import FakeTelegram
from tests.harness import ServiceHarness

CHAT = 4242


def profiles(tmp_path: Path) -> list[dict[str, Any]]:
    soul = tmp_path / "eng" / "SOUL.md"
    soul.parent.mkdir()
    soul.write_text("# Eng\nYou are the engineering agent; cite the runbook.\n")
    return [
        {"name": "support", "display_name": "Support desk",
         "description": "answers customers", "system_prompt": "You are the support desk.",
         "tools": [], "memory": "own"},
        {"name": "eng", "display_name": "Engineering", "soul_file": str(soul), "model": "smart"},
        {"name": "secret", "system_prompt": "Not for members."},
    ]  # fmt: skip


ACCESS = {"roles": {"member": {"agents": ["lead_agent", "support", "eng"]}}}


async def said(telegram: FakeTelegram, text: str) -> str:
    """Send `text` and wait for a new message in the chat; its text as shown."""
    before = len(telegram.shown_texts(CHAT))
    telegram.push_message(CHAT, text)
    await telegram.wait_for(lambda: len(telegram.shown_texts(CHAT)) > before, timeout=10)
    return telegram.shown_texts(CHAT)[-1]


def shown(markdown: str) -> str:
    """A service text as Telegram shows it (bold and code marks gone, list bullets)."""
    plain = markdown.replace("**", "").replace("`", "")
    return plain[2:].join(("• ", "")) if plain.startswith("- ") else plain


async def test_a_chat_switches_its_agent_and_the_model_sees_the_profile(
    tmp_path: Path, fake_openai: FakeOpenAI, telegram: FakeTelegram
) -> None:
    channels = {"telegram": telegram.channel_config()}
    agent = {
        "system_prompt": "House rules apply.",
        "title": {"enabled": False},
        "memory": {"debounce_seconds": 300},  # no memory pass during the test
    }
    async with ServiceHarness(
        tmp_path / "data", fake_openai, channels, only=["telegram"], agent=agent,
        agents=profiles(tmp_path), access=ACCESS,
    ) as svc:  # fmt: skip
        fact = NewFact("Likes green tea", "preference", 0.9)
        await svc.running.runner.memory.store.add_fact("telegram:42", fact, source="test")
        await said(telegram, "hello lead")
        await svc.idle()
        listing = await said(telegram, "/agent")
        assert shown(texts.agent_list("Lead agent", chat_default=False)) in listing
        line = texts.agent_line("support", "Support desk", "answers customers", False)
        assert shown(line) in listing
        assert "secret" not in listing  # the member's role leaves it out
        assert await said(telegram, "/agent secret") == texts.agent_denied("secret", "member")
        unknown = await said(telegram, "/agent nobody")
        assert unknown.startswith(shown(texts.unknown_agent("nobody")))
        assert await said(telegram, "/agent support") == texts.agent_switched("Support desk")
        await said(telegram, "hello support")
        await svc.idle()
        assert await said(telegram, "/agent ENG") == texts.agent_switched("Engineering")
        await said(telegram, "hello eng")
        await svc.idle()
        status = await said(telegram, "/status")
        assert "Agent: Engineering (eng)" in status
        assert "Model: Smart (smart)" in status  # the profile's model
    lead, support, eng = fake_openai.requests
    assert "House rules apply." in system_text(lead)
    assert lead.model == "fake-fast"
    assert lead.tool_names
    assert "You are the support desk." in system_text(support)
    assert "House rules apply." not in system_text(support)
    assert support.tool_names == []  # `tools: []`: none offered
    assert "green tea" in system_text(lead)
    assert "green tea" in system_text(eng)
    assert "green tea" not in system_text(support)  # `memory: own` starts empty
    assert "You are the engineering agent; cite the runbook." in system_text(eng)
    assert eng.model == "fake-smart"
    assert fake_openai.user_texts(eng)[-1].endswith("hello eng")
