"""What the Metrics page charts: snapshots of the service's counters and histograms, taken at
most every `step` seconds while someone watches (each page load and data poll samples), the
last `keep` of them kept. Each point shows the minute before it (since the newest snapshot a
minute or more old): answers and 429s in that minute, and p50/p99 of first-visible latency and
run duration over the observations in it (interpolated within histogram buckets, as Prometheus'
`histogram_quantile` does). A point with no snapshot from a minute before it (the first minute
of watching, or after a pause longer than `GAP`) has no values (None), never a made-up 0.
The numbers are read from the Metrics object's registry (`registry.collect()`), the samples
`GET /metrics` exposes."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.metrics import DURATION_BUCKETS, LATENCY_BUCKETS, Metrics

WINDOW = 60.0
GAP = 10.0  # how much older than a minute a point's base may be (the page polls every `step`)
FIRST_VISIBLE = ("antler_admission_to_first_visible_seconds", LATENCY_BUCKETS)
RUN_DURATION = ("antler_run_duration_seconds", DURATION_BUCKETS)
Samples = list[tuple[str, dict[str, str], float]]


@dataclass(frozen=True)
class Snapshot:
    at: float
    answers: float
    rate_limited: float
    first_visible: tuple[int, ...]  # cumulative bucket counts, then the total count
    run_duration: tuple[int, ...]


def samples(metrics: Metrics) -> Samples:
    """Every sample of the registry now: (name, labels, value)."""
    return [
        (sample.name, sample.labels, sample.value)
        for family in metrics.registry.collect()
        for sample in family.samples
    ]


def total(now: Samples, name: str, **labels: str) -> float:
    """The sum of `name` over every label set that has `labels`."""
    return sum(
        value
        for sample, have, value in now
        if sample == name and all(have.get(k) == v for k, v in labels.items())
    )


def buckets(now: Samples, histogram: tuple[str, tuple[float, ...]]) -> tuple[int, ...]:
    """A histogram's cumulative bucket counts over every label set, then its total count."""
    name, bounds = histogram
    counts = [0] * (len(bounds) + 1)
    for sample, labels, value in now:
        if sample == f"{name}_bucket" and labels.get("le") != "+Inf":
            counts[bounds.index(float(labels["le"]))] += int(value)
        elif sample == f"{name}_count":
            counts[-1] += int(value)
    return tuple(counts)


def quantile(q: float, bounds: tuple[float, ...], counts: list[int]) -> float | None:
    """`q` of a cumulative histogram (`counts` = buckets then total); None when empty."""
    total = counts[-1]
    if total <= 0:
        return None
    rank = q * total
    lower, below = 0.0, 0
    for bound, n in zip(bounds, counts, strict=False):
        if n >= rank:
            inside = n - below
            return lower + (bound - lower) * ((rank - below) / inside if inside else 1.0)
        lower, below = bound, n
    return bounds[-1]  # in the +Inf bucket: the highest finite bound, as Prometheus answers


class MetricsHistory:
    def __init__(
        self,
        metrics: Metrics,
        *,
        step: float = 2.0,
        keep: int = 300,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.metrics = metrics
        self.step = step
        self.clock = clock
        self.snapshots: deque[Snapshot] = deque(maxlen=keep)

    def snapshot(self) -> Snapshot:
        now = samples(self.metrics)
        return Snapshot(
            at=self.clock(),
            answers=total(now, "antler_runs_finished_total", outcome="succeeded"),
            rate_limited=total(now, "antler_rate_limited_total"),
            first_visible=buckets(now, FIRST_VISIBLE),
            run_duration=buckets(now, RUN_DURATION),
        )

    def sample(self) -> Snapshot:
        now = self.snapshot()
        if not self.snapshots or now.at - self.snapshots[-1].at >= self.step:
            self.snapshots.append(now)
        return now

    def series(self) -> dict[str, list[Any]]:
        """Columns for the charts: time and one value per snapshot (None where nothing was
        observed in that minute)."""
        out: dict[str, list[Any]] = {
            k: []
            for k in (
                "t",
                "answers",
                "rate_limited",
                "first_visible_p50",
                "first_visible_p99",
                "run_p50",
                "run_p99",
            )
        }
        points = list(self.snapshots)
        start = 0
        for i, point in enumerate(points):
            while start + 1 < i and points[start + 1].at <= point.at - WINDOW:
                start += 1
            base = points[start]
            out["t"].append(round(point.at, 3))
            if not WINDOW <= point.at - base.at <= WINDOW + max(GAP, 3 * self.step):
                for column in list(out)[1:]:  # no full minute before it: nothing to show
                    out[column].append(None)
                continue
            out["answers"].append(point.answers - base.answers)
            out["rate_limited"].append(point.rate_limited - base.rate_limited)
            for name, (_, bounds), attr in (
                ("first_visible", FIRST_VISIBLE, "first_visible"),
                ("run", RUN_DURATION, "run_duration"),
            ):
                now, then = getattr(point, attr), getattr(base, attr)
                delta = [a - b for a, b in zip(now, then, strict=True)]
                out[f"{name}_p50"].append(quantile(0.5, bounds, delta))
                out[f"{name}_p99"].append(quantile(0.99, bounds, delta))
        return out

    @property
    def span(self) -> float:
        """The seconds the kept snapshots cover at most (the charts' time range)."""
        return (self.snapshots.maxlen or 0) * self.step

    def totals(self) -> dict[str, Any]:
        """Since the service started: the numbers the page shows without JavaScript."""
        counters, now = samples(self.metrics), self.sample()
        fv, run = list(now.first_visible), list(now.run_duration)
        return {
            "answers": int(now.answers),
            "rate_limited": int(now.rate_limited),
            "inbound": int(total(counters, "antler_inbound_messages_total")),
            "runs_started": int(total(counters, "antler_runs_started_total")),
            "given_up": int(total(counters, "antler_deliveries_given_up_total")),
            "first_visible_p50": quantile(0.5, LATENCY_BUCKETS, fv),
            "first_visible_p99": quantile(0.99, LATENCY_BUCKETS, fv),
            "run_p50": quantile(0.5, DURATION_BUCKETS, run),
            "run_p99": quantile(0.99, DURATION_BUCKETS, run),
        }
