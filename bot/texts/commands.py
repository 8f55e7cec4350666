"""Command answers: /status, /memory, /plan and /think, /lang (bot/commands.py)."""

from __future__ import annotations

from bot.i18n import N_
from bot.i18n import text as _


def status_lines(
    thread: str,
    title: str,
    agent: str,
    model: str,
    thinking: bool,
    plan: bool,
    running: str,
    queued: int,
) -> list[str]:
    """/status: the conversation's thread, title, agent, model, switches and activity."""
    return [
        _("Thread: {thread}", thread=thread),
        _("Title: {title}", title=title or _("(none yet)")),
        _("Agent: {agent}", agent=agent),
        _("Model: {model}", model=model),
        _("Thinking: {thinking} · Plan mode: {plan}", thinking=on_off(thinking), plan=on_off(plan)),
        _("Reply running: {running} · Queued messages: {queued}", running=running, queued=queued),
    ]


def yes_no(flag: bool) -> str:
    return _("yes") if flag else _("no")


def on_off(flag: bool) -> str:
    return _("on") if flag else _("off")


# ------------------------------------------------------------------ /memory

MEMORY_OFF = N_(
    "Long-term memory is not enabled on this service, so nothing is remembered about you "
    "between conversations."
)
MEMORY_PRIVATE = N_("What I remember about you is private: send /memory to me in a direct message.")
MEMORY_EMPTY = N_("I don't remember anything about you yet.")
MEMORY_HEADING = N_("What I remember about you:")
MEMORY_FACTS = N_("Facts:")
MEMORY_HOWTO = N_("/memory forget N removes one fact; /memory clear forgets everything.")
_CONTEXTS = {"work": N_("Work"), "personal": N_("Personal"), "top_of_mind": N_("Current focus")}


def memory_context(kind: str, value: str) -> str:
    return _("{kind}: {value}", kind=_(_CONTEXTS.get(kind, kind)), value=value)


def memory_cleared(removed: int) -> str:
    return _("Done: I forgot everything I remembered about you ({removed} facts).", removed=removed)


def memory_no_fact(number: str) -> str:
    return _("There is no fact number {number}; /memory lists them.", number=number)


def memory_forgotten(fact: str) -> str:
    return _("Forgotten: {fact}", fact=fact)


# ------------------------------------------------------------------ /plan and /think

_SWITCHES = {"plan_mode": N_("Plan mode"), "thinking": N_("Thinking")}


def switch_is(switch: str, on: bool) -> str:
    """`/plan` or `/think` without on|off: the conversation's setting."""
    return _(
        "{label} is {state} for this conversation. Use on or off.",
        label=_(_SWITCHES[switch]),
        state=on_off(on),
    )


def switched(switch: str, on: bool) -> str:
    return _("{label} {state} for this conversation.", label=_(_SWITCHES[switch]), state=on_off(on))


def no_thinking(reply: str, model: str) -> str:
    return _(
        "{reply} ({model} does not support thinking; it applies when you switch to a model "
        "that does.)",
        reply=reply,
        model=model,
    )


# ------------------------------------------------------------------ /lang

LANG_USAGE = N_("Usage: /lang en or /lang zh (/lang auto follows your app's language).")


def lang_is(language: str) -> str:
    return _("Language: {language}. /lang en or /lang zh changes it.", language=language)


def lang_set(language: str) -> str:
    return _("From now on I answer you in {language}.", language=language)
