"""Memory routes: DeerFlow's memory document per person and the caller's by default, fact
create/edit/delete, export/import, config, status, reload; Antler's per-person listing."""

from __future__ import annotations

import json

from agent.memory.records import MemoryUpdate, NewFact
from tests.gateway.conftest import Api


async def remember(api: Api, person: str, *facts: str) -> None:
    store = api.app.runner.memory.store
    update = MemoryUpdate(
        contexts={"work": f"{person} works on Antler"},
        facts=tuple(NewFact(f, "knowledge", 0.9) for f in facts),
    )
    await store.apply(person, update, source="thread-1", max_facts=100, threshold=0.5)


async def test_aggregate_default_leaks_nothing(api: Api) -> None:
    await remember(api, "telegram:42", "Likes tea", "Lives in Oslo")
    await remember(api, "slack:U1", "Prefers short answers")
    status, body, _ = await api.call("GET", "/api/memory")
    assert status == 200
    assert body["facts"] == []
    assert body["user"]["workContext"]["summary"] == ""
    assert sorted((p["person"], p["facts"]) for p in body["people"]) == [
        ("slack:U1", 1),
        ("telegram:42", 2),
    ]
    assert "tea" not in json.dumps(body)
    assert "works on Antler" not in json.dumps(body)
    status, body, _ = await api.call("GET", "/api/memory/status")
    assert status == 200
    assert body["counts"]["facts"] == 3
    assert body["counts"]["flush_scheduled"] is False
    assert body["data"]["facts"] == []
    assert body["config"]["enabled"] is True
    status, body, _ = await api.call("GET", "/api/memory/config")
    assert status == 200
    assert body["mode"] == "middleware"
    assert body["backend_config"]["max_facts"] == 100
    status, body, _ = await api.call("POST", "/api/memory/reload")
    assert (status, len(body["people"])) == (200, 2)
    # without ?person= writes act on the caller's own person, never on another's
    for method, path, payload in (
        ("POST", "/api/memory/facts", {"content": "x"}),
        ("DELETE", "/api/memory", None),
        ("POST", "/api/memory/import", {"facts": [{"content": "y"}]}),
        ("DELETE", "/api/memory/facts/1", None),
    ):
        status, body, _ = await api.call(method, path, json=payload)
        assert status in (200, 404), (path, body)
    store = api.app.runner.memory.store
    assert [f.content for f in await store.facts("api")] == ["y"]
    assert len(await store.facts("telegram:42")) == 2
    assert len(await store.facts("slack:U1")) == 1


async def test_person_document_and_fact_edits(api: Api) -> None:
    await remember(api, "telegram:42", "Likes tea")
    await remember(api, "slack:U1", "Prefers short answers")
    q = "?person=telegram:42"
    status, doc, _ = await api.call("GET", "/api/memory" + q)
    assert status == 200
    assert doc["user"]["workContext"]["summary"] == "telegram:42 works on Antler"
    assert doc["user"]["workContext"]["updatedAt"].endswith("+00:00")
    assert [f["content"] for f in doc["facts"]] == ["Likes tea"]
    assert "Prefers short answers" not in json.dumps(doc)
    status, doc, _ = await api.call(
        "POST", "/api/memory/facts" + q, json={"content": "Has a cat", "confidence": 0.9}
    )
    assert status == 200, doc
    cat = next(f for f in doc["facts"] if f["content"] == "Has a cat")
    assert (cat["category"], cat["source"]) == ("context", "api")
    assert (await api.call("POST", "/api/memory/facts" + q, json={"content": "has a cat"}))[
        0
    ] == 409
    assert (
        await api.call("POST", "/api/memory/facts" + q, json={"content": "x", "confidence": 2})
    )[0] == 422
    status, doc, _ = await api.call(
        "PATCH",
        f"/api/memory/facts/{cat['id']}{q}",
        json={"content": "Has two cats", "category": "context"},
    )
    assert status == 200
    assert "Has two cats" in [f["content"] for f in doc["facts"]]
    other = (await api.app.runner.memory.store.facts("slack:U1"))[0].id
    # another person's fact is not reachable through this person
    assert (await api.call("PATCH", f"/api/memory/facts/{other}{q}", json={"content": "x"}))[
        0
    ] == 404
    assert (await api.call("DELETE", f"/api/memory/facts/{other}{q}"))[0] == 404
    status, doc, _ = await api.call("DELETE", f"/api/memory/facts/{cat['id']}{q}")
    assert [f["content"] for f in doc["facts"]] == ["Likes tea"]
    status, exported, _ = await api.call("GET", "/api/memory/export" + q)
    assert status == 200
    status, doc, _ = await api.call("POST", "/api/memory/import?person=discord:7", json=exported)
    assert status == 200
    assert [f["content"] for f in doc["facts"]] == ["Likes tea"]
    assert doc["user"]["workContext"]["summary"] == "telegram:42 works on Antler"
    status, own, _ = await api.call("GET", "/api/memory")  # the caller's, with `people`
    assert own["people"]
    assert own["facts"] == []
    status, doc, _ = await api.call("DELETE", "/api/memory" + q)
    assert (status, doc["facts"]) == (200, [])
    assert len(await api.app.runner.memory.store.facts("slack:U1")) == 1


