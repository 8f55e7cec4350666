"""The skills the agent may use: loaded once at start, enabled state from extensions_config.json
(re-read when the file changes)."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from agent.extensions import ExtensionsError, load_extensions, signature
from agent.skills.loader import Skill, load_skills

log = logging.getLogger(__name__)
# a path in one skill's folder: /mnt/skills/<category>/<folder>[/...]
_SKILL_PATH = re.compile(r"/mnt/skills/(public|custom)/([A-Za-z0-9._-]+)")


class SkillRegistry:
    def __init__(self, root: Path, extensions_path: Path) -> None:
        self.root = root
        self.extensions_path = extensions_path
        self.skills: list[Skill] = []
        self.problems: list[str] = []
        self.reload()
        self._sig: object = ()
        self._enabled: dict[str, bool] = {}

    def reload(self) -> None:
        """Read the skills directory again (after a skill was installed)."""
        self.skills, self.problems = load_skills(self.root) if self.root.is_dir() else ([], [])
        for problem in self.problems:
            log.warning("%s", problem)

    def _state(self) -> dict[str, bool]:
        sig = signature(self.extensions_path)
        if sig != self._sig:
            self._sig = sig
            try:
                self._enabled = load_extensions(self.extensions_path).skills
            except ExtensionsError as exc:
                log.warning("skills: %s (all skills stay enabled)", exc)
                self._enabled = {}
        return self._enabled

    def is_enabled(self, name: str) -> bool:
        """True for a loaded skill that extensions_config.json does not disable."""
        return any(s.name == name for s in self.skills) and self._state().get(name, True)

    def enabled(self) -> list[Skill]:
        state = self._state()
        return [s for s in self.skills if state.get(s.name, True)]

    def get(self, name: str) -> Skill | None:
        return next((s for s in self.enabled() if s.name == name), None)

    def dir_allowed(self, dirname: str) -> bool:
        """For /mnt/skills/<category>/<dirname>: is that skill's directory readable?"""
        state = self._state()
        for skill in self.skills:
            if skill.path.parent.name == dirname:
                return state.get(skill.name, True)
        return False

    def used_in(self, args: Any) -> list[str]:
        """The skills a tool call's arguments name a path in (its SKILL.md, its scripts), by
        name: what "using a skill" means for approvals (agent/approval.py)."""
        folders = {m.groups() for text in _strings(args) for m in _SKILL_PATH.finditer(text)}
        return sorted(s.name for s in self.skills if (s.category, s.path.parent.name) in folders)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list | tuple):
        return [text for item in value for text in _strings(item)]
    return []
