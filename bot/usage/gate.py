"""What the service asks of usage: the agent's sink and check wired once (`build_usage`), a
run's verdict before it starts and the footer after it (`UsageGate`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from agent.events import Turn
from agent.runner import AgentRunner
from agent.usage import new_run_id
from bot import texts
from bot.access.people import People
from bot.metrics import Metrics
from bot.stores.usage import Totals, UsageStore
from bot.usage.budgets import Budgets, Holds, Payer, Verdict
from bot.usage.config import UsageConfig
from bot.usage.meter import Meter

if TYPE_CHECKING:
    from bot.config.schema import Settings


def money(cost: float, currency: str) -> str:
    return f"{cost:.4f} {currency}" if cost < 1 else f"{cost:,.2f} {currency}"


@dataclass
class UsageGate:
    meter: Meter
    budgets: Budgets | None
    config: Callable[[], UsageConfig]
    people: People | None

    async def before(
        self, turn: Turn, chat: str, channel: str, model: str | None
    ) -> tuple[Turn, Verdict]:
        """The turn with its run id, and whether (and on which model) it may run."""
        turn = replace(turn, run_id=turn.run_id or new_run_id())
        self.meter.begin_run(turn.run_id)
        if self.budgets is None:
            return turn, Verdict(model)
        person = turn.user_id
        if self.people is not None and turn.user_id:
            person = await self.people.person_of(turn.user_id)
        role = turn.grant.layers[0].role if turn.grant and turn.grant.layers else ""
        payer = Payer(person, role, chat, channel)
        verdict = await self.budgets.verdict(payer, model)
        if not verdict.refusal:
            self.budgets.begin(turn.run_id, payer)
        return turn, verdict

    def pool(self, holds: Holds | None) -> None:
        """Hold the model calls in flight against a budget across workers (Redis), or not
        (one process: None)."""
        if self.budgets is not None:
            self.budgets.holds = holds

    def after(self, run_id: str, channel: str) -> str:
        """The footer under the answer (`show_usage`), "" when off; forgets the run."""
        if self.budgets is not None:
            self.budgets.end(run_id)
        totals = self.meter.run_totals(run_id)
        self.meter.forget_run(run_id)
        return self.footer(totals, channel)

    def footer(self, totals: Totals, channel: str) -> str:
        cfg = self.config()
        show = cfg.show_for(channel)
        if show == "off" or not totals.calls:
            return ""
        cost = money(totals.cost, cfg.currency) if show == "cost" else ""
        return texts.usage_footer(
            totals.tokens, totals.prompt, totals.completion, cost, bool(totals.estimated)
        )


def build_usage(
    settings: Callable[[], Settings],
    store: UsageStore | None,
    runner: AgentRunner,
    people: People | None,
    metrics: Metrics,
) -> UsageGate:
    """The meter on the runner (every model call counted), budgets on its check."""
    person_of = people.person_of if people is not None else _same
    meter = Meter(store, lambda: settings().models, person_of, metrics)
    config = lambda: settings().usage  # noqa: E731 (live)
    budgets = Budgets(config, store, meter) if store is not None else None
    runner.on_usage = meter.record
    if budgets is not None:
        runner.usage_check = budgets.check
        meter.on_written = budgets.written
    return UsageGate(meter, budgets, config, people)


async def _same(account: str) -> str:
    return account
