"""Skills: front matter parsing, bad skills reported and skipped, enabled state, shipped skills."""

from __future__ import annotations

import json
from pathlib import Path

from agent.hands_text import skills_section
from agent.skills.loader import load_skills
from agent.skills.registry import SkillRegistry

ROOT = Path(__file__).resolve().parents[2]


def write_skill(root: Path, name: str, text: str) -> None:
    folder = root / "public" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(text)


def test_shipped_skills_parse() -> None:
    skills, problems = load_skills(ROOT / "skills")
    assert problems == []
    assert {"thread-digest", "team-reply", "data-to-chart"} <= {s.name for s in skills}


def test_bad_skills_are_reported_and_skipped(tmp_path: Path) -> None:
    write_skill(
        tmp_path,
        "good",
        "---\nname: good\ndescription: Does good things.\n"
        "allowed-tools: [read_file]\n---\n# Good\nbody",
    )
    write_skill(tmp_path, "nofront", "# no front matter")
    write_skill(tmp_path, "badname", "---\nname: Bad_Name\ndescription: x\n---\n")
    write_skill(tmp_path, "extra", "---\nname: extra\ndescription: x\ncolour: red\n---\n")
    skills, problems = load_skills(tmp_path)
    assert [s.name for s in skills] == ["good"]
    assert skills[0].allowed_tools == ("read_file",)
    assert skills[0].body() == "# Good\nbody"
    assert len(problems) == 3
    assert any("nofront" in p and "front matter" in p for p in problems)
    assert any("colour" in p for p in problems)


def test_enabled_state_follows_extensions_config(tmp_path: Path) -> None:
    write_skill(tmp_path, "one", "---\nname: one\ndescription: First.\n---\n")
    write_skill(tmp_path, "two", "---\nname: two\ndescription: Second.\n---\n")
    ext = tmp_path / "extensions_config.json"
    registry = SkillRegistry(tmp_path, ext)
    assert registry.is_enabled("one")
    assert registry.is_enabled("two")
    assert not registry.is_enabled("three")
    ext.write_text(json.dumps({"skills": {"two": {"enabled": False}}}))
    assert [s.name for s in registry.enabled()] == ["one"]
    section = skills_section(registry)
    assert "/mnt/skills/public/one/SKILL.md" in section
    assert "two" not in section
