"""The service's own words: admission, stops, answers, reply states, /help and /lang, bad
input, command scope and /models (bot/texts/__init__.py says how to add one)."""

from __future__ import annotations

from functools import cache

from bot.i18n import N_, current
from bot.i18n import text as _
from channels.base import StatusLabels

# ------------------------------------------------------------------ admission and load


def greeting(bot_name: str) -> str:
    """The one `/start` greeting (the registry adds the command list)."""
    return _("Hi! I'm {bot_name}, an AI agent. Send me a message to get going.", bot_name=bot_name)


BUSY = N_("I'm handling too many messages right now; please send that again in a minute.")

# ------------------------------------------------------------------ stopped or interrupted runs

STOPPED = N_("Stopped.")
INTERRUPTED_BY_NEWER = N_("Interrupted by a newer message.")
STOPPED_FOR_EDIT = N_("Stopped: the message was edited.")
EDIT_ANSWERED = N_("Answer to the edited message.")
RESTARTING = N_("The service is restarting; this message will be answered again.")
CHANNEL_RESTARTED = N_("The connection to this chat was renewed mid-answer; answering again…")
CHANNEL_SWITCHED_OFF = N_(
    "This chat's channel was switched off mid-answer; it will be answered when it is back."
)

# ------------------------------------------------------------------ answers

NO_ANSWER = N_("(no answer)")
CHOICE_EXPIRED = N_("This button has expired; please ask again.")


def file_not_read(name: str, reason: object) -> str:
    return _("{name} was not read: {reason}.", name=name, reason=reason)


def audio_not_heard(name: str, max_seconds: float | None = None) -> str:
    if max_seconds is not None:  # too long to transcribe
        return _(
            "{name} was not transcribed: it is longer than {minutes} minutes.",
            name=name,
            minutes=f"{max_seconds / 60:g}",
        )
    return _("{name} could not be transcribed; please send it again or type it.", name=name)


def heard(transcript: str) -> str:  # shown back above the answer (bot/speech.py shortens it)
    return _("🎤 _{transcript}_", transcript=transcript)


def file_not_downloaded(name: str, reason: object) -> str:
    return _("{name} could not be downloaded: {reason}.", name=name, reason=reason)


def file_not_sent(name: str, reason: object) -> str:
    return _("Could not send {name}: {reason}", name=name, reason=reason)


def command_failed(name: str) -> str:
    return _("/{name} failed; please try again.", name=name)


def labels() -> StatusLabels:
    """What a reply shows of its state, for the channels' cards and status lines."""
    return _labels(current())


@cache
def _labels(locale: str) -> StatusLabels:
    """`labels` in `locale`, made once (the catalogs are read once; a reply asks per turn)."""
    return StatusLabels(
        queued=_("Queued"),
        queued_line=_("Queued: I'll answer after the current reply."),
        working=_("Thinking…"),
        working_line=_("Working on it…"),
        done=_("Done"),
        failed=_("Failed"),
        failed_line=_("Something went wrong."),
        stopped=_("Stopped"),
        stopped_line=_("Stopped."),
        part=_("part {number}"),
        thinking_status=_("is thinking..."),
        running_status=_("is running {tool}..."),
    )


# ------------------------------------------------------------------ /help

HELP_COMMANDS = N_("Commands:")
HELP_SKILLS = N_("Skills:")
HELP_ELSE = N_("Anything else is a message to the agent.")
SKILL_SUMMARY = N_("run this skill")


# ------------------------------------------------------------------ delivery journal

ANSWERING_AGAIN = N_("Interrupted by a restart; answering again…")
TURN_FAILED = N_(
    "Sorry, I could not answer this message: it failed twice. "
    "Please send it again, perhaps in other words."
)


def queued_behind(ahead: int) -> str:
    if ahead <= 1:
        return _("⏳ Queued: I'll answer as soon as a slot is free.")
    return _(
        "⏳ Queued: {ahead} messages ahead of yours; I'll answer as soon as I can.", ahead=ahead
    )


# ------------------------------------------------------------ access and bad input (hardening)

NOT_ALLOWED = N_("Sorry, you are not allowed to use this bot here. Ask an admin to add you.")


def cannot_read(what: str) -> str:
    return _(
        "I can't read {what}. Send me text, a photo or a file (documents, images, audio) "
        "and I'll answer.",
        what=what,
    )


# ------------------------------------------------------------------ command scope and /models
# In chats whose top-level messages start their own threads (Slack channels, Feishu groups in
# per-topic mode) commands sent in the main chat act on the chat (docs/channels/README.md).

NEW_STARTED = N_("New conversation started.")
MEMORY_FORGET_USAGE = N_("Usage: /memory forget N (N is a number from /memory).")
MEMORY_USAGE = N_("Usage: /memory, /memory forget N or /memory clear.")
NEW_IN_MAIN_CHAT = N_(
    "Here every message you send to me starts a conversation of its own, so there is nothing "
    "to reset. To start over inside a thread, send /new in that thread."
)
NOTHING_RUNNING = N_("Nothing is running.")
NOTHING_RUNNING_IN_CHAT = N_("None of your replies is being written in this chat.")
STOP_ALL = N_("Stop all")


def stopped(count: int) -> str:
    if count == 1:
        return _("Stopped the running reply.")
    return _("Stopped {count} running replies.", count=count)


def choose_reply_to_stop(count: int) -> str:
    return _(
        "{count} of your replies are being written in this chat. Which one should I stop?",
        count=count,
    )


def stop_label(text: str) -> str:
    words = " ".join(text.split())
    shown = words[:40] + "…" if len(words) > 40 else words or _("(a file)")
    return _("Stop: {text}", text=shown)


def model_list(current_label: str, *, chat_default: bool) -> str:
    if chat_default:
        return _(
            "Models for new conversations in this chat (current: **{current}**):",
            current=current_label,
        )
    return _("Models for this conversation (current: **{current}**):", current=current_label)


def unknown_model(name: str) -> str:
    return _("Unknown model `{name}`. Choose one of:", name=name)


def model_line(name: str, label: str, current: bool) -> str:
    return f"- `{name}` — {label}" + (" ✓" if current else "")


def model_switched(label: str) -> str:
    return _("Model for this conversation: {label}.", label=label)


def chat_default_model(label: str, running: int) -> str:
    parts = [_("New conversations in this chat will use {label}.", label=label)]
    if running == 1:
        parts.append(_("Your running reply keeps the model it started with."))
    elif running:
        parts.append(
            _("Your {running} running replies keep the model they started with.", running=running)
        )
    parts.append(_("To switch a conversation already started, send /models in its thread."))
    return " ".join(parts)
