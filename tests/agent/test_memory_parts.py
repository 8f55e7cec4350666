"""Memory store (on SQLite and on PostgreSQL), extraction parsing, injection selection and title
cleaning (no network)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent.memory.extract import ExtractionError, parse_update
from agent.memory.inject import estimate_tokens, memory_block, rank_facts
from agent.memory.postgres import PostgresMemoryStore
from agent.memory.records import Fact, MemoryUpdate, NewFact
from agent.memory.sqlite import SqliteMemoryStore
from agent.memory.store import MemoryStore
from agent.titles import clean_title


@pytest.fixture
async def store(tmp_path: Path, storage: dict[str, Any]) -> AsyncIterator[MemoryStore]:
    if storage["backend"] == "sqlite":
        db = SqliteMemoryStore(tmp_path / "memory.db")
        yield db
        db.close()
        return
    from agent.memory import postgres as pg_store
    from bot.config.schema import PostgresConfig
    from bot.stores import pg

    cfg = PostgresConfig.model_validate(storage["postgres"])
    pool = pg.make_pool(cfg)
    await pg.open_pool(pool, cfg.dsn.get_secret_value(), 5)  # type: ignore[union-attr]
    await pg.migrate(pool, "memory", pg_store.MIGRATIONS)
    try:
        yield PostgresMemoryStore(pool)
    finally:
        await pool.close()


async def add(
    store: MemoryStore,
    person: str,
    *facts: tuple[str, float],
    max_facts: int = 100,
    done: list[int] | None = None,
) -> None:
    update = MemoryUpdate(contexts={}, facts=tuple(NewFact(c, "knowledge", p) for c, p in facts))
    await store.apply(person, update, source="t1", max_facts=max_facts, threshold=0.7, done=done)


async def test_threshold_dedupe_and_eviction(store: MemoryStore) -> None:
    await add(store, "p", ("Likes tea", 0.9), ("Maybe likes cats", 0.5), ("likes  TEA.", 0.95))
    assert [f.content for f in await store.facts("p")] == ["Likes tea"]
    await add(store, "p", ("Uses vim", 0.8), ("Lives in Oslo", 0.99), max_facts=2)
    assert sorted(f.content for f in await store.facts("p")) == ["Likes tea", "Lives in Oslo"]


async def test_people_are_separate_and_links_resolve(store: MemoryStore) -> None:
    await add(store, "slack:U1", ("Likes tea", 0.9))
    assert await store.facts("telegram:7") == []
    await store.link("telegram:7", "slack:U1")
    assert await store.person("telegram:7") == "slack:U1"
    assert await store.person("slack:U2") == "slack:U2"


async def test_update_contexts_removals_and_pending_in_one_transaction(store: MemoryStore) -> None:
    await add(store, "p", ("Works at Acme", 0.9))
    await store.add_pending("p", "t1", "I moved to Initech", "Congrats")
    pending = await store.pending()
    fact_id = (await store.facts("p"))[0].id
    update = MemoryUpdate(
        contexts={"work": "Engineer at Initech", "bogus": "x"},
        facts=(NewFact("Works at Initech", "context", 0.9),),
        remove=(fact_id,),
    )
    await store.apply(
        "p", update, source="t1", max_facts=10, threshold=0.7, done=[p.id for p in pending]
    )
    assert [f.content for f in await store.facts("p")] == ["Works at Initech"]
    assert await store.contexts("p") == {"work": "Engineer at Initech"}
    assert not await store.has_pending()


async def test_failed_passes_are_retried_then_dropped(store: MemoryStore) -> None:
    await store.add_pending("p", "t1", "hello", "hi")
    ids = [p.id for p in await store.pending()]
    await store.failed_pending(ids)
    await store.failed_pending(ids)
    assert await store.has_pending()
    await store.failed_pending(ids)
    assert not await store.has_pending()


async def test_clear_forgets_everything_of_one_person(store: MemoryStore) -> None:
    await add(store, "a", ("A fact", 0.9))
    await add(store, "b", ("B fact", 0.9))
    await store.add_pending("a", "t", "x", "y")
    assert await store.clear("a") == 1
    assert await store.facts("a") == []
    assert not await store.has_pending()
    assert [f.content for f in await store.facts("b")] == ["B fact"]


async def test_admin_edits_people_and_context_times(store: MemoryStore) -> None:
    """What the Gateway's memory routes use: add, edit, replace, who is remembered, when."""
    added = await store.add_fact("p", NewFact("Has a cat", "context", 0.6), source="api")
    assert added is not None
    assert (bool(added.id), added.source) == (True, "api")
    assert await store.add_fact("p", NewFact("has a  CAT.", "context", 0.9), source="api") is None
    assert await store.edit_fact("p", added.id, content="Has two cats", confidence=0.8)
    assert not await store.edit_fact("q", added.id, content="not q's fact")
    [fact] = await store.facts("p")
    assert (fact.content, fact.category, fact.confidence) == ("Has two cats", "context", 0.8)
    assert fact.updated_at >= fact.created_at > 0
    await add(store, "q", ("Likes tea", 0.9))
    await store.replace(
        "p",
        {"work": "Engineer", "bogus": "x", "personal": " "},
        [NewFact("Lives in Oslo", "knowledge", 0.9)],
        source="import",
    )
    assert [(f.content, f.source) for f in await store.facts("p")] == [("Lives in Oslo", "import")]
    times = await store.context_times("p")
    assert list(times) == ["work"]
    assert times["work"][0] == "Engineer"
    assert times["work"][1] > 0
    people = await store.people()
    assert sorted((person, n) for person, n, _ in people) == [("p", 1), ("q", 1)]
    assert people[0][2] >= people[1][2]  # most recent first


