"""The Gateway's thread and run records on both backends (a SQLite file, a real PostgreSQL
server), and what happens when several processes share them."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from bot.stores.build import Stores, build_stores
from bot.stores.gateway import KEEP_RUNS, ORPHANED, RunRow
from tests.bot.stores_support import gone, store_settings


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
    first = build_stores(store_settings(tmp_path, storage))
    await first.open()
    await first.gateway.add_run(_run("pending"))
    await first.gateway.add_run(_run("running"))
    await first.gateway.set_run("running", "running")
    await first.gateway.add_run(_run("done"))
    await first.gateway.set_run("done", "success")
    await gone(first)  # it died: no run of it ends any more
    await first.close()
    second = build_stores(store_settings(tmp_path, storage))
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
    one, two = (build_stores(store_settings(tmp_path / str(i), storage)) for i in range(2))
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
