"""`/api/budgets`: the configured budgets (usage.budgets) with what is used of each in its
current period, and their edits.

`POST` adds a budget, `PUT /api/budgets` replaces the list, `PUT /api/budgets/{index}` one of
it, `DELETE /api/budgets/{index}` removes one (`index` as `GET` lists them). Every edit goes
the one way every configuration change goes (bot/config/live.py through `/api/config`'s
`_edit`): validated against the whole file (a 422 naming the field or YAML path, nothing
written), written to config.yaml with its comments, applied live (budgets are read per run),
recorded as a `config` change; and the budget itself, before and after, as a `budget` entry
of the audit trail. A role's budget is each of its people's own: its use is per person
(`/api/usage?person=`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.access.store import AuditEntry
from bot.usage.budgets import Payer, resets_at
from bot.usage.config import Budget
from gateway.api.config import ConfigChange, _edit, _live, _who
from gateway.api.usage import store_of
from gateway.errors import ApiError
from gateway.registry import PATH_PARAMS, Call, Registry

TAG = "usage"
PATH_PARAMS.setdefault("index", r"^[0-9]{1,4}$")
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


class BudgetsChanged(Budgets):
    change: ConfigChange = Field(description="the configuration change the edit made")


class BudgetList(BaseModel):
    model_config = ConfigDict(extra="forbid")
    budgets: list[Budget]


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


def _plain(budget: Budget) -> dict[str, Any]:
    return budget.model_dump(mode="json", exclude_none=True)


def _current(call: Call) -> list[dict[str, Any]]:
    return [_plain(b) for b in _live(call).settings.usage.budgets]


def _at(listed: list[dict[str, Any]], call: Call) -> int:
    index = int(call.path["index"])
    if index >= len(listed):
        raise ApiError(404, f"index: no budget {index} (there are {len(listed)})")
    return index


async def _write(
    call: Call, action: str, budgets: list[dict[str, Any]], before: Any, after: Any
) -> BudgetsChanged:
    """The new list through the one configuration path, then the audit's `budget` entry."""
    store_of(call)
    change = await _edit(call, ("usage",), {"budgets": budgets}, replace=False)
    people = call.gw.service.people
    if people is not None:
        one = after if isinstance(after, dict) else before
        subject = f"{one['scope']}:{one['name']}" if isinstance(one, dict) else "all budgets"
        await people.audit.record(
            AuditEntry(
                kind="budget",
                actor=_who(call),
                subject=subject,
                detail={"action": action, "before": before, "after": after},
            )
        )
    listed = await list_budgets(call)
    return BudgetsChanged(**listed.model_dump(), change=change)


@api.route("POST", "/api/budgets", body=Budget, errors=(409, 422))
async def add_budget(call: Call) -> BudgetsChanged:
    """Add a budget (validated, live, audited)"""
    new = _plain(call.body)
    return await _write(call, "add", [*_current(call), new], None, new)


@api.route("PUT", "/api/budgets", body=BudgetList, errors=(409, 422))
async def replace_budgets(call: Call) -> BudgetsChanged:
    """Replace every budget (validated, live, audited)"""
    before, new = _current(call), [_plain(b) for b in call.body.budgets]
    return await _write(call, "replace all", new, before, new)


@api.route("PUT", "/api/budgets/{index}", body=Budget, errors=(404, 409, 422))
async def replace_budget(call: Call) -> BudgetsChanged:
    """Replace one budget (validated, live, audited)"""
    listed = _current(call)
    index, new = _at(listed, call), _plain(call.body)
    before, listed[index] = listed[index], new
    return await _write(call, "replace", listed, before, new)


@api.route("DELETE", "/api/budgets/{index}", errors=(404, 409, 422))
async def delete_budget(call: Call) -> BudgetsChanged:
    """Remove a budget (live, audited)"""
    listed = _current(call)
    before = listed.pop(_at(listed, call))
    return await _write(call, "delete", listed, before, None)
