"""`/usage`: the sender's tokens and cost today and this month; in a group, the chat's; an admin
may name any person (`/usage telegram:42`)."""

from __future__ import annotations

from bot import texts
from bot.access.people import account_of
from bot.command_context import CommandContext
from bot.stores.usage import Totals
from bot.usage.budgets import period_start
from bot.usage.gate import money


async def usage_command(ctx: CommandContext, args: str) -> str:
    gate, msg = ctx.service.usage, ctx.msg
    if gate is None or gate.meter.store is None:
        return texts.USAGE_NOT_COUNTED
    person = ctx.person or account_of(msg)
    scope, value, whose = "person", person, texts.usage_whose(person)
    if args:
        if not await _is_admin(ctx, person):
            return texts.USAGE_OTHERS_ADMIN_ONLY
        named = args.split()[0]
        access = ctx.service.access
        value = await access.person_of(named) if access is not None else named
        whose = value
    elif msg.chat.chat_type != "dm":
        scope, value, whose = "chat", msg.chat.with_topic(None).key, texts.usage_whose("")
    await gate.meter.flush()
    now, currency = gate.meter.clock(), gate.config().currency
    lines = []
    for period in ("day", "month"):
        totals: Totals = await gate.meter.store.total(scope, value, period_start(period, now))
        lines.append(
            texts.usage_line(
                texts.usage_period(period),
                totals.tokens,
                totals.calls,
                money(totals.cost, currency),
                totals.estimated,
            )
        )
    return texts.usage_report(whose, lines)


async def _is_admin(ctx: CommandContext, person: str) -> bool:
    access = ctx.service.access
    return access is not None and await access.role_of(person) == "admin"
