"""Text no store can keep (NUL, which PostgreSQL's text refuses; a lone UTF-16 surrogate, which
JSON's `\\ud800` escape makes and no UTF-8 encodes) is a 422 naming where it was, on every
backend; before, these exact payloads (found by schemathesis) were 500s."""

from __future__ import annotations

import json

from tests.gateway.conftest import Api

STATE = [  # POST /api/threads/{id}/state
    ({"values": {"title": "\ud800"}}, ["body", "values", "title"]),
    ({"as_node": "\ud800"}, ["body", "as_node"]),
    ({"checkpoint_id": "\x00"}, ["body", "checkpoint_id"]),
    ({"checkpoint_id": "a\x00"}, ["body", "checkpoint_id"]),
    ({"checkpoint": {"checkpoint_id": "\x00"}}, ["body", "checkpoint", "checkpoint_id"]),
    ({"values": {"\x00": 1}}, ["body", "values", "(key)"]),
]
WAIT = [  # POST /api/threads/{id}/runs/wait
    ({"input": {"messages": ["\ud800"]}}, ["body", "input", "messages", 0]),
    ({"input": {"messages": ["hi"]}, "checkpoint_id": "\x00"}, ["body", "checkpoint_id"]),
    ({"input": {"messages": ["hi"]}, "checkpoint_id": "\ud800"}, ["body", "checkpoint_id"]),
]
FINE = [  # what is not unsafe stays as it was
    ("state", {"checkpoint_id": ""}, 200),
    ("state", {"checkpoint": {"checkpoint_id": ""}}, 200),
    ("state", {"values": {"title": "a\U0001f600b"}}, 200),  # a surrogate pair is a character
    ("runs/wait", {"input": {"messages": ["hi"]}, "checkpoint_id": ""}, 200),
]


async def test_unsafe_text_is_a_422_on_every_backend(api_on_backend: Api) -> None:
    api = api_on_backend
    _, created, _ = await api.call("POST", "/api/threads", json={})
    thread = f"/api/threads/{created['thread_id']}"
    cases = [("state", b, loc) for b, loc in STATE] + [("runs/wait", b, loc) for b, loc in WAIT]
    for route, body, loc in cases:
        # json.dumps writes a lone surrogate as the `\ud800` escape, as a client would
        raw = json.dumps(body)
        status, err, _ = await api.call(
            "POST", f"{thread}/{route}", data=raw, headers={"Content-Type": "application/json"}
        )
        assert status == 422, (route, body, err)
        assert err["detail"][0]["loc"] == loc
        assert "NUL characters or lone UTF-16 surrogates" in err["detail"][0]["msg"]
    for route, body, code in FINE:
        status, answer, _ = await api.call("POST", f"{thread}/{route}", json=body)
        assert status == code, (route, body, answer)


async def test_unsafe_text_in_the_path_or_query_is_a_422(api: Api) -> None:
    for path, where in (
        ("/api/threads/t1/artifacts/mnt/user-data/outputs/a%00.txt", "path"),
        ("/api/memory?person=telegram%3A1%00", "query"),
    ):
        status, err, _ = await api.call("GET", path, raw=True)
        assert status == 422, (path, err)
        assert err["detail"][0]["loc"][0] == where


async def test_json_nested_too_deeply_is_a_422(api: Api) -> None:
    raw = '{"metadata": ' + "[" * 100_000 + "]" * 100_000 + "}"
    status, err, _ = await api.call(
        "POST", "/api/threads", data=raw, headers={"Content-Type": "application/json"}
    )
    assert status == 422, err
    assert "nested too deeply" in err["detail"][0]["msg"]