async def test_facts_list_and_delete(api: Api) -> None:
    await remember(api, "telegram:42", "Likes tea", "Lives in Oslo")
    status, body, _ = await api.call("GET", "/api/memory/people/telegram:42/facts")
    assert status == 200
    assert body["person"] == "telegram:42"
    assert body["contexts"] == {"work": "telegram:42 works on Antler"}
    assert [(f["number"], f["content"]) for f in body["facts"]] == [
        (1, "Likes tea"),
        (2, "Lives in Oslo"),
    ]
    tea = body["facts"][0]["id"]
    status, gone, _ = await api.call("DELETE", f"/api/memory/people/telegram:42/facts/{tea}")
    assert (status, gone["content"]) == (200, "Likes tea")
    assert [f.content for f in await api.app.runner.memory.store.facts("telegram:42")] == [
        "Lives in Oslo"
    ]
    status, body, _ = await api.call("DELETE", f"/api/memory/people/telegram:42/facts/{tea}")
    assert status == 404
    assert "detail" in body
    # another person's fact id is not reachable through this person
    await remember(api, "slack:U1", "Prefers short answers")
    other = (await api.app.runner.memory.store.facts("slack:U1"))[0].id
    status, _, _ = await api.call("DELETE", f"/api/memory/people/telegram:42/facts/{other}")
    assert status == 404
    assert len(await api.app.runner.memory.store.facts("slack:U1")) == 1


async def test_unknown_person_and_bad_ids(api: Api) -> None:
    status, body, _ = await api.call("GET", "/api/memory/people/nobody:1/facts")
    assert (status, body["facts"]) == (200, [])
    for bad in ("0", "-1", "abc", "1.5"):
        status, body, _ = await api.call("DELETE", f"/api/memory/people/x:1/facts/{bad}")
        assert status == 422, bad
        assert "detail" in body


async def test_memory_routes_need_auth(api: Api) -> None:
    await remember(api, "telegram:42", "Likes tea")
    fact = (await api.app.runner.memory.store.facts("telegram:42"))[0].id
    for method, path in (
        ("GET", "/api/memory"),
        ("GET", "/api/memory/config"),
        ("GET", "/api/memory/status"),
        ("POST", "/api/memory/reload"),
        ("GET", "/api/memory/people/telegram:42/facts"),
        ("DELETE", f"/api/memory/people/telegram:42/facts/{fact}"),
    ):
        status, body, _ = await api.call(method, path, auth=False)
        assert status == 401, path
        assert body == {"detail": "missing or invalid bearer token"}
    assert len(await api.app.runner.memory.store.facts("telegram:42")) == 1
