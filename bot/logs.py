"""Logging for the `antler` command: one root handler, one redaction filter, one level setting.

Every configured secret (bot tokens, app secrets, signing secrets, API keys, the admin token, a
generated webhook secret) is collected from the settings tree and masked in every record that
reaches the root handler — message, arguments and traceback — whichever logger wrote it. SDKs
that bring their own handler (lark-oapi prints to stdout) are routed through the root handler
instead, so nothing bypasses the filter.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel, SecretStr

from channels.base import ChannelConfig

MASK = "***"
MIN_SECRET_LEN = 4
"""Shorter values are not masked: replacing every "abc" would garble the log, not protect it."""
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
SDK_LOGGERS_WITH_OWN_HANDLERS = ("Lark",)
LEVELS = ("debug", "info", "warning", "error")


class RedactSecrets(logging.Filter):
    """Masks each secret (and its URL-encoded form) in the formatted message and traceback."""

    def __init__(self, secrets: Iterable[str] = (), *, tracebacks: bool = True) -> None:
        super().__init__()
        self.secrets: list[str] = []
        self.tracebacks = tracebacks
        self.add(secrets)

    def add(self, secrets: Iterable[str]) -> None:
        found = set(self.secrets)
        for secret in secrets:
            if len(secret) >= MIN_SECRET_LEN:
                found.update({secret, quote(secret, safe="")})
        self.secrets = sorted(found, key=len, reverse=True)  # longest first: no partial leftovers

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: keep the raw text
            message = str(record.msg)
        record.msg, record.args = self.redact(message), None
        if not self.tracebacks:  # the terminal chat: one line per problem
            record.exc_info, record.exc_text, record.stack_info = None, None, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True


def secrets_of(value: Any) -> list[str]:
    """Every SecretStr value in a settings tree (models, lists, dicts)."""
    found: list[str] = []
    if isinstance(value, SecretStr):
        found.append(value.get_secret_value())
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            found += secrets_of(getattr(value, name, None))
        for extra in (value.model_extra or {}).values():
            found += secrets_of(extra)
        if isinstance(value, ChannelConfig):  # its named bots' own credentials (`bots:`)
            found += secrets_of(list(value.bot_configs().values()))
    elif isinstance(value, dict):
        for item in value.values():
            found += secrets_of(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            found += secrets_of(item)
    return [s for s in found if s]


def setup_logging(
    level: str | int, secrets: Iterable[str] = (), *, tracebacks: bool = True
) -> RedactSecrets:
    """Install the one root handler with the redaction filter; returns the filter."""
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(FORMAT))
    redact = RedactSecrets(secrets, tracebacks=tracebacks)
    handler.addFilter(redact)
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level)
    route_sdk_loggers()
    return redact


def route_sdk_loggers() -> None:
    """Send SDK loggers that print on their own through the root handler (call again once the
    SDKs are imported). They stay at WARNING unless the service runs at DEBUG."""
    debug = logging.getLogger().level <= logging.DEBUG
    for name in SDK_LOGGERS_WITH_OWN_HANDLERS:
        sdk = logging.getLogger(name)
        for own in list(sdk.handlers):
            sdk.removeHandler(own)
        sdk.setLevel(logging.NOTSET if debug else logging.WARNING)
        sdk.propagate = True
