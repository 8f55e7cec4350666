"""The one registry of chat commands: the built-in table and the enabled skills, as one list.

The composition root (bot/app.py) builds it. The dispatcher asks it what `/name` is, `/help`
and `/start` list it, the turn runner reads which names are skills (`/<skill> TASK` becomes a
skill turn for the agent), and each channel's native menu (Telegram's command list, Slack's
bare command words) gets it as plain `MenuCommand`s through its context. Built-in summaries are
message ids (extracted from `COMMANDS.register` calls), given out in the current locale.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot import i18n, texts
from bot.commands import COMMANDS, Command, CommandTable
from channels.base import MenuCommand

if TYPE_CHECKING:
    from agent.hands import Hands


@dataclass(frozen=True, slots=True)
class SkillCommand:
    """An enabled skill, offered as `/name TASK`."""

    name: str
    summary: str


SkillSource = Callable[[], Iterable[SkillCommand]]
"""The skills enabled right now (their state can change while the service runs)."""


def _no_skills() -> Iterable[SkillCommand]:
    return ()


class CommandRegistry:
    def __init__(
        self,
        builtins: CommandTable = COMMANDS,
        skills: SkillSource = _no_skills,
        bot_name: str = "Antler",
    ) -> None:
        self.builtins = builtins
        self.skills = skills
        self.bot_name = bot_name

    def builtin(self, name: str) -> Command | None:
        """The built-in command `/name`, or None (a skill or an unknown word)."""
        return self.builtins.get(name)

    def is_skill(self, name: str) -> bool:
        """True when `/name` runs an enabled skill (a built-in of the same name wins)."""
        return self.builtin(name) is None and any(s.name == name for s in self._skills())

    def menu(self) -> tuple[MenuCommand, ...]:
        """Every command a user may type, built-ins first, as plain data for channels."""
        visible = [
            MenuCommand(name=c.name, summary=i18n.gettext(c.summary), usage=c.usage)
            for c in self.builtins.commands.values()
            if not c.hidden
        ]
        skills = [
            MenuCommand(name=s.name, summary=s.summary, usage=f"/{s.name} TASK", skill=True)
            for s in self._skills()
        ]
        return tuple(visible + skills)

    def help_text(self) -> str:
        entries = self.menu()
        lines = [texts.HELP_COMMANDS]
        lines += [f"{e.usage} — {e.summary}" for e in entries if not e.skill]
        skills = [e for e in entries if e.skill]
        if skills:
            lines.append(texts.HELP_SKILLS)
            lines += [f"{e.usage} — {e.summary}" for e in skills]
        lines.append(texts.HELP_ELSE)
        return "\n".join(lines)

    def greeting(self) -> str:
        """The one `/start` answer: who the bot is, then the help."""
        return f"{texts.greeting(self.bot_name)}\n\n{self.help_text()}"

    def _skills(self) -> list[SkillCommand]:
        return [s for s in self.skills() if self.builtins.get(s.name) is None]


def skill_commands(hands: Callable[[], Hands]) -> SkillSource:
    """The enabled skills as commands, read afresh each time (skills are enabled at runtime,
    and the hands are rebuilt when the agent's settings change)."""

    def current() -> list[SkillCommand]:
        return [SkillCommand(s.name, _summary(s.description)) for s in hands().skills.enabled()]

    return current


def _summary(description: str, limit: int = 100) -> str:
    line = description.strip().splitlines()[0] if description.strip() else texts.SKILL_SUMMARY
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
