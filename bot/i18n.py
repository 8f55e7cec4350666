"""The language the service speaks: gettext catalogs read with Babel, and the current locale.

The service's own texts (bot/texts/, the command summaries of bot/commands.py) are written in
English, which is also each message's id; `bot/locales/<locale>/LC_MESSAGES/antler.po` holds the
translations of every other language (today `zh_CN`). A catalog is read once with Babel
(`read_po`, compiled in memory with `write_mo`) into a `babel.support.Translations`.

Which language a text comes out in is decided where it is used, not where it is written: the
current locale is a context variable, set where a message is handled (bot/locales.py picks it
per person, platform hint, channel and service default), so every task that handles the message
inherits it. `texts.STOPPED` and `texts.stopped(2)` read it at that moment.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from functools import cache, lru_cache
from pathlib import Path

from babel import Locale, UnknownLocaleError
from babel.dates import format_datetime as babel_datetime
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import NullTranslations, Translations

DOMAIN = "antler"
LOCALES_DIR = Path(__file__).parent / "locales"
SOURCE = "en"
"""The language the message ids are written in."""

_current: ContextVar[str] = ContextVar("antler_locale", default=SOURCE)


def catalog_path(locale: str) -> Path:
    return LOCALES_DIR / locale / "LC_MESSAGES" / f"{DOMAIN}.po"


@cache
def available() -> tuple[str, ...]:
    """The locales the service can speak: English and every catalog under bot/locales/."""
    found = sorted(p.parent.parent.name for p in LOCALES_DIR.glob(f"*/LC_MESSAGES/{DOMAIN}.po"))
    return (SOURCE, *found)


def supported(tag: str | None) -> str | None:
    """The locale of ours a language tag asks for (`zh-CN`, `zh_Hans`, `zh` → `zh_CN`;
    `en-GB` → `en`), or None when the tag is not a locale or we have no catalog in its language.
    A territory or script of ours is preferred; otherwise the first of the same language."""
    if not tag or not tag.strip():
        return None
    return _supported(tag)


@lru_cache(maxsize=512)
def _supported(tag: str) -> str | None:
    """`supported` once per tag (Babel's parse runs per message otherwise: tags are few)."""
    try:
        asked = Locale.parse(tag.strip().replace("-", "_"))
    except (ValueError, TypeError, UnknownLocaleError):
        return None
    same = [name for name in available() if Locale.parse(name).language == asked.language]
    exact = [n for n in same if Locale.parse(n).territory == asked.territory]
    found = exact or same
    return found[0] if found else None


@cache
def translations(locale: str) -> NullTranslations:
    """The catalog of `locale`, read once with Babel; the source language needs none."""
    if locale == SOURCE or locale not in available():
        return NullTranslations()
    with catalog_path(locale).open("rb") as po:
        catalog = read_po(po, locale=locale, domain=DOMAIN)
    compiled = io.BytesIO()
    write_mo(compiled, catalog, use_fuzzy=False)
    compiled.seek(0)
    return Translations(compiled, domain=DOMAIN)


def current() -> str:
    return _current.get()


def set_current(locale: str) -> None:
    """Speak `locale` in this task from now on (and in the tasks it starts)."""
    _current.set(locale if locale in available() else SOURCE)


@contextmanager
def use(locale: str) -> Iterator[None]:
    """Speak `locale` inside the block (and in tasks started inside it)."""
    token = _current.set(locale if locale in available() else SOURCE)
    try:
        yield
    finally:
        _current.reset(token)


def gettext(msgid: str) -> str:
    """`msgid` in the current locale (itself when the catalog lacks it)."""
    return translations(_current.get()).gettext(msgid)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural text for `n` in the current locale."""
    return translations(_current.get()).ngettext(singular, plural, n)


def text(msgid: str, /, **values: object) -> str:
    """`msgid` in the current locale with its `{placeholders}` filled in."""
    found = gettext(msgid)
    return found.format(**values) if values else found


def N_(msgid: str) -> str:
    """Marks a constant's text for extraction; it is translated when read (bot/texts/)."""
    return msgid


def when(moment: datetime) -> str:
    """A date and time as people of the current locale write it (Babel's CLDR data): the
    pattern is itself a message, so each catalog chooses its own."""
    pattern = gettext("EEE yyyy-MM-dd HH:mm")
    return babel_datetime(moment, pattern, tzinfo=moment.tzinfo, locale=current())


def primary(locale: str) -> str:
    """The language alone (`zh` of `zh_CN`): what Telegram's `language_code` takes."""
    return locale.split("_", 1)[0]


def tag(locale: str) -> str:
    """`zh_CN` as a language tag (`zh-CN`), the way platforms and people write it."""
    return locale.replace("_", "-")


def name_of(locale: str) -> str:
    """A language's own name in that language (`English`, `中文`), from Babel's CLDR data."""
    return Locale.parse(locale).get_language_name(locale) or locale
