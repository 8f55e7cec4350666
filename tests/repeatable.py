"""Hypothesis settings the property tests share: the same examples on every run (derandomized,
no example database, no deadline), so CI never flakes on a newly drawn example."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

REPEATABLE = settings(
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
