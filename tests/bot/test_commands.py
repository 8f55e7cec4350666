from __future__ import annotations

import pytest

from bot.commands import COMMANDS, parse_command


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


def test_help_lists_every_visible_command() -> None:
    text = COMMANDS.help_text()
    for name in ("new", "stop", "status", "models", "memory", "help"):
        assert f"/{name}" in text
    assert "/start" not in text
