"""The access store on both backends: roles given by the API, one-time /link codes, failed tries,
the append-only audit trail with filters, paging and retention; and the memory store's links."""

from __future__ import annotations

from pathlib import Path

from agent.memory.postgres import PostgresMemoryStore
from agent.memory.sqlite import SqliteMemoryStore
from agent.memory.store import MemoryStore
from bot.access.store import AuditEntry, AuditQuery
from bot.stores.build import Stores


def memory_of(stores: Stores, tmp_path: Path) -> MemoryStore:
    return stores.memory or SqliteMemoryStore(tmp_path / "memory.db")


async def test_roles_are_set_replaced_and_taken_back(stores: Stores) -> None:
    access = stores.access
    assert await access.role("telegram:42") is None
    await access.set_role("telegram:42", "guest", "admin token")
    await access.set_role("telegram:42", "admin", "admin token")
    assert await access.role("telegram:42") == "admin"
    assert await access.roles() == {"telegram:42": "admin"}
    await access.set_role("telegram:42", None, "admin token")
    assert await access.role("telegram:42") is None


async def test_a_code_is_taken_once_and_not_after_it_expires(stores: Stores) -> None:
    access = stores.access
    await access.put_code("h1", "telegram:42", expires_at=200.0)
    assert await access.take_code("h1", now=100.0) == "telegram:42"
    assert await access.take_code("h1", now=100.0) is None  # single use
    await access.put_code("h2", "telegram:42", expires_at=200.0)
    await access.put_code("h3", "telegram:42", expires_at=200.0)  # replaces h2
    assert await access.take_code("h2", now=100.0) is None
    assert await access.take_code("h3", now=300.0) is None  # expired (and gone)
    assert await access.take_code("h3", now=100.0) is None


async def test_tries_are_counted_and_cleared(stores: Stores) -> None:
    access = stores.access
    assert await access.tries("slack:U1") == (0, 0.0)
    await access.set_tries("slack:U1", 3, 0.0)
    await access.set_tries("slack:U1", 5, 900.0)
    assert await access.tries("slack:U1") == (5, 900.0)
    await access.set_tries("slack:U1", 0, 0.0)
    assert await access.tries("slack:U1") == (0, 0.0)


async def test_the_audit_filters_pages_and_prunes(stores: Stores) -> None:
    access = stores.access
    for i in range(5):
        await access.append(
            AuditEntry(
                kind="tool" if i % 2 == 0 else "denied",
                person="telegram:42" if i < 3 else "slack:U1",
                chat="telegram:42",
                subject=f"tool{i}",
                detail={"args": {"n": i}},
                duration_ms=1.5,
                at=100.0 + i,
            )
        )
    newest = await access.audit(AuditQuery(limit=2))
    assert [e.subject for e in newest] == ["tool4", "tool3"]
    older = await access.audit(AuditQuery(limit=2, before_id=newest[-1].id))
    assert [e.subject for e in older] == ["tool2", "tool1"]
    tools = await access.audit(AuditQuery(kind="tool", person="telegram:42"))
    assert [e.subject for e in tools] == ["tool2", "tool0"]
    assert tools[0].detail == {"args": {"n": 2}}
    assert tools[0].duration_ms == 1.5
    since = await access.audit(AuditQuery(since=103.0))
    assert [e.subject for e in since] == ["tool4", "tool3"]
    assert await access.prune(older_than=102.0) == 2
    assert [e.subject for e in await access.audit(AuditQuery())] == ["tool4", "tool3", "tool2"]


async def test_links_are_listed_and_undone(stores: Stores, tmp_path: Path) -> None:
    memory = memory_of(stores, tmp_path)
    assert isinstance(memory, SqliteMemoryStore | PostgresMemoryStore)
    await memory.link("slack:U1", "telegram:42")
    await memory.link("feishu:ou_1", "telegram:42")
    assert await memory.person("slack:U1") == "telegram:42"
    assert await memory.accounts("telegram:42") == ["feishu:ou_1", "slack:U1"]
    assert await memory.linked("U1", 10) == [("slack:U1", "telegram:42")]
    assert await memory.unlink("slack:U1") is True
    assert await memory.unlink("slack:U1") is False
    assert await memory.person("slack:U1") == "slack:U1"
