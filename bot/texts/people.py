"""Roles, /link, usage and budgets, approvals: the governance layer's words."""

from __future__ import annotations

from bot.i18n import N_, gettext
from bot.i18n import text as _

# ---------------------------------------------------------------- roles and /link (bot/access/)


def command_denied(key: str, role: str, roles: list[str]) -> str:
    """One line: the command is not in the sender's grant; which roles may use it."""
    who = _(" or ").join(roles) if roles else _("no role")
    return _(
        "{key} is not available to you here (your role: {role}); it needs {who}.",
        key=key,
        role=role,
        who=who,
    )


def skill_denied(name: str, role: str) -> str:
    return _(
        "The skill /{name} is not available to you here (your role: {role}).", name=name, role=role
    )


def model_denied(name: str, role: str) -> str:
    return _(
        "The model {name} is not available to you here (your role: {role}); /models lists yours.",
        name=name,
        role=role,
    )


LINK_DISABLED = N_(
    "Linking accounts is not available on this service (it needs long-term memory, which is off)."
)
LINK_ONLY_IN_DM = N_("Send /link to me in a direct message: the code it gives is private.")
LINK_USAGE = N_(
    "Usage: /link in a direct message gives a code; send /link CODE from your other account."
)
LINK_WRONG_CODE = N_(
    "That code is wrong or expired. Send /link in a DM on your other account for a new one."
)
UNLINK_NOT_LINKED = N_("This account is not linked to another one.")
UNLINK_IS_ANCHOR = N_(
    "The other accounts are linked to this one: send /unlink from each of them instead."
)


def link_code(code: str, minutes: int) -> str:
    return _(
        "Your link code: {code}\nSend /link {code} from your other account (Slack, Telegram, "
        "Feishu or DingTalk) within {minutes} minutes; it works once.",
        code=code,
        minutes=minutes,
    )


def linked(person: str) -> str:
    return _("Linked: this account is now {person}, with the same memory and role.", person=person)


def link_locked(minutes: int) -> str:
    return _(
        "Too many wrong codes: /link is locked for this account for {minutes} minutes.",
        minutes=minutes,
    )


UNLINKED = N_("Unlinked: this account is on its own again, with its own memory and role.")

# ------------------------------------------------------------------ usage and budgets


def amount(value: float, unit: str) -> str:
    """A budget's amount: `12,000 tokens` or `2.50 USD`."""
    if unit == "tokens":
        return _("{value:,.0f} tokens", value=value)
    return f"{value:,.2f} {unit}"


def budget_whose(scope: str, name: str) -> str:
    if scope == "role":
        return _("your role's ({name})", name=name)
    if scope == "channel":
        return _("the {name} channel's", name=name)
    return _("this chat's") if scope == "chat" else _("your")


def budget_warning(whose: str, period: str, percent: int, left: str) -> str:
    return _(
        "Heads-up: {percent}% of {whose} {period} budget is used ({left} left).",
        percent=percent,
        whose=whose,
        period=_periodly(period),
        left=left,
    )


def budget_refused(whose: str, period: str, limit: str, resets: str) -> str:
    return _(
        "{whose} {period} budget of {limit} is used up. "
        "It resets {resets}. An admin can raise it (usage.budgets in config.yaml).",
        whose=_capital(whose),
        period=_periodly(period),
        limit=limit,
        resets=resets,
    )


def budget_fallback(whose: str, period: str, model: str, resets: str) -> str:
    return _(
        "{whose} {period} budget is used up; answering with {model} until it resets {resets}.",
        whose=_capital(whose),
        period=_periodly(period),
        model=model,
        resets=resets,
    )


def budget_resets(day: str, month: bool) -> str:
    """When a budget's period ends: `at 2026-11-27 00:00 UTC`, `on 2026-12-01 00:00 UTC`."""
    if month:
        return _("on {day} 00:00 UTC", day=day)
    return _("at {day} 00:00 UTC", day=day)


