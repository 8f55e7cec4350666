"""The access store's tables on PostgreSQL (the statements are bot/access/store.py's)."""

from __future__ import annotations

MIGRATIONS = (
    """
    CREATE TABLE antler_access_roles (
        person TEXT PRIMARY KEY,
        role TEXT NOT NULL,
        set_by TEXT NOT NULL,
        set_at DOUBLE PRECISION NOT NULL
    );
    CREATE TABLE antler_access_link_codes (
        code_hash TEXT PRIMARY KEY,
        account TEXT NOT NULL,
        expires_at DOUBLE PRECISION NOT NULL
    );
    CREATE TABLE antler_access_link_tries (
        account TEXT PRIMARY KEY,
        failures INTEGER NOT NULL,
        locked_until DOUBLE PRECISION NOT NULL
    );
    CREATE TABLE antler_access_audit (
        id BIGSERIAL PRIMARY KEY,
        at DOUBLE PRECISION NOT NULL,
        kind TEXT NOT NULL,
        actor TEXT NOT NULL,
        person TEXT NOT NULL,
        chat TEXT NOT NULL,
        subject TEXT NOT NULL,
        outcome TEXT NOT NULL,
        duration_ms DOUBLE PRECISION,
        detail TEXT NOT NULL
    );
    CREATE INDEX antler_access_audit_at ON antler_access_audit(at);
    CREATE INDEX antler_access_audit_person ON antler_access_audit(person, id);
    """,
    """
    CREATE TABLE antler_access_languages (
        person TEXT PRIMARY KEY,
        locale TEXT NOT NULL,
        set_at DOUBLE PRECISION NOT NULL
    );
    """,
)
