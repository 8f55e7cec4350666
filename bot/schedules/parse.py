"""The time expressions of `/schedule` and of the agent's schedule tool, in plain words.

    in 2h | in 1h30m | in 10 minutes        once, that long from now
    at 18:00 | today 18:00 | tomorrow 8am   once, next time the clock shows it
    on 2026-12-24 09:00                     once, on that date
    every day|weekday|weekend|monday,friday [at] 09:00
    every 15 minutes | every hour | every 2 hours
    cron "0 9 * * 1-5"                      any cron expression (minute hour day month weekday)

Options come right after the time: `--fresh` (a new agent thread each run), `--skip-missed` /
`--run-missed` (what happens to runs missed while the service was down). Recurring times become
cron expressions, evaluated by croniter in the conversation's time zone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

from bot.schedules.config import MissedPolicy
from bot.schedules.recurrence import next_fire, valid_cron


class ScheduleSyntaxError(ValueError):
    """The expression could not be read; the message says why in plain words."""


@dataclass(frozen=True, slots=True)
class When:
    kind: Literal["once", "cron"]
    first_run: float
    label: str
    expr: str = ""


@dataclass(frozen=True, slots=True)
class ParsedSchedule:
    when: When
    prompt: str
    fresh_thread: bool | None = None
    missed: MissedPolicy | None = None


_UNITS = {"w": 604800, "d": 86400, "h": 3600, "m": 60}
_DURATION = re.compile(r"(\d+)\s*(weeks?|w|days?|d|hours?|hrs?|h|minutes?|mins?|m)(?![a-z])", re.I)
_IN = re.compile(rf"^in\s+((?:{_DURATION.pattern}\s*(?:and\s+)?)+)(.*)$", re.S | re.I)
_TIME = r"(\d{1,2})(?::(\d{2}))?\s*(am|pm)?"
_AT = re.compile(rf"^(?:(today|tomorrow)\s+)?(?:at\s+)?{_TIME}(?=\s|$)(.*)$", re.S | re.I)
_ON = re.compile(
    rf"^(?:on\s+)?(\d{{4}}-\d{{2}}-\d{{2}})\s+(?:at\s+)?{_TIME}(?=\s|$)(.*)$", re.S | re.I
)
_DAYS = ("sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday")
_DAY_WORD = r"(?:day|weekdays?|weekends?|(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*)"
_EVERY_DAYS = re.compile(
    rf"^every\s+({_DAY_WORD}(?:\s*(?:,|and)\s*{_DAY_WORD})*)\s+(?:at\s+)?{_TIME}(?=\s|$)(.*)$",
    re.S | re.I,
)
_EVERY_N = re.compile(r"^every\s+(\d+\s+)?(minutes?|hours?)\b(.*)$", re.S | re.I)
_CRON = re.compile(r"""^cron\s+(["'])(.+?)\1(.*)$""", re.S | re.I)
_OPTIONS = {
    "--fresh": ("fresh_thread", True),
    "--same-thread": ("fresh_thread", False),
    "--skip-missed": ("missed", "skip"),
    "--run-missed": ("missed", "run_once"),
}


def parse_schedule(text: str, tz: str, now: float) -> ParsedSchedule:
    """Split `/schedule` arguments into when, options and the task's prompt."""
    when, rest = parse_when(text.strip(), tz, now)
    options: dict[str, object] = {}
    words = rest.split()
    while words and words[0].lower() in _OPTIONS:
        key, value = _OPTIONS[words.pop(0).lower()]
        options[key] = value
    prompt = " ".join(words).strip()
    if not prompt:
        raise ScheduleSyntaxError("What should I do then? Add the task after the time.")
    return ParsedSchedule(when, prompt, **options)  # type: ignore[arg-type]


def parse_when(text: str, tz: str, now: float) -> tuple[When, str]:
    """Read the time expression at the start of `text`; returns it and the rest of the text."""
    zone = ZoneInfo(tz)
    for reader in (_in, _cron, _every_days, _every_n, _on, _at):
        found = reader(text, zone, now)
        if found is not None:
            return found
    raise ScheduleSyntaxError(
        "I could not read the time. Examples: in 2h …, tomorrow 8:00 …, at 18:30 …, "
        'on 2026-12-24 09:00 …, every weekday 09:00 …, every 2 hours …, cron "0 9 * * 1-5" …'
    )


def _in(text: str, zone: ZoneInfo, now: float) -> tuple[When, str] | None:
    match = _IN.match(text)
    if not match:
        return None
    seconds = sum(int(n) * _UNITS[unit[0].lower()] for n, unit in _DURATION.findall(match.group(1)))
    if seconds <= 0:
        raise ScheduleSyntaxError("The delay must be at least one minute.")
    at = now + seconds
    return When("once", at, f"once, {_stamp(at, zone)}"), match.group(match.lastindex or 0)


def _at(text: str, zone: ZoneInfo, now: float) -> tuple[When, str] | None:
    match = _AT.match(text)
    if not match or (match.group(3) is None and match.group(4) is None):
        return None  # a bare number is no time: "at 5 things" stays unread
    day_word, rest = (match.group(1) or "").lower(), match.group(5)
    hour, minute = _clock(match.group(2), match.group(3), match.group(4))
    today = datetime.fromtimestamp(now, zone).date()
    day = today + timedelta(days=1) if day_word == "tomorrow" else today
    at = _local(day, hour, minute, zone)
    if at <= now:
        if day_word == "today":
            raise ScheduleSyntaxError(f"{hour:02d}:{minute:02d} today has passed already.")
        at = _local(day + timedelta(days=1), hour, minute, zone)
    return When("once", at, f"once, {_stamp(at, zone)}"), rest


def _on(text: str, zone: ZoneInfo, now: float) -> tuple[When, str] | None:
    match = _ON.match(text)
    if not match:
        return None
    try:
        day = date.fromisoformat(match.group(1))
    except ValueError as exc:
        raise ScheduleSyntaxError(f"{match.group(1)} is not a date.") from exc
    hour, minute = _clock(match.group(2), match.group(3), match.group(4))
    at = _local(day, hour, minute, zone)
    if at <= now:
        raise ScheduleSyntaxError(f"{_stamp(at, zone)} is in the past.")
    return When("once", at, f"once, {_stamp(at, zone)}"), match.group(5)


def _every_days(text: str, zone: ZoneInfo, now: float) -> tuple[When, str] | None:
    match = _EVERY_DAYS.match(text)
    if not match:
        return None
    days = _weekdays(match.group(1))
    hour, minute = _clock(match.group(2), match.group(3), match.group(4))
    expr = f"{minute} {hour} * * {days}"
    label = f"every {match.group(1).lower()} at {hour:02d}:{minute:02d}"
    return _recurring(expr, label, zone, now), match.group(5)


def _every_n(text: str, zone: ZoneInfo, now: float) -> tuple[When, str] | None:
    match = _EVERY_N.match(text)
    if not match:
        return None
    n = int(match.group(1) or 1)
    unit = match.group(2).lower().rstrip("s")
    limit = 60 if unit == "minute" else 24
    if n <= 0 or limit % n:
        raise ScheduleSyntaxError(
            f"every N {unit}s works when N divides {limit} "
            f"(e.g. every 15 minutes, every 2 hours); use cron otherwise."
        )
    expr = f"*/{n} * * * *" if unit == "minute" else f"0 */{n} * * *"
    label = f"every {n} {unit}s" if n > 1 else f"every {unit}"
    return _recurring(expr, label, zone, now), match.group(3)


def _cron(text: str, zone: ZoneInfo, now: float) -> tuple[When, str] | None:
    match = _CRON.match(text)
    if not match:
        return None
    expr = " ".join(match.group(2).split())
    if not valid_cron(expr):
        raise ScheduleSyntaxError(
            f"{expr!r} is not a cron expression "
            "(five fields: minute hour day-of-month month weekday)."
        )
    return _recurring(expr, f"cron {expr}", zone, now), match.group(3)


def _recurring(expr: str, label: str, zone: ZoneInfo, now: float) -> When:
    return When("cron", next_fire(expr, zone.key, now), label, expr)


def _weekdays(spec: str) -> str:
    parts = [p for p in re.split(r"\s*(?:,|and)\s*", spec.lower()) if p]
    out: list[str] = []
    for part in parts:
        if part == "day":
            return "*"
        if part.startswith("weekday"):
            out.append("1-5")
        elif part.startswith("weekend"):
            out.append("0,6")
        else:
            index = next(
                (i for i, d in enumerate(_DAYS) if d.startswith(part[:3]) and d.startswith(part)),
                None,
            )
            if index is None:
                raise ScheduleSyntaxError(f"{part!r} is not a day of the week.")
            out.append(str(index))
    return ",".join(out)


def _clock(hour_text: str, minute_text: str | None, ampm: str | None) -> tuple[int, int]:
    hour, minute = int(hour_text), int(minute_text or 0)
    if ampm:
        if not 1 <= hour <= 12:
            raise ScheduleSyntaxError(f"{hour}{ampm} is not a time.")
        hour = hour % 12 + (12 if ampm.lower() == "pm" else 0)
    if hour > 23 or minute > 59:
        raise ScheduleSyntaxError(f"{hour_text}:{minute_text or '00'} is not a time.")
    return hour, minute


def _local(day: date, hour: int, minute: int, zone: ZoneInfo) -> float:
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=zone).timestamp()


def _stamp(epoch: float, zone: ZoneInfo) -> str:
    return f"{datetime.fromtimestamp(epoch, zone):%a %Y-%m-%d %H:%M}"
