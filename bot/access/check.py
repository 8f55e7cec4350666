"""`antler check`'s warnings for `access`: grants naming tools, skills or models nobody has."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.config.schema import Settings


def access_warnings(settings: Settings) -> list[str]:
    from agent.hands import Hands
    from agent.tools.interaction import interaction_tools
    from agent.tools.schedules import SCHEDULE_TOOL

    try:
        hands = Hands(settings.agent)
        tools = {t.name for t in [*hands.base_tools(), *interaction_tools()]}
    except ValueError:  # a bad tool import path: reported on its own
        return []
    tools |= {"task", "bash", SCHEDULE_TOOL}  # built-ins that settings may switch off
    skills = {s.name for s in hands.skills.skills}
    models = {m.name for m in settings.models}
    return settings.access.warnings(tools, skills, models)
