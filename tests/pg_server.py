"""A real PostgreSQL server for the tests.

`ANTLER_TEST_PG_DSN` (default: the machine's server, postgresql://postgres@127.0.0.1:5432/test);
when nothing answers there, a throwaway server is started from the installed binaries
(`initdb`/`pg_ctl`, in a temporary directory, on a free port) and stopped at the end. Without
either the PostgreSQL tests are skipped with a message naming what to install, except in CI
(`CI` or `ANTLER_TEST_PG_REQUIRED` set), where they fail instead.

Each test gets its own schema (`search_path` in the DSN), dropped afterwards.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import uuid
from pathlib import Path
from urllib.parse import quote

import psycopg

from tests import throwaway

DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/test"
INSTALL_HINT = (
    "no PostgreSQL server answered at ANTLER_TEST_PG_DSN and none could be started: "
    "install PostgreSQL (apt-get install postgresql) or set ANTLER_TEST_PG_DSN"
)


def required() -> bool:
    return bool(os.environ.get("CI") or os.environ.get("ANTLER_TEST_PG_REQUIRED"))


def answers(dsn: str) -> bool:
    try:
        with psycopg.connect(dsn, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error:
        return False
    return True


class Throwaway(throwaway.Throwaway):
    """A PostgreSQL cluster in a temporary directory, run as the `postgres` user under root."""

    kind = "pg"
    start_errors = (OSError, KeyError, subprocess.SubprocessError)

    @property
    def address(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> Throwaway:
        data = self.dir / "data"
        if not data.exists():
            self._run(
                [_binary("initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8"]
            )
        self._run(
            [
                _binary("pg_ctl"),
                "-D",
                str(data),
                "-l",
                str(self.dir / "log"),
                "-w",
                "-o",
                f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off",
                "start",
            ]
        )
        return self

    def halt(self) -> None:
        """Stop the server and keep its data (`start()` brings it back on the same port), as a
        database restart does: every connection is cut."""
        self._run([_binary("pg_ctl"), "-D", str(self.dir / "data"), "-m", "fast", "-w", "stop"])

    def stop(self) -> None:
        data = self.dir / "data"
        if data.exists():
            self._run(
                [_binary("pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"], check=False
            )
        shutil.rmtree(self.dir, ignore_errors=True)

    def _run(self, cmd: list[str], check: bool = True) -> None:
        if os.geteuid() == 0:  # initdb refuses root: run as the postgres user
            user = pwd.getpwnam("postgres")
            os.chown(self.dir, user.pw_uid, user.pw_gid)
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        subprocess.run(cmd, check=check, capture_output=True, timeout=120)


def find_server() -> tuple[str | None, Throwaway | None]:
    """(a DSN that answers, the throwaway server behind it if one was started)."""
    return throwaway.find_server("ANTLER_TEST_PG_DSN", DEFAULT_DSN, answers, Throwaway)


def new_schema(dsn: str) -> tuple[str, str]:
    """A fresh schema on the server; (its name, a DSN whose search_path is that schema)."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    sep = "&" if "?" in dsn else "?"
    options = quote(f"-c search_path={name}")
    return name, f"{dsn}{sep}options={options}&application_name=antler-{name}"


def drop_schema(dsn: str, name: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


def _binary(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    for root in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (root / name).exists():
            return str(root / name)
    raise OSError(f"{name} not found")
