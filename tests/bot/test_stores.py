"""The stores behind their interfaces, on both backends (SQLite file, a real PostgreSQL server):
the delivery journal, the conversations, and what happens when several processes share them."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from bot.config.schema import ConfigError
from bot.stores.build import Stores, build_stores
from bot.stores.journal import State
from channels.base import ChatRef, InboundMessage, UserRef
from tests.bot.stores_support import gone, store_settings


def _msg(event_id: str = "e1", text: str = "hello", chat_id: str = "c1") -> InboundMessage:
    return InboundMessage(
        event_id=event_id,
        chat=ChatRef(channel="test", chat_id=chat_id),
        sender=UserRef(id="u1", name="Ann"),
        text=text,
        message_id=event_id,
        received_at=time.time(),
        raw={"token": "t-1"},
    )


# ---------------------------------------------------------------- the journal


async def test_journal_accepts_an_event_once_and_again_after_forget(stores: Stores) -> None:
    journal, msg = stores.journal, _msg()
    assert await journal.accept(msg) is True
    assert await journal.accept(msg) is False
    await journal.forget(msg)
    assert await journal.accept(msg) is True


async def test_journal_walks_the_states_and_reads_back(stores: Stores) -> None:
    journal, msg = stores.journal, _msg(text="what is up")
    await journal.accept(msg)
    assert await journal.start(msg) == 1
    assert await journal.start(msg) == 2
    await journal.keep_handle(msg, {"message_id": "m9"})
    await journal.delivering(msg, {"text": "the answer", "files": []})
    await journal.part_sending(msg)
    entry = await journal.entry(msg)
    assert entry is not None
    assert entry.state is State.delivering
    assert entry.sending is True
    assert entry.handle == {"message_id": "m9"}
    assert entry.final == {"text": "the answer", "files": []}
    assert entry.msg is not None
    assert entry.msg.text == "what is up"
    assert entry.msg.raw == {"token": "t-1"}
    await journal.part_done(msg, 1, {"message_id": "m9", "parts": ["m10"]})
    entry = await journal.entry(msg)
    assert entry is not None
    assert (entry.parts_done, entry.sending) == (1, False)
    assert entry.handle == {"message_id": "m9", "parts": ["m10"]}
    await gone(stores)
    assert [e.key for e in await journal.unsettled()] == [entry.key]
    await journal.delivered(msg)
    entry = await journal.entry(msg)
    assert entry is not None
    assert entry.state is State.delivered
    assert entry.msg is None  # the payload is dropped once settled
    assert await journal.unsettled() == []
    assert await journal.count("delivered") == 1


async def test_journal_failed_recent_and_prune(stores: Stores) -> None:
    journal = stores.journal
    first, second, third = _msg("e1"), _msg("e2"), _msg("e3")
    for msg in (first, second, third):
        await journal.accept(msg)
    await journal.failed(first, "model down", told=True)
    await journal.delivered(second)
    failed = await journal.recent(state="failed")
    assert [(e.reason, e.told) for e in failed] == [("model down", True)]
    assert len(await journal.recent(limit=2)) == 2
    assert await journal.prune(now=time.time() + 10) == 0  # inside the dedupe window
    assert await journal.prune(now=time.time() + 25 * 3600) == 2  # settled and old: gone
    await gone(stores)
    assert [e.key for e in await journal.unsettled()] == ["test:e3"]  # unsettled stays


async def test_journal_unsettled_is_oldest_first(stores: Stores) -> None:
    journal = stores.journal
    for i in range(3):
        await journal.accept(_msg(f"e{i}"))
    await gone(stores)
    assert [e.key for e in await journal.unsettled()] == ["test:e0", "test:e1", "test:e2"]


# ---------------------------------------------------------------- conversations


async def test_conversation_is_created_once_and_keeps_settings(stores: Stores) -> None:
    conversations, chat = stores.conversations, ChatRef(channel="test", chat_id="c1")
    first = await conversations.get_or_create(chat)
    assert await conversations.get_or_create(chat) == first
    updated = await conversations.update(first.key, model="smart", thinking=True, title="Plans")
    assert (updated.model, updated.thinking, updated.title) == ("smart", True, "Plans")
    fresh = await conversations.new_thread(chat)
    assert fresh.thread_id != first.thread_id
    assert (fresh.model, fresh.thinking) == ("smart", True)
    assert await conversations.by_thread(fresh.thread_id) == fresh
    assert await conversations.by_thread(first.thread_id) is None
    assert await conversations.get(first.key) == fresh


async def test_a_new_thread_of_a_chat_starts_with_the_chat_default_model(stores: Stores) -> None:
    """/models in a main chat sets the model its new threads start with (both backends)."""
    conversations = stores.conversations
    main = ChatRef(channel="test", chat_id="c1")
    assert (await conversations.get_or_create(main.with_topic("t1"))).model is None
    await conversations.get_or_create(main)
    await conversations.update(main.key, model="smart")
    assert (await conversations.get_or_create(main.with_topic("t2"))).model == "smart"
    started_before = await conversations.get(main.with_topic("t1").key)
    assert started_before is not None
    assert started_before.model is None


async def test_conversation_update_refuses_bad_fields_and_keys(stores: Stores) -> None:
    conversations = stores.conversations
    conv = await conversations.get_or_create(ChatRef(channel="test", chat_id="c1"))
    with pytest.raises(ValueError, match="not settable"):
        await conversations.update(conv.key, channel="other")
    with pytest.raises(KeyError):
        await conversations.update("test:nobody", model="x")


async def test_conversations_list_newest_first_and_count(stores: Stores) -> None:
    conversations = stores.conversations
    for chat_id in ("a", "b", "c"):
        await conversations.get_or_create(ChatRef(channel="test", chat_id=chat_id))
    await conversations.update("test:a", title="touched last")
    assert await conversations.count() == 3
    listed = await conversations.all(limit=2)
    assert listed[0].chat_id == "a"
    assert len(listed) == 2
    assert len(await conversations.all(limit=10, offset=2)) == 1


# ---------------------------------------------------------------- several processes


async def test_two_processes_accept_the_same_event_once(
    tmp_path: Path, storage: dict[str, Any]
) -> None:
    one = build_stores(store_settings(tmp_path, storage))
    two = build_stores(store_settings(tmp_path, storage))
    await one.open()
    await two.open()
    try:
        results = await asyncio.gather(
            *(s.journal.accept(_msg(f"e{i}")) for i in range(20) for s in (one, two))
        )
        assert sum(results) == 20
        chats = [ChatRef(channel="test", chat_id=f"c{i % 5}") for i in range(20)]
        convs = await asyncio.gather(
            *(s.conversations.get_or_create(chat) for chat in chats for s in (one, two))
        )
        threads: dict[str, set[str]] = {c.key: set() for c in convs}
        for conv in convs:
            threads[conv.key].add(conv.thread_id)
        assert all(len(ids) == 1 for ids in threads.values()), threads
        assert await one.conversations.count() == 5
    finally:
        await one.close()
        await two.close()


# ---------------------------------------------------------------- PostgreSQL only


async def test_postgres_schema_is_migrated_once(tmp_path: Path, pg_dsn: str) -> None:
    storage = {"backend": "postgres", "postgres": {"dsn": pg_dsn}}
    for _ in range(2):
        stores = build_stores(store_settings(tmp_path, storage))
        await stores.open()
        await stores.close()
    with psycopg.connect(pg_dsn) as conn:
        rows = conn.execute(
            "SELECT component, version FROM antler_migrations ORDER BY component"
        ).fetchall()
    assert rows == [
        ("access", 1),
        ("access", 2),
        ("choices", 1),
        ("conversations", 1),
        ("conversations", 2),  # the agent column
        ("gateway", 1),
        ("journal", 1),
        ("memory", 1),
        ("schedules", 1),
        ("usage", 1),
    ]
    with psycopg.connect(pg_dsn) as conn:  # LangGraph's own tables come with the runner's start
        tables = {
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables"
                " WHERE table_schema = current_schema()"
            ).fetchall()
        }
    assert {"antler_journal", "antler_conversations", "antler_memory_facts"} <= tables


async def test_processes_starting_together_set_up_the_checkpoint_tables_once(
    tmp_path: Path, pg_dsn: str
) -> None:
    """LangGraph's setup builds indexes CONCURRENTLY, which waits for every transaction in the
    database to end: a process waiting for the setup lock inside a statement would be waited
    for while it waits for the lock (a deadlock only the statement timeout ends)."""
    storage = {"backend": "postgres", "postgres": {"dsn": pg_dsn, "statement_timeout_seconds": 5}}
    starting = [build_stores(store_settings(tmp_path / str(i), storage)) for i in range(3)]
    for stores in starting:
        await stores.open()
    try:
        savers = await asyncio.gather(*(s.checkpoints.open() for s in starting))
        assert len(savers) == 3
        with psycopg.connect(pg_dsn) as conn:
            (count,) = conn.execute("SELECT count(*) FROM checkpoint_migrations").fetchone() or (0,)
        assert count > 0
    finally:
        for stores in starting:
            await stores.close()


@pytest.mark.parametrize(
    ("dsn", "said"),
    [
        ("postgresql://antler:s3cret-pw@127.0.0.1:1/test", "connection refused"),
        ("postgresql://no_such_role_x:s3cret-pw@{host}/test", 'role "no_such_role_x"'),
    ],
)
async def test_unreachable_postgres_is_named_in_plain_words(
    tmp_path: Path, pg_server: str, dsn: str, said: str
) -> None:
    host = psycopg.conninfo.conninfo_to_dict(pg_server)
    dsn = dsn.format(host=f"{host.get('host', '127.0.0.1')}:{host.get('port', 5432)}")
    storage = {"backend": "postgres", "postgres": {"dsn": dsn, "connect_timeout_seconds": 2}}
    stores = build_stores(store_settings(tmp_path, storage))
    with pytest.raises(ConfigError) as err:
        await stores.open()
    [problem] = err.value.problems
    assert problem.startswith("storage.postgres.dsn: cannot use the PostgreSQL database at ")
    assert said in problem
    assert "s3cret-pw" not in problem


async def test_postgres_connection_lost_between_statements_is_taken_again(
    tmp_path: Path, pg_dsn: str
) -> None:
    storage = {"backend": "postgres", "postgres": {"dsn": pg_dsn}}
    stores = build_stores(store_settings(tmp_path, storage))
    await stores.open()
    try:
        await stores.journal.accept(_msg("e1"))
        app_name = psycopg.conninfo.conninfo_to_dict(pg_dsn)["application_name"]
        with psycopg.connect(pg_dsn, autocommit=True, application_name="killer") as conn:
            killed = conn.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE application_name = %s",
                (app_name,),
            ).fetchone()
        assert killed is not None
        assert killed[0] >= 1
        assert await stores.journal.accept(_msg("e2")) is True
        assert await stores.journal.accept(_msg("e1")) is False
        await gone(stores)
        assert len(await stores.journal.unsettled()) == 2
    finally:
        await stores.close()


async def test_postgres_transaction_on_a_lost_connection_is_run_again_whole(
    tmp_path: Path, pg_dsn: str
) -> None:
    """A store's transaction (here a schedule claim: move the task on, record its run) whose
    connection the server dropped is run again from its start on a fresh connection."""
    from bot.stores.schedules import NewSchedule

    storage = {"backend": "postgres", "postgres": {"dsn": pg_dsn}}
    stores = build_stores(store_settings(tmp_path, storage))
    await stores.open()
    try:
        chat, ann = ChatRef(channel="test", chat_id="c1"), UserRef(id="ann", name="Ann")
        new = NewSchedule(chat, ann, "report", "once", "UTC", "once", first_run=1000.0)
        task = await stores.schedules.add(new)
        app_name = psycopg.conninfo.conninfo_to_dict(pg_dsn)["application_name"]
        with psycopg.connect(pg_dsn, autocommit=True, application_name="killer") as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = %s",
                (app_name,),
            )
        assert await stores.schedules.claim(task, None, run_state="claimed", late=False, now=1.0)
        assert [r.due_at for r in await stores.schedules.runs("claimed")] == [1000.0]
    finally:
        await stores.close()


def test_postgres_backend_without_dsn_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        store_settings(tmp_path, {"backend": "postgres"})
    assert err.value.problems[0].startswith("storage.postgres.dsn: required")


@pytest.mark.parametrize(
    ("postgres", "said"),
    [
        ({"dsn": "not a dsn"}, "storage.postgres.dsn: not a PostgreSQL connection string"),
        (
            {"dsn": "postgresql://h/db", "pool_min": 5, "pool_max": 3},
            "storage.postgres.pool_min: 5 is more than storage.postgres.pool_max (3)",
        ),
        ({"dsn": "postgresql://h/db", "pool_max": 1}, "storage.postgres.pool_max: "),
    ],
)
def test_postgres_settings_are_checked(tmp_path: Path, postgres: dict[str, Any], said: str) -> None:
    with pytest.raises(ConfigError) as err:
        store_settings(tmp_path, {"backend": "postgres", "postgres": postgres})
    assert any(p.startswith(said) for p in err.value.problems), err.value.problems


async def test_sqlite_backend_reports_itself_in_status(tmp_path: Path) -> None:
    stores = build_stores(store_settings(tmp_path, {}))
    await stores.open()
    try:
        assert stores.status() == {"backend": "sqlite", "reachable": True}
        assert stores.memory is None  # the agent's own file under data_dir
    finally:
        await stores.close()


async def test_postgres_unsettled_leaves_running_processes_alone(
    tmp_path: Path, pg_dsn: str
) -> None:
    storage = {"backend": "postgres", "postgres": {"dsn": pg_dsn}}
    one, two, three = (build_stores(store_settings(tmp_path / str(i), storage)) for i in range(3))
    taken: list[list[str]] = []

    async def resume(entries: list[Any]) -> None:
        taken.append([e.key for e in entries])

    two.on_orphans = resume
    for stores in (one, two):
        await stores.open()
    try:
        await one.journal.accept(_msg("e1"))
        await one.journal.start(_msg("e1"))
        assert await two.journal.unsettled() == []  # `one` is answering it right now
        assert await two.take_over() == 0
        await gone(one)  # `one` dies mid-answer
        assert await two.take_over() == 1
        assert taken == [["test:e1"]]
        await three.open()  # a process starting now leaves it to `two`, which took it
        assert await three.journal.unsettled() == []
        await gone(two)
        assert [e.key for e in await three.journal.unsettled()] == ["test:e1"]
    finally:
        for stores in (one, two, three):
            await stores.close()
