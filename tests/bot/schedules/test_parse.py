"""Time expressions of /schedule and the agent's tool, in a time zone, across DST changes."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from bot.schedules.parse import ScheduleSyntaxError, parse_schedule
from bot.schedules.recurrence import next_fire

BERLIN = ZoneInfo("Europe/Berlin")


def at(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, tz: ZoneInfo = BERLIN
) -> float:
    return datetime(year, month, day, hour, minute, tzinfo=tz).timestamp()


def local(epoch: float, tz: ZoneInfo = BERLIN) -> str:
    return f"{datetime.fromtimestamp(epoch, tz):%a %Y-%m-%d %H:%M}"


NOW = at(2026, 11, 23, 14, 0)  # a Monday


@pytest.mark.parametrize(
    ("text", "first", "prompt"),
    [
        ("in 2h remind me to call Ann", "Mon 2026-11-23 16:00", "remind me to call Ann"),
        ("in 1h30m tea", "Mon 2026-11-23 15:30", "tea"),
        ("in 2 hours and 15 minutes tea", "Mon 2026-11-23 16:15", "tea"),
        ("at 18:30 dinner", "Mon 2026-11-23 18:30", "dinner"),
        ("at 9:00 standup", "Tue 2026-11-24 09:00", "standup"),  # passed today: tomorrow
        ("tomorrow 8am wake me", "Tue 2026-11-24 08:00", "wake me"),
        ("tomorrow at 7:45pm film", "Tue 2026-11-24 19:45", "film"),
        ("on 2026-12-24 09:00 presents", "Thu 2026-12-24 09:00", "presents"),
    ],
)
def test_one_off_times_in_the_conversation_zone(text: str, first: str, prompt: str) -> None:
    parsed = parse_schedule(text, "Europe/Berlin", NOW)
    assert parsed.when.kind == "once"
    assert local(parsed.when.first_run) == first
    assert parsed.prompt == prompt


@pytest.mark.parametrize(
    ("text", "expr", "first"),
    [
        ("every weekday 09:00 summarise the tracker", "0 9 * * 1-5", "Tue 2026-11-24 09:00"),
        ("every day at 7 news", "0 7 * * *", "Tue 2026-11-24 07:00"),
        ("every friday at 16:00 on-call handover", "0 16 * * 5", "Fri 2026-11-27 16:00"),
        ("every monday, wednesday 10:00 x", "0 10 * * 1,3", "Wed 2026-11-25 10:00"),
        ("every weekend 10am x", "0 10 * * 0,6", "Sat 2026-11-28 10:00"),
        ("every 15 minutes ping", "*/15 * * * *", "Mon 2026-11-23 14:15"),
        ("every 2 hours ping", "0 */2 * * *", "Mon 2026-11-23 16:00"),
        ('cron "30 8 1 * *" invoices', "30 8 1 * *", "Tue 2026-12-01 08:30"),
    ],
)
def test_recurring_times_become_cron(text: str, expr: str, first: str) -> None:
    parsed = parse_schedule(text, "Europe/Berlin", NOW)
    assert (parsed.when.kind, parsed.when.expr) == ("cron", expr)
    assert local(parsed.when.first_run) == first


def test_options_after_the_time() -> None:
    parsed = parse_schedule("every day 9:00 --fresh --skip-missed report", "UTC", NOW)
    assert (parsed.fresh_thread, parsed.missed, parsed.prompt) == (True, "skip", "report")


def test_same_words_other_zone_other_instant() -> None:
    berlin = parse_schedule("tomorrow 8:00 x", "Europe/Berlin", NOW).when.first_run
    york = parse_schedule("tomorrow 8:00 x", "America/New_York", NOW).when.first_run
    assert york - berlin == 6 * 3600


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("soon do it", "could not read the time"),
        ("in 2h", "What should I do then"),
        ('cron "61 * * * *" x', "not a cron expression"),
        ("every 7 minutes x", "divides 60"),
        ("at 25:00 x", "not a time"),
        ("on 2020-01-01 09:00 x", "in the past"),
        ("every blursday 09:00 x", "could not read the time"),
    ],
)
def test_bad_expressions_get_plain_answers(text: str, says: str) -> None:
    with pytest.raises(ScheduleSyntaxError, match=says):
        parse_schedule(text, "Europe/Berlin", NOW)


def test_daily_run_across_spring_forward_and_fall_back() -> None:
    # 2026-03-29 02:30 does not exist in Berlin; 2026-10-25 02:30 happens twice.
    expr = "30 2 * * *"
    spring = next_fire(expr, "Europe/Berlin", at(2026, 3, 28, 12, 0))
    assert local(spring) == "Sun 2026-03-29 03:00"
    fires, t = [], at(2026, 10, 24, 12, 0)
    for _ in range(3):
        t = next_fire(expr, "Europe/Berlin", t)
        fires.append(local(t))
    assert fires == ["Sun 2026-10-25 02:30", "Mon 2026-10-26 02:30", "Tue 2026-10-27 02:30"]


def test_daily_nine_oclock_stays_nine_across_dst() -> None:
    t, hours = at(2026, 10, 23, 10, 0), set()
    for _ in range(5):
        t = next_fire("0 9 * * *", "Europe/Berlin", t)
        hours.add(datetime.fromtimestamp(t, BERLIN).hour)
    assert hours == {9}
