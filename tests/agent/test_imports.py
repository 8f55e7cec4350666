"""Importing the runner does no IO and loads no LangChain/LangGraph (they load on first run)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_runner_import_is_light() -> None:
    code = (
        "import sys, agent.runner; "
        "heavy = [m for m in sys.modules if m.split('.')[0] in "
        "('langchain', 'langgraph', 'langchain_openai', 'openai')]; "
        "print(heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]"


def test_a_config_error_answers_before_the_agent_stack_loads(tmp_path: Path) -> None:
    """`antler check`/`serve` on a bad config stop at validation: bot.config.schema and bot.cli
    import no LangChain/LangGraph, so the one-line answer comes without their import cost."""
    bad = tmp_path / "config.yaml"
    bad.write_text("models: []\n")
    code = (
        "import sys, bot.cli; "
        f"code = bot.cli.main(['check', '--config', {str(bad)!r}]); "
        "heavy = [m for m in sys.modules if m.split('.')[0] in "
        "('langchain', 'langgraph', 'langchain_openai', 'openai')]; "
        "print(code, heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "2 []", out.stderr
    assert "config error" in out.stderr
