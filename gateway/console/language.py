"""The console's language: the `lang` cookie (set by the "en / 中文" switch in the header), else
the browser's Accept-Language, else English. The texts come from the service's one gettext
catalog (bot/i18n.py): the pages' Python through `bot.i18n.text`, the templates through
jinja2's i18n extension (gateway/console/web.py installs the same catalog's gettext)."""

from __future__ import annotations

from aiohttp import web

from bot import i18n

COOKIE = "lang"
PATH = "/console"
SWITCH = "/console/lang"
YEAR = 365 * 24 * 3600


def accepted(header: str) -> str | None:
    """The first language of ours an Accept-Language header asks for, by its q weights
    (`fr;q=0.9, zh-CN;q=0.8, en;q=0.1` → zh_CN); None when it asks for none of ours."""
    asked: list[tuple[float, int, str]] = []
    for index, part in enumerate(header.split(",")):
        tag, _, params = part.strip().partition(";")
        weight = 1.0
        if params.strip().startswith("q="):
            try:
                weight = float(params.strip()[2:])
            except ValueError:
                weight = 0.0
        if tag and tag != "*" and weight > 0:
            asked.append((-weight, index, tag))
    for _weight, _index, tag in sorted(asked):
        found = i18n.supported(tag)
        if found is not None:
            return found
    return None


def locale_of(request: web.Request) -> str:
    """The language to show `request`'s pages in."""
    chosen = i18n.supported(request.cookies.get(COOKIE))
    return chosen or accepted(request.headers.get("Accept-Language", "")) or i18n.SOURCE


def choices() -> list[tuple[str, str]]:
    """The switch's entries: each language's tag and its own name (`en`, `English`)."""
    return [(i18n.tag(loc), short_name(loc)) for loc in i18n.available()]


def short_name(locale: str) -> str:
    """`en` for English (as the switch writes it), else the language's own name (`中文`)."""
    return i18n.primary(locale) if locale == i18n.SOURCE else i18n.name_of(locale)


def remember(response: web.StreamResponse, request: web.Request, locale: str) -> None:
    """The browser keeps the chosen language for a year, for the console's paths only."""
    response.set_cookie(
        COOKIE,
        i18n.tag(locale),
        path=PATH,
        httponly=True,
        samesite="Lax",
        secure=request.secure,
        max_age=YEAR,
    )
