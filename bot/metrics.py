"""The service's metrics, on `prometheus-client`, rendered for `GET /metrics` in the Prometheus
text exposition format (version 0.0.4).

One `Metrics` object per App, with its own `CollectorRegistry` (never the library's global one,
so two Apps in one process, as in the tests, count apart). It is handed to the places where
things happen (bus, channel contexts, turns, reply streamers, the gateway's runs).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Gauge,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client import Counter as _Counter
from prometheus_client import Histogram as _Histogram

# No `*_created` series (a timestamp per counter and histogram child): nothing here reads
# them, and they would double the exposition. The switch is the library's, process-wide.
disable_created_metrics()


class _Remembered:
    """`labels(...)` remembered per label values: prometheus-client validates and sorts them
    and takes a lock on every call (about 5 µs; a turn asks about ten times). The child is the
    one the library keeps for those values, so what is counted does not change."""

    def labels(self, *values: Any, **named: Any) -> Any:
        key = values or tuple(named.items())
        children: dict[Any, Any] | None = self.__dict__.get("_remembered")
        if children is None:
            children = self.__dict__["_remembered"] = {}
        child = children.get(key)
        if child is None:
            child = children[key] = super().labels(*values, **named)  # type: ignore[misc]
        return child


class Counter(_Remembered, _Counter):
    pass


class Histogram(_Remembered, _Histogram):
    pass


DURATION_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)
LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 30)
CHANNEL = ("channel",)


class Metrics:
    """Every metric the service exports. `channel` labels name a channel, or `api`."""

    def __init__(self) -> None:
        self.registry = reg = CollectorRegistry()

        def counter(name: str, doc: str, labels: tuple[str, ...] = CHANNEL) -> Counter:
            return Counter(name, doc, labels, registry=reg)

        def histogram(name: str, doc: str, buckets: tuple[float, ...]) -> Histogram:
            return Histogram(name, doc, CHANNEL, buckets=buckets, registry=reg)

        self.inbound = counter("antler_inbound_messages_total", "Messages accepted from a channel.")
        self.duplicates = counter(
            "antler_duplicates_suppressed_total", "Redelivered messages recognised and dropped."
        )
        self.overflowed = counter(
            "antler_inbound_overflow_total", "Messages refused because the inbound queue was full."
        )
        self.runs_started = counter("antler_runs_started_total", "Agent runs started.")
        self.runs_finished = counter(
            "antler_runs_finished_total",
            "Agent runs finished, by outcome (succeeded, failed, cancelled).",
            ("channel", "outcome"),
        )
        self.run_duration = histogram(
            "antler_run_duration_seconds", "Wall time of agent runs.", DURATION_BUCKETS
        )
        self.first_update = histogram(
            "antler_time_to_first_update_seconds",
            "From the start of a reply to its first visible content.",
            LATENCY_BUCKETS,
        )
        self.updates_sent = counter(
            "antler_reply_updates_sent_total", "Reply edits/updates delivered to a channel."
        )
        self.rate_limited = counter(
            "antler_rate_limited_total", "Rate-limit responses received from a platform."
        )
        self.deliveries_given_up = counter(
            "antler_deliveries_given_up_total",
            "Reply deliveries ended without success, by reason "
            "(the platform's definitive refusal, or unreachable).",
            ("channel", "reason"),
        )
        self.reconnects = counter(
            "antler_channel_reconnects_total", "Times a channel connection came back after a drop."
        )
        self._gauges(reg)
        self.first_visible = histogram(
            "antler_admission_to_first_visible_seconds",
            "From the platform event's arrival to the first sign of "
            "life the user sees (typing, placeholder, queued notice).",
            LATENCY_BUCKETS,
        )
        self._access_metrics(reg)

    def _gauges(self, reg: CollectorRegistry) -> None:
        self.queue_depth = Gauge(
            "antler_inbound_queue_depth", "Messages waiting in the inbound queue.", registry=reg
        )
        self.waiting_for_slot = Gauge(
            "antler_messages_waiting_for_slot",
            "Accepted messages waiting for a free run slot.",
            registry=reg,
        )
        self.asyncio_tasks = Gauge(
            "antler_asyncio_tasks",
            "Tasks alive on the service's event loop (a slow leak shows as a climb).",
            registry=reg,
        )
        self.asyncio_tasks.set_function(_tasks_alive)

    def _access_metrics(self, reg: CollectorRegistry) -> None:
        """No person labels: people are in the audit trail, not in metrics."""
        self.tool_calls = Counter(
            "antler_tool_calls_total",
            "Tool calls of the agent, by tool and outcome (ok, error, denied).",
            ("tool", "outcome"),
            registry=reg,
        )
        self.access_denied = Counter(
            "antler_access_denied_total",
            "Things refused by a person's grant, by kind (tool, command, skill, model).",
            ("kind",),
            registry=reg,
        )
        self.approvals = Counter(
            "antler_approvals_total",
            "Approval requests and decisions, by outcome (requested, approve, "
            "approve_conversation, deny, expired, refused: a press by someone who may not).",
            ("outcome",),
            registry=reg,
        )
        self.approval_wait = Histogram(
            "antler_approval_decision_seconds",
            "Time from an approval request to its decision.",
            buckets=(5, 30, 60, 300, 900, 3600, 86400),
            registry=reg,
        )
        self.link_events = Counter(
            "antler_link_events_total",
            "/link and /unlink, by outcome (code, linked, wrong_code, locked, unlinked).",
            ("outcome",),
            registry=reg,
        )

        self.model_calls = Counter(
            "antler_model_calls_total",
            "Model calls, by configured model, channel and purpose (answer, title, memory, "
            "summary, subagent).",
            ("model", "channel", "purpose"),
            registry=reg,
        )
        self.model_tokens = Counter(
            "antler_model_tokens_total",
            "Tokens of model calls, by kind (prompt, completion, cached, reasoning); "
            "estimated where the provider sent none.",
            ("model", "channel", "kind"),
            registry=reg,
        )
        self.model_cost = Counter(
            "antler_model_cost_total",
            "What model calls cost, in usage.currency.",
            ("model", "channel"),
            registry=reg,
        )

    def read_gauges(
        self, queue_depth: Callable[[], float], waiting_for_slot: Callable[[], float]
    ) -> None:
        """The two gauges are read at scrape time from the bus and the dispatcher."""
        self.queue_depth.set_function(queue_depth)
        self.waiting_for_slot.set_function(waiting_for_slot)

    def run_finished(self, channel: str, outcome: str, seconds: float) -> None:
        self.runs_finished.labels(channel=channel, outcome=outcome).inc()
        self.run_duration.labels(channel=channel).observe(seconds)

    def value(self, name: str, **labels: str) -> float:
        """One sample's current value (0 when never set): `value("antler_x_total", channel=…)`,
        `value("antler_y_seconds_count", channel=…)`."""
        return self.registry.get_sample_value(name, labels) or 0.0

    def render(self) -> str:
        return generate_latest(self.registry).decode()


def _tasks_alive() -> float:
    """Tasks of the running loop (0 when scraped off the loop, as in a unit test)."""
    try:
        return float(len(asyncio.all_tasks()))
    except RuntimeError:
        return 0.0
