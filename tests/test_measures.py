"""The house's measures: no module over 400 lines, no function over 60 (ruff's PLR0913,
PLR0915 and C901 in pyproject.toml hold arguments, statements and complexity)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("bot", "agent", "channels", "gateway", "tests", "bench", "skills")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
EXCEPTIONS: dict[str, str] = {
    "tests/fakes/dingtalk_server.py": "one platform's whole wire protocol (HTTP, cards, stream "
    "frames) and its faults; its card checks follow DingTalk's documented shapes",
}
"""Module path or `path:function` -> why it may be longer. Ideally empty."""


def _modules() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_no_module_is_over_400_lines() -> None:
    long = {
        _name(p): n
        for p in _modules()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert {k: v for k, v in long.items() if k not in EXCEPTIONS} == {}


def test_no_function_is_over_60_lines() -> None:
    long: dict[str, int] = {}
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{_name(path)}:{node.name}"] = lines
    assert {k: v for k, v in long.items() if k not in EXCEPTIONS} == {}


def test_the_measures_see_the_code() -> None:
    assert len(_modules()) > 100  # the walk finds the packages (a moved root would pass all)
