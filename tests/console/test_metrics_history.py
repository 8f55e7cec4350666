"""The Metrics page's numbers: quantiles from histogram buckets, and per-minute windows."""

from __future__ import annotations

import pytest

from bot.metrics import LATENCY_BUCKETS, Metrics
from gateway.console.metrics_history import MetricsHistory, quantile


def test_quantile_interpolates_within_the_bucket() -> None:
    bounds = (1.0, 2.0, 4.0)
    assert quantile(0.5, bounds, [0, 0, 0, 0]) is None
    assert quantile(0.5, bounds, [2, 4, 4, 4]) == pytest.approx(1.0)  # rank 2: top of bucket 1
    assert quantile(0.75, bounds, [2, 4, 4, 4]) == pytest.approx(1.5)  # rank 3: mid bucket 2
    assert quantile(0.99, bounds, [0, 0, 0, 5]) == 4.0  # only +Inf: the highest finite bound


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_series_counts_the_minute_before_each_point() -> None:
    metrics, clock = Metrics(), Clock()
    history = MetricsHistory(metrics, step=2.0, clock=clock)
    history.sample()
    clock.now += 1.0
    history.sample()  # within the step: not kept
    assert len(history.snapshots) == 1
    for _ in range(3):
        metrics.run_finished("telegram", "succeeded", 1.2)
    metrics.run_finished("telegram", "failed", 9.0)  # not an answer
    metrics.rate_limited.labels(channel="telegram").inc()
    metrics.first_visible.labels(channel="telegram").observe(0.3)
    clock.now += 1.0
    history.sample()
    clock.now += 58.0  # a minute after the first
    history.sample()
    clock.now += 66.0  # a minute after it, 6 s late (a slow poll)
    metrics.run_finished("slack", "succeeded", 0.2)
    history.sample()
    series = history.series()
    assert series["t"] == [1000.0, 1002.0, 1060.0, 1126.0]
    assert series["answers"] == [None, None, 3, 1]
    assert series["rate_limited"] == [None, None, 1, 0]
    assert series["first_visible_p50"][2] == pytest.approx(0.25 + 0.25 * 0.5)
    assert series["first_visible_p50"][3] is None  # nothing shown in that minute
    assert series["run_p99"][3] == pytest.approx(0.1 + 0.15 * 0.99)
    totals = history.totals()
    assert (totals["answers"], totals["rate_limited"]) == (4, 1)
    assert LATENCY_BUCKETS[2] == 0.25


def test_no_made_up_zero_before_a_minute_of_samples_nor_across_a_pause() -> None:
    metrics, clock = Metrics(), Clock()
    history = MetricsHistory(metrics, step=2.0, clock=clock)
    for _ in range(30):  # the first minute of watching: nothing is known per minute yet
        history.sample()
        clock.now += 2.0
    series = history.series()
    assert len(series["t"]) == 30
    for column in ("answers", "rate_limited", "first_visible_p50", "run_p99"):
        assert series[column] == [None] * 30, column
    history.sample()  # a minute after the first sample: the first point
    assert history.series()["answers"][-1] == 0
    clock.now += 600.0  # the page was closed for ten minutes
    history.sample()
    assert history.series()["answers"][-1] is None  # ten minutes is not "the minute before"
