"""The delivery journal: its states, what a restart finds, dedupe, pruning (on both backends:
the SQLite file and a real PostgreSQL server) and the SQLite file's migration."""

from __future__ import annotations

import sqlite3
import time
from dataclasses import replace
from pathlib import Path

import pytest

from bot.db import MIGRATIONS, migrate
from bot.stores.journal import Journal, State
from channels.base import ChatRef, InboundMessage, UserRef
from tests.bot.stores_support import Opener, gone


def message(event_id: str = "e1", text: str = "hi") -> InboundMessage:
    chat = ChatRef(channel="telegram", chat_id="555")
    return InboundMessage(
        event_id=event_id,
        chat=chat,
        sender=UserRef(id="42", name="Ada"),
        text=text,
        message_id="7",
        received_at=time.time(),
        raw={"x": 1},
    )


@pytest.fixture
async def journal(processes: Opener) -> Journal:
    return (await processes()).journal


async def test_accept_once_then_duplicate(journal: Journal) -> None:
    j = journal
    assert await j.accept(message()) is True
    assert await j.accept(message()) is False
    await j.forget(message())
    assert await j.accept(message()) is True  # released: the redelivery is taken


async def test_states_from_accepted_to_delivered(journal: Journal) -> None:
    j, msg = journal, message()
    await j.accept(msg)
    assert await j.start(msg) == 1
    await j.keep_handle(msg, {"message_id": 9})
    entry = await j.entry(msg)
    assert entry is not None
    assert entry.state is State.running
    assert entry.handle == {"message_id": 9}
    await j.delivering(msg, {"parts": ["a", "b"]})
    await j.part_sending(msg)
    entry = await j.entry(msg)
    assert entry is not None
    assert entry.sending
    assert entry.parts_done == 0
    await j.part_done(msg, 1, {"message_id": 9, "parts_sent": 1})
    entry = await j.entry(msg)
    assert entry is not None
    assert (entry.state, entry.parts_done, entry.sending) == (State.delivering, 1, False)
    assert entry.final == {"parts": ["a", "b"]}
    await j.delivered(msg)
    entry = await j.entry(msg)
    assert entry is not None
    assert entry.state is State.delivered
    assert entry.msg is None


async def test_unsettled_are_found_again_with_their_message(processes: Opener) -> None:
    first = await processes()
    j = first.journal
    done, running, waiting = message("a"), message("b", "long question"), message("c")
    for msg in (done, running, waiting):
        await j.accept(msg)
    await j.start(done)
    await j.delivered(done)
    await j.start(running)
    await j.start(running)
    await gone(first)
    again = (await processes()).journal  # a new process
    found = {e.key: e for e in await again.unsettled()}
    assert set(found) == {"telegram:b", "telegram:c"}
    assert found["telegram:b"].attempts == 2
    assert found["telegram:b"].state is State.running
    assert found["telegram:b"].msg == running


async def test_failed_keeps_the_reason_and_whether_the_user_was_told(journal: Journal) -> None:
    j, msg = journal, message()
    await j.accept(msg)
    await j.failed(msg, "bot was blocked by the user", told=False)
    entry = await j.entry(msg)
    assert entry is not None
    assert (entry.state, entry.reason, entry.told) == (
        State.failed,
        "bot was blocked by the user",
        False,
    )
    assert await j.count("failed") == 1
    assert [e.key for e in await j.recent(state="failed")] == ["telegram:e1"]


async def test_prune_forgets_only_settled_rows_past_the_window(processes: Opener) -> None:
    stores = await processes()
    j = stores.journal
    old, pending = message("old"), message("pending")
    for msg in (old, pending):
        await j.accept(msg)
    await j.delivered(old)
    assert await j.prune(now=time.time() + 25 * 3600) == 1
    await gone(stores)  # on PostgreSQL: unsettled rows are taken from processes that are gone
    assert [e.key for e in await j.unsettled()] == ["telegram:pending"]


def test_a_ledger_database_is_migrated_into_the_journal(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "antler.db", isolation_level=None)
    db.executescript(MIGRATIONS[0])  # the schema before the journal (user_version 0)
    db.execute("INSERT INTO inbox VALUES ('telegram:1', 'telegram', 'accepted', 1.0, '{}')")
    db.execute("INSERT INTO inbox VALUES ('telegram:2', 'telegram', 'done', 2.0, '')")
    assert migrate(db) == len(MIGRATIONS)
    rows = db.execute("SELECT key, state FROM journal ORDER BY key").fetchall()
    assert rows == [("telegram:1", "accepted"), ("telegram:2", "delivered")]
    assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert migrate(db) == len(MIGRATIONS)  # idempotent


def test_a_senders_roles_survive_the_journal() -> None:
    from bot.stores.journal import dump_message, load_message
    from channels.base import ChatRef, InboundMessage, UserRef

    msg = InboundMessage(
        event_id="e1",
        chat=ChatRef(channel="discord", chat_id="c1", chat_type="group", workspace="g1"),
        sender=UserRef(id="u1", roles=("700", "800")),
        text="hi",
    )
    assert load_message(dump_message(msg)) == msg


def test_an_edit_survives_the_journal() -> None:
    from bot.stores.journal import dump_message, load_message
    from channels.base import Edit

    edit = Edit(message_id="7", version="1700000050", sent_at=1.5, original_event_id="42:7")
    msg = InboundMessage(
        event_id="edit:42:7:1700000050",
        chat=ChatRef(channel="telegram", chat_id="42"),
        sender=UserRef(id="u1"),
        text="new words",
        edit=edit,
    )
    assert load_message(dump_message(msg)) == msg
    assert load_message(dump_message(replace(msg, edit=None))).edit is None
