"""When a schedule fires next: one-off times, and cron expressions through croniter.

croniter computes cron fire times in a time zone. One correction: when clocks go back (the end of
daylight saving time) a wall-clock time such as 02:30 happens twice, and croniter yields both; a
schedule with fixed hours fires once a day, so the repeat of the same wall-clock time is skipped.
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from zoneinfo import ZoneInfo

from croniter import croniter

from bot import i18n


def valid_zone(name: str) -> bool:
    """True for an IANA time zone name (`Europe/Berlin`); False for anything else, including
    paths and directories of the zone database (`America`)."""
    try:
        ZoneInfo(name)
    except (ValueError, OSError, KeyError):  # ZoneInfoNotFoundError is a KeyError
        return False
    return True


def valid_cron(expr: str) -> bool:
    return len(expr.split()) == 5 and bool(croniter.is_valid(expr))


def next_fire(expr: str, tz: str, after: float) -> float:
    """The first fire time of `expr` (in zone `tz`) strictly after the epoch time `after`."""
    zone = ZoneInfo(tz)
    start = datetime.fromtimestamp(after, zone)
    nxt = _after(expr, start)
    if _fixed_hours(expr) and _same_wall_time(nxt, start):
        nxt = _after(expr, nxt)
    return nxt.timestamp()


def _after(expr: str, start: datetime) -> datetime:
    it = _parsed(expr)
    it.set_current(start, force=True)
    found: datetime = it.get_next(datetime)
    return found


@lru_cache(maxsize=1024)
def _parsed(expr: str) -> croniter:
    """Parsing an expression costs about a millisecond; one parsed iterator per expression is
    reused (set to each start time; the loop's thread is the only user)."""
    return croniter(expr)


def _fixed_hours(expr: str) -> bool:
    hours = expr.split()[1]
    return "*" not in hours and "/" not in hours


def _same_wall_time(a: datetime, b: datetime) -> bool:
    """True for the second occurrence of a wall-clock minute when clocks went back."""
    return (
        a.replace(tzinfo=None, fold=0) == b.replace(tzinfo=None, fold=0)
        and a.utcoffset() != b.utcoffset()
        and 0 < a.timestamp() - b.timestamp() <= 3 * 3600
    )


def local_text(epoch: float, tz: str) -> str:
    """`Mon 2026-11-23 09:00 (Europe/Berlin)`: how times are shown to people."""
    when = datetime.fromtimestamp(epoch, ZoneInfo(tz))
    return f"{i18n.when(when)} ({tz})"  # in the locale of the person it is shown to
