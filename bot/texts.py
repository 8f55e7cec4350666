"""Every text the service itself shows users: notices, refusals, failures. Plain words, no jargon.

Channels keep only their platform's labels (card titles, button captions); anything a person reads
as an answer from the service comes from here, so wording is reviewed and changed in one place.
"""

from __future__ import annotations

# ------------------------------------------------------------------ admission and load


def greeting(bot_name: str) -> str:
    """The one `/start` greeting (the registry adds the command list)."""
    return f"Hi! I'm {bot_name}, an AI agent. Send me a message to get going."


BUSY = "I'm handling too many messages right now; please send that again in a minute."

# ------------------------------------------------------------------ stopped or interrupted runs

STOPPED = "Stopped."
INTERRUPTED_BY_NEWER = "Interrupted by a newer message."
STOPPED_FOR_EDIT = "Stopped: the message was edited."
EDIT_ANSWERED = "Answer to the edited message."
RESTARTING = "The service is restarting; this message will be answered again."
CHANNEL_RESTARTED = "The connection to this chat was renewed mid-answer; answering again…"
CHANNEL_SWITCHED_OFF = (
    "This chat's channel was switched off mid-answer; it will be answered when it is back."
)

# ------------------------------------------------------------------ answers

NO_ANSWER = "(no answer)"
CHOICE_EXPIRED = "This button has expired; please ask again."


def file_not_read(name: str, reason: object) -> str:
    return f"{name} was not read: {reason}."


def audio_not_heard(name: str, max_seconds: float | None = None) -> str:
    if max_seconds is not None:  # too long to transcribe
        return f"{name} was not transcribed: it is longer than {max_seconds / 60:g} minutes."
    return f"{name} could not be transcribed; please send it again or type it."


def heard(transcript: str) -> str:  # shown back above the answer (bot/speech.py shortens it)
    return f"🎤 _{transcript}_"


def file_not_downloaded(name: str, reason: object) -> str:
    return f"{name} could not be downloaded: {reason}."


def file_not_sent(name: str, reason: object) -> str:
    return f"Could not send {name}: {reason}"


def command_failed(name: str) -> str:
    return f"/{name} failed; please try again."


# ------------------------------------------------------------------ delivery journal

ANSWERING_AGAIN = "Interrupted by a restart; answering again…"
TURN_FAILED = (
    "Sorry, I could not answer this message: it failed twice. "
    "Please send it again, perhaps in other words."
)


def queued_behind(ahead: int) -> str:
    if ahead <= 1:
        return "⏳ Queued: I'll answer as soon as a slot is free."
    return f"⏳ Queued: {ahead} messages ahead of yours; I'll answer as soon as I can."


# ------------------------------------------------------------------ schedules (bot/schedules)

SCHEDULE_USAGE = (
    "Usage: /schedule WHEN TASK, e.g. /schedule every weekday 09:00 summarise the tracker, "
    '/schedule in 2h remind me to call Ann, /schedule cron "0 9 * * 1-5" post the standup.\n'
    "Also: /schedule list, /schedule cancel N, /schedule pause N, /schedule resume N. "
    "Options after the time: --fresh (a new thread each run), --skip-missed."
)
SCHEDULES_DISABLED = "Scheduled tasks are switched off on this service."
NO_SCHEDULES = "No scheduled tasks in this chat. /schedule WHEN TASK creates one."
SCHEDULE_FROM_UNKNOWN_CHAT = "I can only schedule tasks from a conversation I'm answering in."


def schedule_created(number: int, label: str, next_run: str, missed: str, fresh: bool) -> str:
    thread = "a new thread each run" if fresh else "this conversation's thread"
    policy = "run once when I'm back" if missed == "run_once" else "skipped"
    return (
        f"Scheduled #{number}: {label}. Next run: {next_run}. It runs in {thread}; "
        f"runs missed while I'm offline are {policy}. /schedule cancel {number} removes it."
    )


def schedule_line(
    number: int, label: str, prompt: str, next_run: str, state: str, reason: str
) -> str:
    when = f"next {next_run}" if state == "active" else f"paused{f' ({reason})' if reason else ''}"
    short = prompt if len(prompt) <= 60 else prompt[:57] + "…"
    return f"#{number} {label} — {when} — {short}"


def schedule_limit(scope: str, limit: int) -> str:
    has = "have" if scope == "you" else "has"
    return (
        f"You can't add more: {scope} {has} {limit} scheduled tasks, the most allowed. "
        "Cancel one first (/schedule list shows them)."
    )


def schedule_not_here(number: str) -> str:
    return f"There is no scheduled task #{number} in this chat; /schedule list shows them."


def schedule_not_yours(number: int) -> str:
    return f"Only the person who created #{number} or an admin of this service can change it."


def schedule_changed(number: int, action: str) -> str:
    return f"Scheduled task #{number} {action}."


def schedule_next(number: int, label: str, next_run: str) -> str:
    return f"Next scheduled run: #{number} {label}, {next_run}"


def schedule_context(number: int, label: str, due: str, late: bool) -> str:
    lateness = " It is running late: the service was offline at that time." if late else ""
    return (
        f"This is scheduled task #{number} ({label}), due {due}, set up earlier in this chat. "
        f"Do the task now and post the result.{lateness}"
    )


