"""/agent: the agent profiles a chat may talk to (agent/profiles.py)."""

from __future__ import annotations

from bot.i18n import text as _


def agent_list(current_label: str, *, chat_default: bool) -> str:
    if chat_default:
        return _(
            "Agents for new conversations in this chat (current: **{label}**):", label=current_label
        )
    return _("Agents for this conversation (current: **{label}**):", label=current_label)


def unknown_agent(name: str) -> str:
    return _("Unknown agent `{name}`. Choose one of:", name=name)


def agent_line(name: str, label: str, description: str, current: bool) -> str:
    about = f": {description}" if description else ""
    return f"- `{name}` — {label}{about}" + (" ✓" if current else "")


def agent_switched(label: str) -> str:
    return _("Agent for this conversation: {label}. It keeps the conversation so far.", label=label)


def chat_default_agent(label: str, running: int) -> str:
    parts = [_("New conversations in this chat will talk to {label}.", label=label)]
    if running == 1:
        parts.append(_("Your running reply keeps the agent it started with."))
    elif running:
        parts.append(
            _("Your {running} running replies keep the agent they started with.", running=running)
        )
    parts.append(_("To switch a conversation already started, send /agent in its thread."))
    return " ".join(parts)


def agent_denied(name: str, role: str) -> str:
    return _(
        "The agent {name} is not available to you here (your role: {role}); /agent lists yours.",
        name=name,
        role=role,
    )
