"""The stores' schema, written once: column lists with dialect types, and the migration rule.

A store's table is written once in its package (`JOURNAL_COLUMNS` in bot/stores/journal/, ...)
with `$real`, `$bool`, `$false`, `$bigint` and `$id` where the dialects spell a type their own
way; `columns(text, dialect)` renders it. The SQLite file's migrations (bot/db.py) and each
store's PostgreSQL migrations (`MIGRATIONS` in its postgres.py) wrap the columns in their own
`CREATE TABLE` and indexes. The texts rendered are the migrations as they always were: a
database keeps its version and is not migrated again.

The migration rule is also once here (`pending`): the scripts a database at `version` has not
seen, numbered, split into statements, applied in order; how the version is read and recorded
and what lock is held is the backend's (`PRAGMA user_version` under BEGIN IMMEDIATE in
bot/db.py; `antler_migrations` under an advisory lock in bot/stores/pg.py).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from string import Template


@dataclass(frozen=True)
class Dialect:
    real: str
    bool: str
    false: str
    bigint: str
    id: str  # an id the database numbers


SQLITE = Dialect(
    real="REAL", bool="INTEGER", false="0", bigint="INTEGER", id="INTEGER PRIMARY KEY AUTOINCREMENT"
)
POSTGRES = Dialect(
    real="DOUBLE PRECISION",
    bool="BOOLEAN",
    false="false",
    bigint="BIGINT",
    id="BIGSERIAL PRIMARY KEY",
)


def columns(text: str, dialect: Dialect) -> str:
    """`text` (a column list) with the dialect's types."""
    return Template(text).substitute(asdict(dialect))


def statements(script: str) -> list[str]:
    """The statements of a migration script, in order (a last one may lack its `;`)."""
    found, current = [], ""
    for line in script.splitlines(keepends=True):
        current += line
        if sqlite3.complete_statement(current):
            found.append(current.strip().removesuffix(";").strip())
            current = ""
    found.append(current.strip().removesuffix(";").strip())
    return [s for s in found if s]


def pending(migrations: Sequence[str], version: int) -> list[tuple[int, list[str]]]:
    """The migrations a database at `version` has not seen: (number, statements), in order."""
    return [
        (number, statements(script))
        for number, script in enumerate(migrations[version:], start=version + 1)
    ]
