"""The image: dependencies in a layer before the code, the bundled skills where relative paths
resolve (the config's folder), the data dir on the volume, a HEALTHCHECK on /health."""

from __future__ import annotations

import shutil
from pathlib import Path

from bot.config.schema import load_settings, path_warnings

ROOT = Path(__file__).resolve().parents[1]
LINES = [line.strip() for line in (ROOT / "Dockerfile").read_text().splitlines()]


def _index(prefix: str) -> int:
    return next(i for i, line in enumerate(LINES) if line.startswith(prefix))


def test_dependencies_are_installed_before_the_code_is_copied() -> None:
    deps = _index("&& pip install -r")
    assert deps < _index("COPY bot") < _index("RUN pip install --no-deps .")
    assert _index("COPY pyproject.toml") < deps


def test_healthcheck_and_config_location() -> None:
    assert any(line.startswith("HEALTHCHECK") for line in LINES)
    assert "ANTLER_HEALTH_URL=http://127.0.0.1:8001/health" in " ".join(LINES)
    assert LINES[_index("CMD [")].endswith('"--config", "/app/config.yaml"]')
    assert "WORKDIR /data" not in LINES
    assert "ln -s /data /app/.antler" in " ".join(LINES)


def test_the_image_layout_finds_the_bundled_skills(tmp_path: Path) -> None:
    """/app holds config.yaml next to skills/: the example config finds them there."""
    app = tmp_path / "app"
    shutil.copytree(ROOT / "skills", app / "skills")
    shutil.copy(ROOT / "config.example.yaml", app / "config.yaml")
    settings = load_settings(app / "config.yaml")
    assert settings.agent.skills.path == app / "skills"
    assert settings.storage.data_dir == app / ".antler"
    assert path_warnings(settings) == []
