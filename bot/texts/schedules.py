"""Scheduled tasks (bot/schedules): their answers and notices."""

from __future__ import annotations

from bot.i18n import N_, gettext
from bot.i18n import text as _

# ------------------------------------------------------------------ schedules (bot/schedules)

SCHEDULE_USAGE = N_(
    "Usage: /schedule WHEN TASK, e.g. /schedule every weekday 09:00 summarise the tracker, "
    '/schedule in 2h remind me to call Ann, /schedule cron "0 9 * * 1-5" post the standup.\n'
    "Also: /schedule list, /schedule cancel N, /schedule pause N, /schedule resume N. "
    "Options after the time: --fresh (a new thread each run), --skip-missed."
)
SCHEDULES_DISABLED = N_("Scheduled tasks are switched off on this service.")
NO_SCHEDULES = N_("No scheduled tasks in this chat. /schedule WHEN TASK creates one.")
SCHEDULE_FROM_UNKNOWN_CHAT = N_("I can only schedule tasks from a conversation I'm answering in.")


def schedule_created(number: int, label: str, next_run: str, missed: str, fresh: bool) -> str:
    thread = _("a new thread each run") if fresh else _("this conversation's thread")
    policy = _("run once when I'm back") if missed == "run_once" else _("skipped")
    return _(
        "Scheduled #{number}: {label}. Next run: {next_run}. It runs in {thread}; "
        "runs missed while I'm offline are {policy}. /schedule cancel {number} removes it.",
        number=number,
        label=label,
        next_run=next_run,
        thread=thread,
        policy=policy,
    )


def schedule_line(
    number: int, label: str, prompt: str, next_run: str, state: str, reason: str
) -> str:
    if state == "active":
        when = _("next {next_run}", next_run=next_run)
    else:
        when = _("paused ({reason})", reason=reason) if reason else _("paused")
    short = prompt if len(prompt) <= 60 else prompt[:57] + "…"
    return f"#{number} {label} — {when} — {short}"


def schedule_limit(scope: str, limit: int) -> str:
    """`scope`: "you" or "chat"."""
    if scope == "you":
        return _(
            "You can't add more: you have {limit} scheduled tasks, the most allowed. "
            "Cancel one first (/schedule list shows them).",
            limit=limit,
        )
    return _(
        "You can't add more: {scope} has {limit} scheduled tasks, the most allowed. "
        "Cancel one first (/schedule list shows them).",
        scope=_("this chat"),
        limit=limit,
    )


def schedule_not_here(number: str) -> str:
    return _(
        "There is no scheduled task #{number} in this chat; /schedule list shows them.",
        number=number,
    )


def schedule_not_yours(number: int) -> str:
    return _(
        "Only the person who created #{number} or an admin of this service can change it.",
        number=number,
    )


_DONE = {"cancelled": N_("cancelled"), "paused": N_("paused"), "resumed": N_("resumed")}


def schedule_changed(number: int, action: str) -> str:
    done = gettext(_DONE[action]) if action in _DONE else action
    return _("Scheduled task #{number} {action}.", number=number, action=done)


def schedule_next(number: int, label: str, next_run: str) -> str:
    return _(
        "Next scheduled run: #{number} {label}, {next_run}",
        number=number,
        label=label,
        next_run=next_run,
    )


def schedule_ran_late(number: int, due: str) -> str:
    return _(
        "⏰ Scheduled task #{number} was due {due} while I was offline; "
        "running it now (its missed-run policy: run once).",
        number=number,
        due=due,
    )


def schedule_skipped(number: int, due: str, next_run: str | None) -> str:
    after = _(" Next run: {next_run}.", next_run=next_run) if next_run else ""
    return _(
        "⏰ Scheduled task #{number} was due {due} while I was offline and was skipped "
        "(its missed-run policy: skip).{after}",
        number=number,
        due=due,
        after=after,
    )


def schedule_paused_gone(reason: str) -> str:
    return _("paused: the chat could not be reached ({reason})", reason=reason)


def timezone_is(tz: str) -> str:
    return _("Time zone for scheduled tasks here: {tz}. /timezone Europe/Berlin changes it.", tz=tz)


def timezone_set(tz: str) -> str:
    return _("Time zone set to {tz}. New scheduled tasks here use it.", tz=tz)


def timezone_unknown(name: str) -> str:
    return _(
        "{name} is not a time zone I know. Use a name like Europe/Berlin, America/New_York or UTC.",
        name=repr(name),
    )


SCHEDULES_HEADING = N_("Scheduled tasks in this chat:")
SCHEDULE_EMPTY_TASK = N_("Not scheduled: the task is empty.")


def not_scheduled(reason: str) -> str:
    """`reason`: what the time parser could not read (its own words)."""
    return _("Not scheduled: {reason}", reason=reason)


def not_scheduled_rest(rest: str) -> str:
    return _("Not scheduled: I could not read {rest} as part of the time.", rest=repr(rest))


def schedule_button(action: str, number: int) -> str:
    """A button under /schedule list: `Pause #3`, `Resume #3`, `Cancel #3`."""
    if action == "pause":
        return _("Pause #{number}", number=number)
    if action == "resume":
        return _("Resume #{number}", number=number)
    return _("Cancel #{number}", number=number)
