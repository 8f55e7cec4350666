"""DESIGN.md: `bot` may import `channels` and `agent`; never the other way, nor each other."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = {"channels": {"bot", "agent"}, "agent": {"bot", "channels"}}


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_imports_stay_in_direction(package: str) -> None:
    violations = []
    for path in sorted((ROOT / package).rglob("*.py")):
        bad = imported_packages(path) & FORBIDDEN[package]
        if bad:
            violations.append(f"{path.relative_to(ROOT)} imports {sorted(bad)}")
    assert not violations, "\n".join(violations)


def test_the_checker_sees_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "x.py"
    bad.write_text("from bot.app import App\nimport agent.runner\n")
    assert imported_packages(bad) == {"bot", "agent"}


def test_only_the_registry_names_platforms() -> None:
    platforms = ("telegram", "slack", "feishu", "dingtalk")
    offenders = []
    for path in sorted((ROOT / "bot").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        offenders += [f"{path.name}: {p}" for p in platforms if f'"{p}"' in text]
    assert not offenders
