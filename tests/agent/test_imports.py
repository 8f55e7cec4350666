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
