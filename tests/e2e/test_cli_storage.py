"""The real `antler` command with `storage.backend: postgres`: `check` tries the database, a
database that cannot be used stops start-up with one plain line (exit 2), /health reports it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import psycopg

from tests.e2e.test_cli import ROOT, env, free_port, serving, write_config
from tests.fakes.openai_server import FakeOpenAI

UNREACHABLE = "postgresql://antler:pw-not-shown@127.0.0.1:1/test"


def pg_config(tmp_path: Path, fake: FakeOpenAI, port: int = 0) -> Path:
    cfg = write_config(tmp_path, fake, port)
    text = cfg.read_text().replace(
        "storage: {",
        "storage: {backend: postgres, postgres: {dsn: $ANTLER_PG_DSN,"
        " connect_timeout_seconds: 2}, ",
    )
    cfg.write_text(text)
    return cfg


def antler(*args: str, dsn: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gateway", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**env(), "ANTLER_PG_DSN": dsn},
        cwd=ROOT,
    )


def test_check_tries_the_database(tmp_path: Path, fake_openai: FakeOpenAI, pg_dsn: str) -> None:
    result = antler("check", "--config", str(pg_config(tmp_path, fake_openai)), dsn=pg_dsn)
    assert result.returncode == 0, result.stderr
    assert "storage: postgres at " in result.stdout
    assert ": reachable (" in result.stdout
    with psycopg.connect(pg_dsn) as conn:  # check only connects: it creates nothing
        (tables,) = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()"
        ).fetchone() or (0,)
    assert tables == 0


def test_check_on_sqlite_names_the_folder_and_creates_nothing(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    cfg = write_config(tmp_path, fake_openai)
    result = antler("check", "--config", str(cfg), dsn="")
    assert result.returncode == 0, result.stderr
    assert f"storage: sqlite (files under {tmp_path / 'data'})" in result.stdout
    assert not (tmp_path / "data").exists()


def test_unusable_database_stops_check_and_serve_with_one_line(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    cfg = str(pg_config(tmp_path, fake_openai))
    for command in ("check", "serve"):
        result = antler(command, "--config", cfg, dsn=UNREACHABLE)
        assert result.returncode == 2, (command, result.stderr)
        assert (
            "config error: storage.postgres.dsn: cannot use the PostgreSQL database at"
            " antler@127.0.0.1:1/test: connection refused" in result.stderr
        ), result.stderr
        assert "Traceback" not in result.stderr
        assert "pw-not-shown" not in result.stderr + result.stdout


def test_unset_dsn_variable_is_a_config_error(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    cfg = str(pg_config(tmp_path, fake_openai))
    result = subprocess.run(
        [sys.executable, "-m", "gateway", "check", "--config", cfg],
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in env().items() if k != "ANTLER_PG_DSN"},
        cwd=ROOT,
    )
    assert result.returncode == 2
    assert "config error: storage.postgres.dsn: required" in result.stderr


def test_serve_reports_the_database_in_health(
    tmp_path: Path, fake_openai: FakeOpenAI, pg_dsn: str
) -> None:
    port = free_port()
    cfg = pg_config(tmp_path, fake_openai, port)
    environ = {**env(), "ANTLER_PG_DSN": pg_dsn}
    with serving(cfg, port, environ, start_up=60) as health:  # start-up on a loaded machine
        database = health["database"]
        assert isinstance(database, dict)
        assert database["backend"] == "postgres"
        assert database["reachable"] is True
        assert health["status"] == "ok"
