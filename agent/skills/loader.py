"""Parse and validate `SKILL.md` files (YAML front matter between `---` lines, then Markdown)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

CATEGORIES = ("public", "custom")
NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
ALLOWED_KEYS = {
    "name",
    "description",
    "license",
    "allowed-tools",
    "required-secrets",
    "secrets-autonomous",
    "metadata",
    "compatibility",
    "version",
    "author",
}
FRONT = re.compile(r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)(.*)\Z", re.DOTALL)


class SkillError(Exception):
    pass


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    category: str
    path: Path  # host path of SKILL.md
    license: str = ""
    allowed_tools: tuple[str, ...] = ()

    @property
    def virtual_path(self) -> str:
        return f"/mnt/skills/{self.category}/{self.path.parent.name}/SKILL.md"

    def body(self) -> str:
        match = FRONT.match(self.path.read_text(encoding="utf-8"))
        return match.group(2).strip() if match else ""


def parse_skill(path: Path, category: str) -> Skill:
    match = FRONT.match(path.read_text(encoding="utf-8"))
    if not match:
        raise SkillError("no YAML front matter between '---' lines")
    try:
        meta = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        raise SkillError(f"front matter is not valid YAML: {exc}") from exc
    if not isinstance(meta, dict):
        raise SkillError("front matter must be a mapping")
    unknown = sorted(set(meta) - ALLOWED_KEYS)
    if unknown:
        raise SkillError(f"unknown front matter keys: {', '.join(unknown)}")
    return Skill(
        name=_name(meta),
        description=_description(meta),
        category=category,
        path=path,
        license=str(meta.get("license") or ""),
        allowed_tools=_tools(meta),
    )


def _name(meta: dict[str, object]) -> str:
    name = meta.get("name")
    if not isinstance(name, str) or not NAME.fullmatch(name) or len(name) > 64:
        raise SkillError("name must be lowercase letters, digits and single hyphens (≤64)")
    return name


def _description(meta: dict[str, object]) -> str:
    text = meta.get("description")
    if not isinstance(text, str) or not text.strip():
        raise SkillError("description is required")
    if len(text) > 1024 or "<" in text or ">" in text:
        raise SkillError("description must be ≤1024 characters without '<' or '>'")
    return " ".join(text.split())


def _tools(meta: dict[str, object]) -> tuple[str, ...]:
    tools = meta.get("allowed-tools") or []
    if isinstance(tools, str):
        tools = [t.strip() for t in tools.split(",") if t.strip()]
    if not isinstance(tools, list):
        raise SkillError("allowed-tools must be a list")
    return tuple(str(t) for t in tools)


def load_skills(root: Path) -> tuple[list[Skill], list[str]]:
    """Every parseable skill under `root/<category>/*/SKILL.md`, and one problem per bad one."""
    skills: list[Skill] = []
    problems: list[str] = []
    seen: set[str] = set()
    for category in CATEGORIES:
        for path in sorted((root / category).glob("*/SKILL.md")):
            try:
                skill = parse_skill(path, category)
            except (SkillError, OSError, UnicodeDecodeError) as exc:
                problems.append(f"skill {category}/{path.parent.name} skipped: {exc}")
                continue
            if skill.name in seen:
                problems.append(
                    f"skill {category}/{path.parent.name} skipped: duplicate name {skill.name!r}"
                )
                continue
            seen.add(skill.name)
            skills.append(skill)
    return skills, problems
