"""Memory routes: summary, config, status, reload, one person's facts, forgetting a fact."""

from __future__ import annotations

from agent.memory.store import MemoryUpdate, NewFact
from tests.gateway.conftest import Api


def remember(api: Api, person: str, *facts: str) -> None:
    store = api.app.runner.memory.store
    update = MemoryUpdate(contexts={"work": f"{person} works on Antler"},
                          facts=tuple(NewFact(f, "knowledge", 0.9) for f in facts))
    store.apply(person, update, source="thread-1", max_facts=100, threshold=0.5)


async def test_summary_status_config(api: Api) -> None:
    remember(api, "telegram:42", "Likes tea", "Lives in Oslo")
    remember(api, "slack:U1", "Prefers short answers")
    status, body, _ = await api.call("GET", "/api/memory")
    assert (status, body) == (200, {"enabled": True, "people": 2, "facts": 3, "pending": 0})
    status, body, _ = await api.call("GET", "/api/memory/status")
    assert status == 200
    assert body["facts"] == 3
    assert body["flush_scheduled"] is False
    assert body["flushes"] == 0
    status, body, _ = await api.call("GET", "/api/memory/config")
    assert status == 200
    assert body["enabled"] is True
    assert body["max_facts"] == 100
    status, body, _ = await api.call("POST", "/api/memory/reload")
    assert (status, body["facts"]) == (200, 3)


async def test_facts_list_and_delete(api: Api) -> None:
    remember(api, "telegram:42", "Likes tea", "Lives in Oslo")
    status, body, _ = await api.call("GET", "/api/memory/people/telegram:42/facts")
    assert status == 200
    assert body["person"] == "telegram:42"
    assert body["contexts"] == {"work": "telegram:42 works on Antler"}
    assert [(f["number"], f["content"]) for f in body["facts"]] == [(1, "Likes tea"),
                                                                     (2, "Lives in Oslo")]
    tea = body["facts"][0]["id"]
    status, gone, _ = await api.call("DELETE", f"/api/memory/people/telegram:42/facts/{tea}")
    assert (status, gone["content"]) == (200, "Likes tea")
    assert [f.content for f in api.app.runner.memory.store.facts("telegram:42")] == [
        "Lives in Oslo"]
    status, body, _ = await api.call("DELETE", f"/api/memory/people/telegram:42/facts/{tea}")
    assert status == 404
    assert "detail" in body
    # another person's fact id is not reachable through this person
    remember(api, "slack:U1", "Prefers short answers")
    other = api.app.runner.memory.store.facts("slack:U1")[0].id
    status, _, _ = await api.call("DELETE", f"/api/memory/people/telegram:42/facts/{other}")
    assert status == 404
    assert len(api.app.runner.memory.store.facts("slack:U1")) == 1


async def test_unknown_person_and_bad_ids(api: Api) -> None:
    status, body, _ = await api.call("GET", "/api/memory/people/nobody:1/facts")
    assert (status, body["facts"]) == (200, [])
    for bad in ("0", "-1", "abc", "1.5"):
        status, body, _ = await api.call("DELETE", f"/api/memory/people/x:1/facts/{bad}")
        assert status == 422, bad
        assert "detail" in body


async def test_memory_routes_need_auth(api: Api) -> None:
    remember(api, "telegram:42", "Likes tea")
    fact = api.app.runner.memory.store.facts("telegram:42")[0].id
    for method, path in (("GET", "/api/memory"), ("GET", "/api/memory/config"),
                         ("GET", "/api/memory/status"), ("POST", "/api/memory/reload"),
                         ("GET", "/api/memory/people/telegram:42/facts"),
                         ("DELETE", f"/api/memory/people/telegram:42/facts/{fact}")):
        status, body, _ = await api.call(method, path, auth=False)
        assert status == 401, path
        assert body == {"detail": "missing or invalid bearer token"}
    assert len(api.app.runner.memory.store.facts("telegram:42")) == 1
