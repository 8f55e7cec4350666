"""Who may use the bot and what: the allowlist gate (gate.py), people and their linked accounts
(people.py, links.py), roles and the effective grant (roles.py), and the audit trail (audit.py)."""

from bot.access.gate import REFUSAL_INTERVAL, AccessGate, Verdict, allowed, triggered

__all__ = ["REFUSAL_INTERVAL", "AccessGate", "Verdict", "allowed", "triggered"]
