"""What the audit keeps of a tool call's arguments: secrets redacted (by key, by look, and every
configured secret), long strings cut, a hash of the whole."""

from __future__ import annotations

import hashlib
import json

from bot.access.audit import MAX_ARG_CHARS, REDACTED, digest
from bot.logs import RedactSecrets


def test_secret_keys_and_secret_looking_values_are_redacted() -> None:
    args = {
        "query": "deploy with sk-abcdefgh12345678 and xoxb-123456789-abcdef",
        "headers": {"Authorization": "Bearer abc.def.ghi", "X-Trace": "1"},
        "api_key": "plain",
        "items": ["ghp_abcdefghijklmnop1234", 3],
        "long": "x" * 500,
    }
    kept = digest(args)
    assert kept["args"]["query"] == f"deploy with {REDACTED} and {REDACTED}"
    assert kept["args"]["headers"] == {"Authorization": REDACTED, "X-Trace": "1"}
    assert kept["args"]["api_key"] == REDACTED
    assert kept["args"]["items"] == [REDACTED, 3]
    assert kept["args"]["long"] == "x" * MAX_ARG_CHARS + "…"
    whole = json.dumps(args, sort_keys=True, ensure_ascii=False)
    assert kept["sha256"] == hashlib.sha256(whole.encode()).hexdigest()[:16]


def test_configured_secrets_are_masked_wherever_they_appear() -> None:
    known = RedactSecrets(["hunter2-db-password"]).redact
    kept = digest({"command": "psql postgresql://app:hunter2-db-password@db/app"}, known)
    assert "hunter2" not in json.dumps(kept)
    assert kept["args"]["command"] == "psql postgresql://app:***@db/app"