def schedule_ran_late(number: int, due: str) -> str:
    return (
        f"⏰ Scheduled task #{number} was due {due} while I was offline; "
        "running it now (its missed-run policy: run once)."
    )


def schedule_skipped(number: int, due: str, next_run: str | None) -> str:
    after = f" Next run: {next_run}." if next_run else ""
    return (
        f"⏰ Scheduled task #{number} was due {due} while I was offline and was skipped "
        f"(its missed-run policy: skip).{after}"
    )


def schedule_paused_gone(reason: str) -> str:
    return f"paused: the chat could not be reached ({reason})"


def timezone_is(tz: str) -> str:
    return f"Time zone for scheduled tasks here: {tz}. /timezone Europe/Berlin changes it."


def timezone_set(tz: str) -> str:
    return f"Time zone set to {tz}. New scheduled tasks here use it."


def timezone_unknown(name: str) -> str:
    return (
        f"{name!r} is not a time zone I know. Use a name like Europe/Berlin, "
        "America/New_York or UTC."
    )


# ------------------------------------------------------------ access and bad input (hardening)

NOT_ALLOWED = "Sorry, you are not allowed to use this bot here. Ask an admin to add you."


def cannot_read(what: str) -> str:
    return (
        f"I can't read {what}. Send me text, a photo or a file (documents, images, audio) "
        "and I'll answer."
    )


# ------------------------------------------------------------------ command scope and /models
# In chats whose top-level messages start their own threads (Slack channels, Feishu groups in
# per-topic mode) commands sent in the main chat act on the chat (docs/channels/README.md).

NEW_STARTED = "New conversation started."
MEMORY_FORGET_USAGE = "Usage: /memory forget N (N is a number from /memory)."
MEMORY_USAGE = "Usage: /memory, /memory forget N or /memory clear."
NEW_IN_MAIN_CHAT = (
    "Here every message you send to me starts a conversation of its own, so there is nothing "
    "to reset. To start over inside a thread, send /new in that thread."
)
NOTHING_RUNNING = "Nothing is running."
NOTHING_RUNNING_IN_CHAT = "None of your replies is being written in this chat."
STOP_ALL = "Stop all"


def stopped(count: int) -> str:
    return "Stopped the running reply." if count == 1 else f"Stopped {count} running replies."


def choose_reply_to_stop(count: int) -> str:
    return f"{count} of your replies are being written in this chat. Which one should I stop?"


def stop_label(text: str) -> str:
    words = " ".join(text.split())
    return "Stop: " + (words[:40] + "…" if len(words) > 40 else words or "(a file)")


def model_list(current_label: str, *, chat_default: bool) -> str:
    where = "new conversations in this chat" if chat_default else "this conversation"
    return f"Models for {where} (current: **{current_label}**):"


def unknown_model(name: str) -> str:
    return f"Unknown model `{name}`. Choose one of:"


def model_line(name: str, label: str, current: bool) -> str:
    return f"- `{name}` — {label}" + (" ✓" if current else "")


def model_switched(label: str) -> str:
    return f"Model for this conversation: {label}."


def chat_default_model(label: str, running: int) -> str:
    text = f"New conversations in this chat will use {label}."
    if running:
        text += (
            f" Your {running} running {'reply keeps' if running == 1 else 'replies keep'}"
            " the model it started with."
        )
    return text + " To switch a conversation already started, send /models in its thread."


# ---------------------------------------------------------------- /agent (agent profiles)


def agent_list(current_label: str, *, chat_default: bool) -> str:
    where = "new conversations in this chat" if chat_default else "this conversation"
    return f"Agents for {where} (current: **{current_label}**):"


def unknown_agent(name: str) -> str:
    return f"Unknown agent `{name}`. Choose one of:"


def agent_line(name: str, label: str, description: str, current: bool) -> str:
    about = f": {description}" if description else ""
    return f"- `{name}` — {label}{about}" + (" ✓" if current else "")


def agent_switched(label: str) -> str:
    return f"Agent for this conversation: {label}. It keeps the conversation so far."


def chat_default_agent(label: str, running: int) -> str:
    text = f"New conversations in this chat will talk to {label}."
    if running:
        text += (
            f" Your {running} running {'reply keeps' if running == 1 else 'replies keep'}"
            " the agent it started with."
        )
    return text + " To switch a conversation already started, send /agent in its thread."


def agent_denied(name: str, role: str) -> str:
    return f"The agent {name} is not available to you here (your role: {role}); /agent lists yours."


# ---------------------------------------------------------------- roles and /link (bot/access/)


def command_denied(key: str, role: str, roles: list[str]) -> str:
    """One line: the command is not in the sender's grant; which roles may use it."""
    who = " or ".join(roles) if roles else "no role"
    return f"{key} is not available to you here (your role: {role}); it needs {who}."


def skill_denied(name: str, role: str) -> str:
    return f"The skill /{name} is not available to you here (your role: {role})."


def model_denied(name: str, role: str) -> str:
    return (
        f"The model {name} is not available to you here (your role: {role}); /models lists yours."
    )


