"""Every text the service itself shows users: notices, refusals, failures, command answers,
reply states. Plain words, no jargon. Read them as `texts.NAME` and `texts.name(...)`.

Channels keep only their platform's labels; what they show of the service's (status labels, card
headers, the expired-button answer) comes from here too, handed to them as plain strings.

The texts are English message ids of gettext catalogs (bot/i18n.py) and come out in the language
of the message being handled. Adding a text is one step in two files (docs/configuration.md,
"Languages"):

- in the module of its area (service, commands, schedules, people): a constant
  `NAME = N_("The text.")`, translated each time `texts.NAME` is read; or a function returning
  `_("Text with {name}.", name=name)`: named placeholders, never an f-string;
- its translation in bot/locales/zh_CN/LC_MESSAGES/antler.po (`msgid` the English, `msgstr` the
  Chinese). tests/bot/test_i18n.py names every id that lacks one or whose placeholders differ,
  and every string of these modules that is not marked for translation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.i18n import gettext
from bot.texts.agents import *  # noqa: F403
from bot.texts.commands import *  # noqa: F403
from bot.texts.people import *  # noqa: F403
from bot.texts.schedules import *  # noqa: F403
from bot.texts.service import *  # noqa: F403

# Every constant is a message id: `texts.NAME` is looked up in the current locale each time it
# is read (PEP 562's module `__getattr__`), so call sites read like plain constants.
_CONSTANTS = {k: v for k, v in globals().items() if k.isupper() and isinstance(v, str)}
for _name in _CONSTANTS:
    del globals()[_name]


def constants() -> dict[str, str]:
    """Every constant's name and message id."""
    return dict(_CONSTANTS)


if not TYPE_CHECKING:  # mypy still checks each name: the modules declare them

    def __getattr__(name: str) -> str:
        if name in _CONSTANTS:
            return gettext(_CONSTANTS[name])
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
