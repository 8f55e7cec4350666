"""`GET /api/budgets`: the configured budgets (usage.budgets, edited in config.yaml or through
`PUT /api/config`) with what is used of each in its current period. A role's budget is each of
its people's own: its use is per person (`/api/usage?person=`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from bot.usage.budgets import Payer, resets_at
from gateway.api.usage import store_of
from gateway.registry import Call, Registry

TAG = "usage"
api = Registry(tag=TAG)


class BudgetState(BaseModel):
    index: int
    scope: Literal["person", "role", "chat", "channel"]
    name: str
    period: Literal["day", "month"]
    unit: str  # tokens, or the currency
    limit: float
    at_limit: Literal["refuse", "fallback"]
    used: float | None  # None for a role's budget (per person)
    resets: str


class Budgets(BaseModel):
    currency: str
    warn_at: float
    fallback_model: str | None
    budgets: list[BudgetState]


@api.route("GET", "/api/budgets", errors=(409,))
async def list_budgets(call: Call) -> Budgets:
    """The configured budgets and what is used of each this period"""
    store_of(call)  # 409 when usage is not counted
    gate = call.gw.service.usage
    assert gate is not None
    assert gate.budgets is not None
    budgets, cfg = gate.budgets, gate.config()
    await gate.meter.flush()
    now, states = budgets.clock(), []
    for index, budget in enumerate(cfg.budgets):
        used: float | None = None
        if budget.scope != "role":
            subject = budget.name
            payer = Payer(person=subject, role="", chat=subject, channel=subject)
            used = await budgets.spent(budget, payer)
        states.append(
            BudgetState(
                index=index,
                scope=budget.scope,
                name=budget.name,
                period=budget.period,
                unit="tokens" if budget.tokens is not None else cfg.currency,
                limit=budget.limit,
                at_limit=budget.at_limit,
                used=used,
                resets=resets_at(budget.period, now),
            )
        )
    return Budgets(
        currency=cfg.currency,
        warn_at=cfg.warn_at,
        fallback_model=cfg.fallback_model,
        budgets=states,
    )
