"""The one backoff: decorrelated jitter within [base, cap], reset, one log line per outage."""

from __future__ import annotations

import logging

import pytest

from channels.backoff import Backoff, BackoffPolicy, describe
from tests.fakes.virtual_time import VirtualTime

LOG = logging.getLogger("tests.backoff")


def test_delays_grow_with_jitter_and_stay_within_base_and_cap():
    for r in (0.0, 0.3, 0.999):
        vt = VirtualTime(rand=lambda r=r: r)
        backoff = Backoff("x", LOG, vt.policy(base=1.0, cap=30.0))
        delays = [backoff.failure("boom").next_retry_at - vt.now for _ in range(12)]
        assert all(1.0 <= d <= 30.0 for d in delays)
        if r > 0.5:
            assert delays[0] < delays[3]
            assert delays[-1] == pytest.approx(30.0, abs=0.5)
    lowest = Backoff("x", LOG, VirtualTime(rand=lambda: 0.0).policy(base=2.0))
    assert [lowest.next_delay() for _ in range(3)] == [2.0, 2.0, 2.0]  # never below base


def test_jitter_spreads_clients_that_failed_together():
    import random

    rng = random.Random(7)
    firsts = {
        round(Backoff("x", LOG, BackoffPolicy(rand=rng.random)).next_delay(), 3) for _ in range(20)
    }
    assert len(firsts) > 15


async def test_wait_sleeps_the_delay_and_success_resets():
    vt = VirtualTime(rand=lambda: 0.999)
    backoff = Backoff("x", LOG, vt.policy(base=1.0, cap=100.0))
    for _ in range(4):
        backoff.failure("down")
        await backoff.wait()
    assert len(vt.slept) == 4
    assert vt.slept[-1] > 20
    assert backoff.attempts == 4
    assert backoff.success() is True
    assert backoff.attempts == 0
    assert backoff.state is None
    backoff.failure("down again")
    await backoff.wait()
    assert vt.slept[-1] < 3.1  # back to the first step
    assert backoff.success() is True
    assert backoff.success() is False  # nothing to recover from


def test_retry_after_is_respected():
    vt = VirtualTime(rand=lambda: 0.0)
    backoff = Backoff("x", LOG, vt.policy(base=1.0))
    state = backoff.failure("429", at_least=7.0)
    assert state.next_retry_at == vt.now + 7.0


def test_state_counts_attempts_and_keeps_the_outage_start():
    vt = VirtualTime()
    backoff = Backoff("x", LOG, vt.policy())
    first = backoff.failure("a")
    vt.now += 5
    second = backoff.failure("b")
    assert (first.attempts, second.attempts) == (1, 2)
    assert second.last_error == "b"
    assert second.failing_since == first.failing_since


async def test_one_warning_per_outage_then_one_recovery_line(caplog):
    vt = VirtualTime()
    backoff = Backoff("feishu long connection", LOG, vt.policy())
    caplog.set_level(logging.DEBUG, logger="tests.backoff")
    for _ in range(5):
        backoff.failure("ServerException: 503 system busy")
        await backoff.wait()
    backoff.success()
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    infos = [r for r in caplog.records if r.levelno == logging.INFO]
    assert len(warnings) == 1
    assert "503 system busy" in warnings[0].getMessage()
    assert len(infos) == 1
    assert "recovered after 5 failed attempt(s)" in infos[0].getMessage()
    assert not any(r.exc_info for r in caplog.records)


def test_policy_checks_its_values():
    with pytest.raises(ValueError):
        BackoffPolicy(base=0)
    with pytest.raises(ValueError):
        BackoffPolicy(base=10, cap=5)


def test_describe_is_one_line():
    assert describe(ValueError("bad\nsecond line")) == "ValueError: bad"
    assert describe(TimeoutError()) == "TimeoutError"
