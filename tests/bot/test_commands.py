from __future__ import annotations

from pathlib import Path

import pytest

from bot.command_registry import CommandRegistry, SkillCommand
from bot.commands import parse_command
from tests.menu import BUILT_INS


@pytest.mark.parametrize(
    ("text", "name", "args"),
    [
        ("/new", "new", ""),
        ("/models smart", "models", "smart"),
        ("/models@AntlerBot smart", "models", "smart"),
        ("@Antler /status", "status", ""),
        ("<@U123ABC> /help", "help", ""),
        ("<@U123|antler>   /stop", "stop", ""),
        ("  /NEW  ", "new", ""),
        ("/my-skill do the thing\nplease", "my-skill", "do the thing\nplease"),
    ],
)
def test_commands_are_recognised(text: str, name: str, args: str) -> None:
    parsed = parse_command(text)
    assert parsed is not None
    assert (parsed.name, parsed.args) == (name, args)


@pytest.mark.parametrize("text", ["/etc/hosts", "hello /new", "//new", "/", "/ new", "/1abc"])
def test_non_commands_are_chat(text: str) -> None:
    assert parse_command(text) is None


def _skills(*names: str) -> CommandRegistry:
    return CommandRegistry(skills=lambda: [SkillCommand(n, f"{n} things") for n in names])


def test_help_lists_every_visible_command_and_the_skills() -> None:
    text = _skills("team-reply").help_text()
    for name in BUILT_INS:
        assert f"/{name}" in text
    assert "/start" not in text
    assert "Skills:\n/team-reply TASK — team-reply things" in text


def test_one_registry_for_builtins_and_skills() -> None:
    registry = _skills("digest", "status")  # a skill may not shadow a built-in
    assert registry.builtin("new") is not None
    assert registry.builtin("digest") is None
    assert registry.is_skill("digest")
    assert not registry.is_skill("status")
    assert not registry.is_skill("nope")
    menu = registry.menu()
    assert [c.name for c in menu if c.skill] == ["digest"]
    assert "start" not in [c.name for c in menu]
    assert registry.greeting().startswith("Hi! I'm Antler")
    assert registry.greeting().endswith(registry.help_text())


def test_skills_are_read_live() -> None:
    enabled: list[str] = []
    registry = CommandRegistry(skills=lambda: [SkillCommand(n, "x") for n in enabled])
    assert not registry.is_skill("digest")
    enabled.append("digest")
    assert registry.is_skill("digest")


def test_slack_manifest_in_the_docs_lists_the_builtins() -> None:
    """docs/channels/slack.md's manifest offers every built-in command under /antler."""
    doc = (Path(__file__).parents[2] / "docs/channels/slack.md").read_text()
    names = [c.name for c in CommandRegistry().menu()]
    assert f'description: "Antler: {", ".join(names)}"' in doc