@pytest.mark.parametrize("storage", ["postgres"], indirect=True)
async def test_postgres_pending_is_claimed_by_one_flush(store: MemoryStore) -> None:
    await store.add_pending("p", "t1", "hello", "hi")
    first = await store.pending()
    assert [ex.user_text for ex in first] == ["hello"]
    assert await store.pending() == []  # another process flushing now finds nothing to take
    await store.failed_pending([ex.id for ex in first])
    assert [ex.user_text for ex in await store.pending()] == ["hello"]  # released for a retry


def test_parse_update_is_tolerant_but_strict_about_json() -> None:
    update = parse_update("""```json
    {"work": "Builds bots", "personal": null, "top_of_mind": "",
     "facts": [{"content": "Prefers Python", "category": "PREFERENCE", "confidence": 0.9},
               {"content": "", "confidence": 1}, {"content": "x", "confidence": "high"},
               {"content": "Odd", "category": "weird", "confidence": 7}],
     "remove": [3, "4", "x"]}
    ```""")
    assert update.contexts == {"work": "Builds bots"}
    assert update.facts == (
        NewFact("Prefers Python", "preference", 0.9),
        NewFact("Odd", "context", 1.0),
    )
    assert update.remove == (3, 4)
    with pytest.raises(ExtractionError):
        parse_update("echo: hello")
    with pytest.raises(ExtractionError):
        parse_update("{not json}")


def test_injection_is_capped_and_ranked() -> None:
    facts = [
        Fact(i, f"Fact number {i} about gardening " + "x" * 40, "knowledge", 0.8)
        for i in range(1, 200)
    ]
    facts.append(Fact(500, "Actually prefers tulips", "correction", 0.7))
    facts.append(Fact(501, "Keeps bees in the garden", "knowledge", 0.75))
    block = memory_block({"work": "Gardener"}, facts, "how are my bees doing?", 300)
    assert estimate_tokens(block) <= 300
    assert block.startswith("<memory>")
    assert block.endswith("</memory>")
    assert "Work: Gardener" in block
    lines = block.splitlines()
    assert lines.index("- Actually prefers tulips") < lines.index("- Keeps bees in the garden")
    assert rank_facts(facts, "bees")[1].id == 501
    assert memory_block({}, [], "hi", 2000) == ""


def test_title_cleaning() -> None:
    assert clean_title('Title: "Growing kumquats on a sunny balcony, today."\nmore', 6, 60) == (
        "Growing kumquats on a sunny balcony"
    )
    long = clean_title("Supercalifragilistic " * 3, 6, 30)
    assert len(long) <= 30
    assert clean_title("", 6, 60) == ""