LINK_DISABLED = (
    "Linking accounts is not available on this service (it needs long-term memory, which is off)."
)
LINK_ONLY_IN_DM = "Send /link to me in a direct message: the code it gives is private."
LINK_USAGE = (
    "Usage: /link in a direct message gives a code; send /link CODE from your other account."
)
LINK_WRONG_CODE = (
    "That code is wrong or expired. Send /link in a DM on your other account for a new one."
)
UNLINK_NOT_LINKED = "This account is not linked to another one."
UNLINK_IS_ANCHOR = (
    "The other accounts are linked to this one: send /unlink from each of them instead."
)


def link_code(code: str, minutes: int) -> str:
    return (
        f"Your link code: {code}\nSend /link {code} from your other account (Slack, Telegram, "
        f"Feishu or DingTalk) within {minutes} minutes; it works once."
    )


def linked(person: str) -> str:
    return f"Linked: this account is now {person}, with the same memory and role."


def link_locked(minutes: int) -> str:
    return f"Too many wrong codes: /link is locked for this account for {minutes} minutes."


UNLINKED = "Unlinked: this account is on its own again, with its own memory and role."

# ------------------------------------------------------------------ usage and budgets


def amount(value: float, unit: str) -> str:
    """A budget's amount: `12,000 tokens` or `2.50 USD`."""
    return f"{value:,.0f} tokens" if unit == "tokens" else f"{value:,.2f} {unit}"


def budget_whose(scope: str, name: str) -> str:
    return {
        "person": "your",
        "role": f"your role's ({name})",
        "chat": "this chat's",
        "channel": f"the {name} channel's",
    }.get(scope, "your")


def budget_warning(whose: str, period: str, percent: int, left: str) -> str:
    return f"Heads-up: {percent}% of {whose} {_periodly(period)} budget is used ({left} left)."


def budget_refused(whose: str, period: str, limit: str, resets: str) -> str:
    return (
        f"{whose.capitalize()} {_periodly(period)} budget of {limit} is used up. "
        f"It resets {resets}. An admin can raise it (usage.budgets in config.yaml)."
    )


def budget_fallback(whose: str, period: str, model: str, resets: str) -> str:
    return (
        f"{whose.capitalize()} {_periodly(period)} budget is used up; answering with {model} "
        f"until it resets {resets}."
    )


def _periodly(period: str) -> str:
    return "daily" if period == "day" else "monthly"


def usage_footer(tokens: int, prompt: int, completion: int, cost: str, estimated: bool) -> str:
    """Under an answer: `1,234 tokens (1,000 in, 234 out)`, `~` when estimated, `· cost`."""
    mark = "~" if estimated else ""
    line = f"{mark}{tokens:,} tokens ({prompt:,} in, {completion:,} out)"
    return f"{line} · {cost}" if cost else line


def usage_line(label: str, tokens: int, calls: int, cost: str, estimated: int) -> str:
    note = f", {estimated} estimated" if estimated else ""
    return f"{label}: {tokens:,} tokens in {calls} calls{note} · {cost}"


def usage_report(whose: str, lines: list[str]) -> str:
    return f"Usage of {whose}:\n" + "\n".join(lines)


USAGE_HELP = "/usage shows your usage today and this month (in a group, the chat's)."
USAGE_OTHERS_ADMIN_ONLY = "Only an admin can see another person's usage."
USAGE_NOT_COUNTED = "Usage is not counted here."

# approvals (bot/approvals.py) ---------------------------------------------------------------

APPROVE = "Approve"
APPROVE_CONVERSATION = "Approve for this conversation"
DENY = "Deny"
APPROVAL_UNKNOWN = "This approval request is no longer known."


def approval_card(calls: list[str], asker: str, approvers: str, expires: str) -> str:
    """The card: what waits, who asked, who may answer, until when."""
    shown = "\n".join(f"• {c}" for c in calls)
    return (
        f"⏸ Approval needed before running:\n{shown}\n"
        f"Asked by {asker}. {approvers} may approve, until {expires}."
    )


def approvers_line(roles: list[str], dm: bool) -> str:
    if roles:
        return ("The roles " if len(roles) > 1 else "The role ") + ", ".join(roles)
    return "You or an approver" if dm else "An approver"


def approval_typed(code: str) -> str:
    """Where buttons cannot be shown: what to send instead."""
    return f"Send {code}:a to approve or {code}:d to deny."


def approval_not_yours(approvers: str) -> str:
    return f"You cannot answer this approval request. {approvers} may."


def approval_decided(decision: str, by: str) -> str:
    if decision in ("approve", "approve_conversation"):
        scope = " for this conversation" if decision == "approve_conversation" else ""
        return f"✅ Approved{scope} by {by}."
    if decision == "expired":
        return "⌛ The approval request expired: not run."
    return f"🚫 Denied by {by}: not run."


def approval_already(decision: str) -> str:
    return "This request was already answered: " + {
        "approve": "approved.",
        "approve_conversation": "approved.",
        "deny": "denied.",
        "expired": "it expired.",
    }.get(decision, "answered.")