def _periodly(period: str) -> str:
    return _("daily") if period == "day" else _("monthly")


def _capital(words: str) -> str:
    return words[:1].upper() + words[1:]


def usage_footer(tokens: int, prompt: int, completion: int, cost: str, estimated: bool) -> str:
    """Under an answer: `1,234 tokens (1,000 in, 234 out)`, `~` when estimated, `· cost`."""
    line = _(
        "{tokens:,} tokens ({prompt:,} in, {completion:,} out)",
        tokens=tokens,
        prompt=prompt,
        completion=completion,
    )
    line = f"~{line}" if estimated else line
    return f"{line} · {cost}" if cost else line


def usage_line(label: str, tokens: int, calls: int, cost: str, estimated: int) -> str:
    note = _(", {estimated} estimated", estimated=estimated) if estimated else ""
    return _(
        "{label}: {tokens:,} tokens in {calls} calls{note} · {cost}",
        label=label,
        tokens=tokens,
        calls=calls,
        note=note,
        cost=cost,
    )


def usage_report(whose: str, lines: list[str]) -> str:
    return _("Usage of {whose}:", whose=whose) + "\n" + "\n".join(lines)


USAGE_HELP = N_("/usage shows your usage today and this month (in a group, the chat's).")
USAGE_OTHERS_ADMIN_ONLY = N_("Only an admin can see another person's usage.")
USAGE_NOT_COUNTED = N_("Usage is not counted here.")

# approvals (bot/approvals.py) ---------------------------------------------------------------

APPROVE = N_("Approve")
APPROVE_CONVERSATION = N_("Approve for this conversation")
DENY = N_("Deny")
APPROVAL_UNKNOWN = N_("This approval request is no longer known.")


def approval_card(calls: list[str], asker: str, approvers: str, expires: str) -> str:
    """The card: what waits, who asked, who may answer, until when."""
    shown = "\n".join(f"• {c}" for c in calls)
    return _(
        "⏸ Approval needed before running:\n{calls}\n"
        "Asked by {asker}. {approvers} may approve, until {expires}.",
        calls=shown,
        asker=asker,
        approvers=approvers,
        expires=expires,
    )


def approval_skill(skills: list[str], call: str) -> str:
    """A call on the card that waits because it uses a skill (reads its files, runs its scripts)."""
    return _("skill {skills}: {call}", skills=", ".join(f"/{s}" for s in skills), call=call)


def approvers_line(roles: list[str], dm: bool) -> str:
    if len(roles) > 1:
        return _("The roles {roles}", roles=", ".join(roles))
    if roles:
        return _("The role {role}", role=roles[0])
    return _("You or an approver") if dm else _("An approver")


def approval_typed(code: str) -> str:
    """Where buttons cannot be shown: what to send instead."""
    return _("Send {code}:a to approve or {code}:d to deny.", code=code)


def approval_not_yours(approvers: str) -> str:
    return _("You cannot answer this approval request. {approvers} may.", approvers=approvers)


def approval_decided(decision: str, by: str) -> str:
    if decision == "approve_conversation":
        return _("✅ Approved for this conversation by {by}.", by=by)
    if decision == "approve":
        return _("✅ Approved by {by}.", by=by)
    if decision == "expired":
        return _("⌛ The approval request expired: not run.")
    return _("🚫 Denied by {by}: not run.", by=by)


_ALREADY = {
    "approve": N_("This request was already answered: approved."),
    "approve_conversation": N_("This request was already answered: approved."),
    "deny": N_("This request was already answered: denied."),
    "expired": N_("This request was already answered: it expired."),
}


def approval_already(decision: str) -> str:
    return gettext(_ALREADY.get(decision, N_("This request was already answered: answered.")))


def usage_whose(person: str) -> str:
    """/usage's subject: `you (telegram:42)`; in a group `this chat`."""
    return _("you ({person})", person=person) if person else _("this chat")


def usage_period(period: str) -> str:
    return _("today") if period == "day" else _("this month")
