"""What the console ships: every template and asset is package data (the Docker image installs
the wheel), the vendored files are the pinned ones with their licences, and no page loads
anything from another host."""

from __future__ import annotations

import fnmatch
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONSOLE = ROOT / "gateway" / "console"


def test_every_template_and_asset_is_package_data() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["gateway.console"]
    files = [
        p.relative_to(CONSOLE).as_posix()
        for p in CONSOLE.rglob("*")
        if p.is_file() and p.suffix != ".py" and "__pycache__" not in p.parts
    ]
    assert files
    missing = [f for f in files if not any(fnmatch.fnmatch(f, pat) for pat in patterns)]
    assert missing == []


def test_vendored_packages_are_pinned_with_their_licences() -> None:
    vendor = CONSOLE / "static" / "vendor"
    assert "Zero-Clause BSD" in (vendor / "LICENSE-htmx.txt").read_text()
    assert "MIT" in (vendor / "LICENSE-uplot.txt").read_text()
    assert "2.0.11" in (vendor / "htmx-2.0.11.min.js").read_text()[:50_000]
    assert (vendor / "uPlot-1.6.32.iife.min.js").stat().st_size > 10_000


def test_no_page_loads_from_another_host() -> None:
    remote = re.compile(r"""(src|href)=["'](https?:)?//""")
    for template in (CONSOLE / "templates").glob("*.html"):
        assert not remote.search(template.read_text()), template.name
