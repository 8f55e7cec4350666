"""The Gateway's thread and run records and the schedule store, on both backends (a SQLite file,
a real PostgreSQL server), and what happens when several processes share them."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.stores.build import Stores, build_stores
from bot.stores.gateway import KEEP_RUNS, ORPHANED, RunRow
from bot.stores.schedules import NewSchedule
from channels.base import ChatRef, UserRef
from tests.bot.test_stores import _settings, gone

CHAT = ChatRef(channel="test", chat_id="c1", chat_type="group")
ANN = UserRef(id="ann", name="Ann")


@pytest.fixture
async def stores(tmp_path: Path, storage: dict[str, Any]) -> AsyncIterator[Stores]:
    opened = build_stores(_settings(tmp_path, storage))
    await opened.open()
    try:
        yield opened
    finally:
        await opened.close()


def _run(run_id: str, thread_id: str = "t1", status: str = "pending") -> RunRow:
    now = time.time()
    return RunRow(
        run_id=run_id,
        thread_id=thread_id,
        assistant_id="lead_agent",
        status=status,
        created_at=now,
        updated_at=now,
        modes=["values"],
        metadata={"k": "v"},
        kwargs={"input": {"messages": ["hi"]}},
    )


# ---------------------------------------------------------------- threads and runs


async def test_a_thread_is_created_once_and_its_metadata_replaced(stores: Stores) -> None:
    records = stores.gateway
    await records.create_thread("t1", {"a": 1})
    await records.create_thread("t1", {"a": 2})  # exists: nothing changes
    first = await records.thread("t1")
    assert first is not None
    assert first.metadata == {"a": 1}
    await records.put_thread("t1", {"a": 3, "b": "ü"}, first.created_at)
    second = await records.thread("t1")
    assert second is not None
    assert second.metadata == {"a": 3, "b": "ü"}
    assert second.created_at == first.created_at
    assert second.updated_at >= first.updated_at
    await records.put_thread("t2", {}, 5.0)  # a chat's thread gets its first own metadata
    assert {t.thread_id for t in await records.threads()} == {"t1", "t2"}
    assert await records.thread("missing") is None


async def test_a_run_walks_its_states_and_keeps_its_values(stores: Stores) -> None:
    records = stores.gateway
    await records.add_run(_run("r1"))
    await records.set_run("r1", "running")
    running = await records.run("t1", "r1")
    assert running is not None
    assert running.status == "running"
    assert not running.finished
    await records.set_run("r1", "success", values={"messages": [{"content": "ok"}]})
    done = await records.run("t1", "r1")
    assert done is not None
    assert (done.status, done.finished, done.error) == ("success", True, None)
    assert done.values == {"messages": [{"content": "ok"}]}
    assert (done.modes, done.metadata, done.kwargs) == (
        ["values"],
        {"k": "v"},
        {"input": {"messages": ["hi"]}},
    )
    await records.add_run(_run("r2"))
    await records.set_run("r2", "error", error={"name": "Boom", "message": "it broke"})
    failed = await records.run("t1", "r2")
    assert failed is not None
    assert failed.error == {"name": "Boom", "message": "it broke"}
    assert await records.run("other-thread", "r1") is None  # a run is found in its thread only


async def test_runs_list_newest_first_and_keep_the_newest_hundred(stores: Stores) -> None:
    records = stores.gateway
    for i in range(KEEP_RUNS + 5):
        await records.add_run(_run(f"r{i}"))
    await records.add_run(_run("other", thread_id="t2"))
    runs = await records.runs("t1")
    assert len(runs) == KEEP_RUNS
    assert runs[0].run_id == f"r{KEEP_RUNS + 4}"
    assert runs[-1].run_id == "r5"
    assert [r.run_id for r in await records.runs("t1", 2)] == [
        f"r{KEEP_RUNS + 4}",
        f"r{KEEP_RUNS + 3}",
    ]
    assert [r.run_id for r in await records.runs("t2")] == ["other"]


async def test_deleting_a_thread_deletes_its_runs(stores: Stores) -> None:
    records = stores.gateway
    await records.create_thread("t1", {})
    await records.create_thread("t2", {})
    await records.add_run(_run("r1"))
    await records.add_run(_run("r2", thread_id="t2"))
    await records.delete_thread("t1")
    assert await records.thread("t1") is None
    assert await records.runs("t1") == []
    assert [r.run_id for r in await records.runs("t2")] == ["r2"]


async def test_unfinished_runs_of_a_stopped_process_are_settled_as_errors(
    tmp_path: Path, storage: dict[str, Any]
) -> None:
    first = build_stores(_settings(tmp_path, storage))
    await first.open()
    await first.gateway.add_run(_run("pending"))
    await first.gateway.add_run(_run("running"))
    await first.gateway.set_run("running", "running")
    await first.gateway.add_run(_run("done"))
    await first.gateway.set_run("done", "success")
    await gone(first)  # it died: no run of it ends any more
    await first.close()
    second = build_stores(_settings(tmp_path, storage))
    await second.open()
    try:
        runs = {r.run_id: r for r in await second.gateway.runs("t1")}
        assert runs["pending"].status == runs["running"].status == "error"
        assert runs["running"].error == ORPHANED
        assert runs["done"].status == "success"
        assert await second.gateway.settle_orphans() == 0
    finally:
        await second.close()


async def test_postgres_leaves_the_runs_of_a_live_process_alone(
    tmp_path: Path, pg_dsn: str
) -> None:
    storage = {"backend": "postgres", "postgres": {"dsn": pg_dsn}}
    one, two = (build_stores(_settings(tmp_path / str(i), storage)) for i in range(2))
    await one.open()
    try:
        await one.gateway.add_run(_run("r1", status="running"))
        await two.open()  # a second process starts next to the one running r1
        run = await two.gateway.run("t1", "r1")
        assert run is not None
        assert run.status == "running"
        await gone(one)  # then `one` dies; `two` notices on its next look
        await two.take_over()
        run = await two.gateway.run("t1", "r1")
        assert run is not None
        assert run.status == "error"
    finally:
        await one.close()
        await two.close()


# ---------------------------------------------------------------- schedules


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


async def test_two_processes_claim_each_due_run_once(
    tmp_path: Path, storage: dict[str, Any]
) -> None:
    one = build_stores(_settings(tmp_path, storage))
    two = build_stores(_settings(tmp_path, storage))
    await one.open()
    await two.open()
    try:
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
    finally:
        await one.close()
        await two.close()


async def test_an_earlier_release_s_thread_records_are_kept(tmp_path: Path) -> None:
    """Before runs were stored, `api_threads` was created outside the migrations (version 3)."""
    from bot.db import MIGRATIONS, open_db
    from bot.stores.gateway.sqlite import SqliteGatewayRecords

    old = sqlite3.connect(tmp_path / "antler.db", isolation_level=None)
    for script in MIGRATIONS[:3]:
        old.executescript(script)
    old.executescript(
        "PRAGMA user_version = 3; CREATE TABLE IF NOT EXISTS api_threads (thread_id TEXT"
        " PRIMARY KEY, metadata TEXT NOT NULL DEFAULT '{}', created_at REAL NOT NULL,"
        " updated_at REAL NOT NULL); INSERT INTO api_threads VALUES ('t-old', '{\"a\": 1}', 1, 2)"
    )
    old.close()
    db = open_db(tmp_path)
    try:
        records = SqliteGatewayRecords(db)
        kept = await records.thread("t-old")
        assert kept is not None
        assert kept.metadata == {"a": 1}
        await records.add_run(_run("r1", thread_id="t-old"))
        assert [r.run_id for r in await records.runs("t-old")] == ["r1"]
    finally:
        db.close()
