"""Memory store, extraction parsing, injection selection and title cleaning (no network)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.memory.extract import ExtractionError, parse_update
from agent.memory.inject import estimate_tokens, memory_block, rank_facts
from agent.memory.store import Fact, MemoryStore, MemoryUpdate, NewFact
from agent.titles import clean_title


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    db = MemoryStore(tmp_path / "memory.db")
    yield db
    db.close()


def add(store: MemoryStore, person: str, *facts: tuple[str, float], max_facts: int = 100,
        done: list[int] | None = None) -> None:
    update = MemoryUpdate(contexts={}, facts=tuple(NewFact(c, "knowledge", p) for c, p in facts))
    store.apply(person, update, source="t1", max_facts=max_facts, threshold=0.7, done=done)


def test_threshold_dedupe_and_eviction(store: MemoryStore) -> None:
    add(store, "p", ("Likes tea", 0.9), ("Maybe likes cats", 0.5), ("likes  TEA.", 0.95))
    assert [f.content for f in store.facts("p")] == ["Likes tea"]
    add(store, "p", ("Uses vim", 0.8), ("Lives in Oslo", 0.99), max_facts=2)
    assert sorted(f.content for f in store.facts("p")) == ["Likes tea", "Lives in Oslo"]


def test_people_are_separate_and_links_resolve(store: MemoryStore) -> None:
    add(store, "slack:U1", ("Likes tea", 0.9))
    assert store.facts("telegram:7") == []
    store.link("telegram:7", "slack:U1")
    assert store.person("telegram:7") == "slack:U1"
    assert store.person("slack:U2") == "slack:U2"


def test_update_contexts_removals_and_pending_in_one_transaction(store: MemoryStore) -> None:
    add(store, "p", ("Works at Acme", 0.9))
    store.add_pending("p", "t1", "I moved to Initech", "Congrats")
    pending = store.pending()
    fact_id = store.facts("p")[0].id
    update = MemoryUpdate(contexts={"work": "Engineer at Initech", "bogus": "x"},
                          facts=(NewFact("Works at Initech", "context", 0.9),),
                          remove=(fact_id,))
    store.apply("p", update, source="t1", max_facts=10, threshold=0.7,
                done=[p.id for p in pending])
    assert [f.content for f in store.facts("p")] == ["Works at Initech"]
    assert store.contexts("p") == {"work": "Engineer at Initech"}
    assert not store.has_pending()


def test_failed_passes_are_retried_then_dropped(store: MemoryStore) -> None:
    store.add_pending("p", "t1", "hello", "hi")
    ids = [p.id for p in store.pending()]
    store.failed_pending(ids)
    store.failed_pending(ids)
    assert store.has_pending()
    store.failed_pending(ids)
    assert not store.has_pending()


def test_clear_forgets_everything_of_one_person(store: MemoryStore) -> None:
    add(store, "a", ("A fact", 0.9))
    add(store, "b", ("B fact", 0.9))
    store.add_pending("a", "t", "x", "y")
    assert store.clear("a") == 1
    assert store.facts("a") == []
    assert not store.has_pending()
    assert [f.content for f in store.facts("b")] == ["B fact"]


def test_parse_update_is_tolerant_but_strict_about_json() -> None:
    update = parse_update("""```json
    {"work": "Builds bots", "personal": null, "top_of_mind": "",
     "facts": [{"content": "Prefers Python", "category": "PREFERENCE", "confidence": 0.9},
               {"content": "", "confidence": 1}, {"content": "x", "confidence": "high"},
               {"content": "Odd", "category": "weird", "confidence": 7}],
     "remove": [3, "4", "x"]}
    ```""")
    assert update.contexts == {"work": "Builds bots"}
    assert update.facts == (NewFact("Prefers Python", "preference", 0.9),
                            NewFact("Odd", "context", 1.0))
    assert update.remove == (3, 4)
    with pytest.raises(ExtractionError):
        parse_update("echo: hello")
    with pytest.raises(ExtractionError):
        parse_update("{not json}")


def test_injection_is_capped_and_ranked() -> None:
    facts = [Fact(i, f"Fact number {i} about gardening " + "x" * 40, "knowledge", 0.8)
             for i in range(1, 200)]
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
        "Growing kumquats on a sunny balcony")
    long = clean_title("Supercalifragilistic " * 3, 6, 30)
    assert len(long) <= 30
    assert clean_title("", 6, 60) == ""
