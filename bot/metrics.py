"""The service's metrics: a small registry of counters, gauges and histograms, rendered in the
Prometheus text exposition format (version 0.0.4) for `GET /metrics`.

One `Metrics` object per App is handed to the places where things happen (bus, channel
contexts, turns, reply streamers, the gateway's runs). Everything runs on the event loop, so no
locks are needed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

Labels = tuple[tuple[str, str], ...]

DURATION_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)
LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 30)


def _labels(values: dict[str, str]) -> Labels:
    return tuple(sorted(values.items()))


def _fmt_labels(labels: Labels, extra: tuple[tuple[str, str], ...] = ()) -> str:
    pairs = [*labels, *extra]
    if not pairs:
        return ""
    body = ",".join(f'{k}="{_escape(v)}"' for k, v in pairs)
    return "{" + body + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _num(value: float) -> str:
    if value == float("inf"):
        return "+Inf"
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


@dataclass
class Counter:
    name: str
    help: str
    values: dict[Labels, float] = field(default_factory=dict)
    kind: str = "counter"

    def inc(self, amount: float = 1.0, **labels: str) -> None:
        key = _labels(labels)
        self.values[key] = self.values.get(key, 0.0) + amount

    def get(self, **labels: str) -> float:
        return self.values.get(_labels(labels), 0.0)

    def samples(self) -> Iterable[str]:
        for labels, value in self.values.items():
            yield f"{self.name}{_fmt_labels(labels)} {_num(value)}"


@dataclass
class Gauge:
    """A gauge read at scrape time from a callback returning {labels-dict-as-tuple: value}."""

    name: str
    help: str
    read: Callable[[], dict[Labels, float]] = dict
    kind: str = "gauge"

    def samples(self) -> Iterable[str]:
        for labels, value in self.read().items():
            yield f"{self.name}{_fmt_labels(labels)} {_num(value)}"


@dataclass
class _Series:
    counts: list[int]
    total: float = 0.0
    count: int = 0


@dataclass
class Histogram:
    name: str
    help: str
    buckets: tuple[float, ...] = DURATION_BUCKETS
    series: dict[Labels, _Series] = field(default_factory=dict)
    kind: str = "histogram"

    def observe(self, value: float, **labels: str) -> None:
        key = _labels(labels)
        series = self.series.get(key)
        if series is None:
            series = self.series[key] = _Series(counts=[0] * len(self.buckets))
        for i, bound in enumerate(self.buckets):
            if value <= bound:
                series.counts[i] += 1
        series.total += value
        series.count += 1

    def count(self, **labels: str) -> int:
        series = self.series.get(_labels(labels))
        return series.count if series else 0

    def samples(self) -> Iterable[str]:
        for labels, series in self.series.items():
            for bound, n in zip(self.buckets, series.counts, strict=True):
                yield f"{self.name}_bucket{_fmt_labels(labels, (('le', _num(bound)),))} {n}"
            yield f"{self.name}_bucket{_fmt_labels(labels, (('le', '+Inf'),))} {series.count}"
            yield f"{self.name}_sum{_fmt_labels(labels)} {_num(series.total)}"
            yield f"{self.name}_count{_fmt_labels(labels)} {series.count}"


Metric = Counter | Gauge | Histogram


class Metrics:
    """Every metric the service exports. `channel` labels name a channel, or `api`."""

    def __init__(self) -> None:
        self.inbound = Counter("antler_inbound_messages_total",
                               "Messages accepted from a channel.")
        self.duplicates = Counter("antler_duplicates_suppressed_total",
                                  "Redelivered messages recognised and dropped.")
        self.overflowed = Counter("antler_inbound_overflow_total",
                                  "Messages refused because the inbound queue was full.")
        self.runs_started = Counter("antler_runs_started_total", "Agent runs started.")
        self.runs_finished = Counter("antler_runs_finished_total",
                                     "Agent runs finished, by outcome "
                                     "(succeeded, failed, cancelled).")
        self.run_duration = Histogram("antler_run_duration_seconds",
                                      "Wall time of agent runs.", DURATION_BUCKETS)
        self.first_update = Histogram("antler_time_to_first_update_seconds",
                                      "From the start of a reply to its first visible content.",
                                      LATENCY_BUCKETS)
        self.updates_sent = Counter("antler_reply_updates_sent_total",
                                    "Reply edits/updates delivered to a channel.")
        self.rate_limited = Counter("antler_rate_limited_total",
                                    "Rate-limit responses received from a platform.")
        self.deliveries_given_up = Counter("antler_deliveries_given_up_total",
                                           "Reply deliveries ended without success, by reason "
                                           "(the platform's definitive refusal, or unreachable).")
        self.reconnects = Counter("antler_channel_reconnects_total",
                                  "Times a channel connection came back after a drop.")
        self.queue_depth = Gauge("antler_inbound_queue_depth",
                                 "Messages waiting in the inbound queue.")
        self.waiting_for_slot = Gauge("antler_messages_waiting_for_slot",
                                      "Accepted messages waiting for a free run slot.")
        self.first_visible = Histogram("antler_admission_to_first_visible_seconds",
                                       "From the platform event's arrival to the first sign of "
                                       "life the user sees (typing, placeholder, queued notice).",
                                       LATENCY_BUCKETS)

    def all(self) -> list[Metric]:
        return [m for m in vars(self).values() if isinstance(m, Counter | Gauge | Histogram)]

    def run_finished(self, channel: str, outcome: str, seconds: float) -> None:
        self.runs_finished.inc(channel=channel, outcome=outcome)
        self.run_duration.observe(seconds, channel=channel)

    def render(self) -> str:
        lines: list[str] = []
        for metric in self.all():
            lines.append(f"# HELP {metric.name} {metric.help}")
            lines.append(f"# TYPE {metric.name} {metric.kind}")
            lines.extend(metric.samples())
        return "\n".join(lines) + "\n"


def gauge_value(value: float) -> dict[Labels, float]:
    """A label-less gauge reading, for `Gauge.read` callbacks."""
    return {(): value}
