"""The metrics registry: one per App, so two services in one process count apart."""

from __future__ import annotations

from bot.metrics import Metrics


def test_two_registries_count_apart() -> None:
    one, two = Metrics(), Metrics()
    one.inbound.labels(channel="slack").inc()
    one.inbound.labels(channel="slack").inc()
    two.inbound.labels(channel="slack").inc()
    assert one.value("antler_inbound_messages_total", channel="slack") == 2
    assert two.value("antler_inbound_messages_total", channel="slack") == 1
    assert two.value("antler_inbound_messages_total", channel="telegram") == 0


def test_exposition_names_types_and_labels() -> None:
    metrics = Metrics()
    metrics.run_finished("api", "succeeded", 0.3)
    text = metrics.render()
    lines = set(text.splitlines())
    assert "# TYPE antler_runs_finished_total counter" in lines
    assert 'antler_runs_finished_total{channel="api",outcome="succeeded"} 1.0' in lines
    assert "# TYPE antler_run_duration_seconds histogram" in lines
    assert 'antler_run_duration_seconds_bucket{channel="api",le="0.25"} 0.0' in lines
    assert 'antler_run_duration_seconds_bucket{channel="api",le="0.5"} 1.0' in lines
    assert 'antler_run_duration_seconds_sum{channel="api"} 0.3' in lines
    assert "_created" not in text


def test_gauges_are_read_at_scrape_time() -> None:
    metrics = Metrics()
    depth = [3]
    metrics.read_gauges(lambda: depth[0], lambda: 1)
    assert "antler_inbound_queue_depth 3.0" in metrics.render().splitlines()
    depth[0] = 0
    assert metrics.value("antler_inbound_queue_depth") == 0
    assert metrics.value("antler_messages_waiting_for_slot") == 1
