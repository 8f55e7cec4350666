"""DESIGN.md: `gateway` may import `bot`; `bot` may import `channels` and `agent`; never the other
way, nor `channels` and `agent` each other; nothing imports `gateway` (its `__main__` is the entry
point: it hands bot.cli the HTTP face)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = {
    "channels": {"bot", "agent", "gateway"},
    "agent": {"bot", "channels", "gateway"},
    "bot": {"gateway"},
}


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


PACKAGES = ("bot", "gateway", "agent", "channels")


def module_imports(path: Path) -> set[str]:
    """The project modules a file imports, at run time or for type checking only."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return {name for name in found if name.split(".")[0] in PACKAGES}


def import_graph() -> dict[str, set[str]]:
    modules = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            modules[name] = path
    return {name: module_imports(path) & set(modules) - {name} for name, path in modules.items()}


def reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            todo += graph.get(node, set())
    return False


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each group of modules that import each other, directly or around a circle."""
    found = []
    for start in sorted(graph):
        circle = sorted(m for m in graph[start] if reaches(graph, m, start)) and sorted(
            m for m in graph if reaches(graph, start, m) and reaches(graph, m, start)
        )
        if circle and circle not in found:
            found.append(circle)
    return found


def test_no_import_circles_anywhere() -> None:
    """No two modules import each other, around any circle, type-only imports included."""
    assert cycles(import_graph()) == []


def test_the_circle_finder_sees_one() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


@pytest.mark.parametrize(
    ("low", "high"),
    [
        ("gateway", "bot.app"),
        ("bot.commands", "bot.dispatcher"),
        ("bot.command_context", "bot.dispatcher"),
        ("bot.command_registry", "bot.dispatcher"),
    ],
)
def test_no_import_cycles_through_the_composition(low: str, high: str) -> None:
    """Commands and the Gateway get narrow parts; they never import (even for types) what
    builds them, so there is no cycle between them and the App or the Dispatcher."""
    graph = import_graph()
    # the entry point (`antler`) composes the whole service: it is the one module that may
    starts = [m for m in graph if (m == low or m.startswith(low + ".")) and m != "gateway.__main__"]
    assert starts
    assert [m for m in starts if reaches(graph, m, high)] == []
