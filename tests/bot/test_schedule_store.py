"""The schedule store on both backends (a SQLite file, a real PostgreSQL server): schedules,
their runs, time zones, and two processes claiming the same due runs."""

from __future__ import annotations

import asyncio

import pytest

from bot.stores.build import Stores
from bot.stores.schedules import NewSchedule
from channels.base import ChatRef, UserRef
from tests.bot.stores_support import Opener

CHAT = ChatRef(channel="test", chat_id="c1", chat_type="group")
ANN = UserRef(id="ann", name="Ann")


def _new(prompt: str = "report", first_run: float = 1000.0) -> NewSchedule:
    return NewSchedule(
        chat=CHAT,
        creator=ANN,
        prompt=prompt,
        kind="cron",
        tz="UTC",
        label="every hour",
        first_run=first_run,
        expr="0 * * * *",
        fresh_thread=True,
    )


async def test_schedules_are_stored_and_changed(stores: Stores) -> None:
    store = stores.schedules
    made = await store.add(_new())
    assert made.id > 0
    assert made.chat == CHAT
    assert made.creator == ANN
    assert made.fresh_thread
    assert await store.get(made.id) == made
    assert [s.id for s in await store.for_chat(CHAT.key)] == [made.id]
    assert [s.id for s in await store.for_conversation(CHAT.key)] == [made.id]
    assert await store.count_live(chat=CHAT.key) == 1
    assert await store.count_live(creator_key=made.creator_key) == 1
    paused = await store.set_state(made.id, "paused", "by Ann")
    assert paused is not None
    assert (paused.state, paused.reason) == ("paused", "by Ann")
    assert await store.due(5000.0) == []
    resumed = await store.set_state(made.id, "active", "", next_run=2000.0)
    assert resumed is not None
    assert resumed.next_run == 2000.0
    updated = await store.update(made.id, prompt="new report", fresh_thread=False)
    assert updated is not None
    assert (updated.prompt, updated.fresh_thread) == ("new report", False)
    with pytest.raises(ValueError):
        await store.update(made.id, state="done")
    assert await store.next_due() == 2000.0
    assert [s.id for s in await store.all()] == [made.id]
    await store.set_timezone(CHAT.key, "Europe/Berlin")
    await store.set_timezone(CHAT.key, "Asia/Tokyo")
    assert await store.timezone(CHAT.key) == "Asia/Tokyo"
    assert await store.timezone("nobody") is None


async def test_a_due_run_is_claimed_once_and_walks_its_states(stores: Stores) -> None:
    store = stores.schedules
    made = await store.add(_new(first_run=1000.0))
    assert await store.claim(made, 4600.0, run_state="claimed", late=True, now=1001.0)
    assert not await store.claim(made, 4600.0, run_state="claimed", late=True, now=1001.0)
    moved = await store.get(made.id)
    assert moved is not None
    assert (moved.next_run, moved.last_run) == (4600.0, 1000.0)
    [run] = await store.runs("claimed")
    assert (run.schedule_id, run.due_at, run.late) == (made.id, 1000.0, True)
    await store.set_run(run, "queued")
    assert await store.runs("claimed") == []
    await store.set_run(run, "delivered", "ok")
    assert [(r.state, r.reason) for r in await store.runs_of(made.id)] == [("delivered", "ok")]
    assert await store.add_run(made.id, 3000.0, 3000.0)  # triggered by hand
    assert not await store.add_run(made.id, 3000.0, 3000.0)
    last = await store.get(made.id)
    assert last is not None
    assert await store.claim(last, None, run_state="claimed", late=False, now=4600.0)
    finished = await store.get(made.id)
    assert finished is not None
    assert (finished.state, finished.next_run) == ("done", None)


async def test_two_processes_claim_each_due_run_once(processes: Opener) -> None:
    one, two = await processes(), await processes()
    made = [await one.schedules.add(_new(f"task {i}")) for i in range(10)]
    # both see every schedule due and claim each at the same moment
    seen = [await s.schedules.due(1500.0) for s in (one, two)]
    claims = await asyncio.gather(
        *(
            s.schedules.claim(due, 4600.0, run_state="claimed", late=False, now=1500.0)
            for pair in zip(*seen, strict=True)
            for s, due in zip((one, two), pair, strict=True)
        )
    )
    assert sum(claims) == len(made)
    runs = await two.schedules.runs("claimed")
    assert sorted(r.schedule_id for r in runs) == sorted(s.id for s in made)
    assert all(s.next_run == 4600.0 for s in await one.schedules.all())


async def test_lists_count_only_live_tasks_and_unknown_ids_change_nothing(stores: Stores) -> None:
    store = stores.schedules
    first, second, third = [await store.add(_new(f"task {i}", 3000.0 - i)) for i in range(3)]
    await store.set_state(second.id, "cancelled", "by Ann")
    await store.set_state(third.id, "done")
    assert [s.id for s in await store.for_chat(CHAT.key)] == [first.id]
    assert await store.count_live(chat=CHAT.key) == 1
    assert [s.id for s in await store.for_conversation(CHAT.key)] == [first.id, second.id, third.id]
    assert [s.id for s in await store.all(2)] == [third.id, second.id]
    assert [s.id for s in await store.due(5000.0)] == [first.id]
    assert await store.set_state(999, "paused") is None
    assert await store.update(999, prompt="x") is None
    assert await store.get(999) is None


async def test_a_task_changed_after_it_was_seen_due_is_not_claimed(stores: Stores) -> None:
    store = stores.schedules
    seen = await store.add(_new(first_run=1000.0))
    await store.update(seen.id, next_run=2000.0)  # moved (an edit) after the scheduler looked
    assert not await store.claim(seen, 4600.0, run_state="claimed", late=False, now=1001.0)
    assert await store.runs("claimed") == []
    now = await store.get(seen.id)
    assert now is not None
    assert await store.claim(now, 4600.0, run_state="queued", late=False, now=2001.0)
    assert [(r.due_at, r.state) for r in await store.runs_of(seen.id)] == [(2000.0, "queued")]


async def test_runs_of_a_task_are_newest_first_and_limited(stores: Stores) -> None:
    store = stores.schedules
    made = await store.add(_new())
    for due in (100.0, 300.0, 200.0):
        assert await store.add_run(made.id, due, due)
    assert [r.due_at for r in await store.runs_of(made.id, limit=2)] == [300.0, 200.0]
    assert [r.state for r in await store.runs("claimed")] == ["claimed"] * 3
