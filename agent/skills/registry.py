"""The skills the agent may use: loaded once at start, enabled state from extensions_config.json
(re-read when the file changes)."""

from __future__ import annotations

import logging
from pathlib import Path

from agent.extensions import ExtensionsError, load_extensions, signature
from agent.skills.loader import Skill, load_skills

log = logging.getLogger(__name__)


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
