"""What the Metrics page charts: snapshots of the service's counters and histograms, taken at
most every `step` seconds while someone watches (each page load and data poll samples), the
last `keep` of them kept. Each point shows the minute before it (since the newest snapshot a
minute or more old, else the oldest kept): answers and 429s in that minute, and p50/p99 of
first-visible latency and run duration over the observations in it (interpolated within
histogram buckets, as Prometheus' `histogram_quantile` does)."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.metrics import Histogram, Metrics

WINDOW = 60.0


@dataclass(frozen=True)
class Snapshot:
    at: float
    answers: float
    rate_limited: float
    first_visible: tuple[int, ...]  # cumulative bucket counts, then the total count
    run_duration: tuple[int, ...]


def buckets(hist: Histogram) -> tuple[int, ...]:
    counts = [0] * (len(hist.buckets) + 1)
    for series in hist.series.values():
        for i, n in enumerate(series.counts):
            counts[i] += n
        counts[-1] += series.count
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
    def __init__(self, metrics: Metrics, *, step: float = 2.0, keep: int = 300,
                 clock: Callable[[], float] = time.time) -> None:
        self.metrics = metrics
        self.step = step
        self.clock = clock
        self.snapshots: deque[Snapshot] = deque(maxlen=keep)

    def snapshot(self) -> Snapshot:
        m = self.metrics
        answers = sum(v for labels, v in m.runs_finished.values.items()
                      if ("outcome", "succeeded") in labels)
        return Snapshot(at=self.clock(), answers=answers,
                        rate_limited=sum(m.rate_limited.values.values()),
                        first_visible=buckets(m.first_visible),
                        run_duration=buckets(m.run_duration))

    def sample(self) -> Snapshot:
        now = self.snapshot()
        if not self.snapshots or now.at - self.snapshots[-1].at >= self.step:
            self.snapshots.append(now)
        return now

    def series(self) -> dict[str, list[Any]]:
        """Columns for the charts: time and one value per snapshot (None where nothing was
        observed in that minute)."""
        out: dict[str, list[Any]] = {k: [] for k in (
            "t", "answers", "rate_limited", "first_visible_p50", "first_visible_p99",
            "run_p50", "run_p99")}
        points = list(self.snapshots)
        start = 0
        for i, point in enumerate(points):
            while start + 1 < i and points[start + 1].at <= point.at - WINDOW:
                start += 1
            base = points[start] if start < i else None  # the newest a minute or more ago
            out["t"].append(round(point.at, 3))
            out["answers"].append(point.answers - (base.answers if base else point.answers))
            out["rate_limited"].append(
                point.rate_limited - (base.rate_limited if base else point.rate_limited))
            for name, hist, attr in (("first_visible", self.metrics.first_visible,
                                      "first_visible"),
                                     ("run", self.metrics.run_duration, "run_duration")):
                now, then = getattr(point, attr), getattr(base, attr) if base else None
                delta = [a - b for a, b in zip(now, then, strict=True)] if then else [0] * len(now)
                out[f"{name}_p50"].append(quantile(0.5, hist.buckets, delta))
                out[f"{name}_p99"].append(quantile(0.99, hist.buckets, delta))
        return out

    def totals(self) -> dict[str, Any]:
        """Since the service started: the numbers the page shows without JavaScript."""
        m, now = self.metrics, self.sample()
        fv, run = list(now.first_visible), list(now.run_duration)
        return {
            "answers": int(now.answers),
            "rate_limited": int(now.rate_limited),
            "inbound": int(sum(m.inbound.values.values())),
            "runs_started": int(sum(m.runs_started.values.values())),
            "given_up": int(sum(m.deliveries_given_up.values.values())),
            "first_visible_p50": quantile(0.5, m.first_visible.buckets, fv),
            "first_visible_p99": quantile(0.99, m.first_visible.buckets, fv),
            "run_p50": quantile(0.5, m.run_duration.buckets, run),
            "run_p99": quantile(0.99, m.run_duration.buckets, run),
        }
