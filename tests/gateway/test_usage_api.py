"""Usage over the Gateway: a LangGraph-API run's usage chunk in the thread's token usage
(DeerFlow's shape), `/api/usage` by person and model with its CSV export, bad input a 422."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp

from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.gateway.conftest import Api, make_harness

RUN = {"input": {"messages": [{"role": "user", "content": "hi"}]}}
USAGE: dict[str, Any] = {
    "prompt_tokens": 30,
    "completion_tokens": 12,
    "total_tokens": 42,
    "prompt_tokens_details": {"cached_tokens": 10},
}


async def test_a_runs_usage_reaches_token_usage_and_the_report(
    api: Api, fake_openai: FakeOpenAI
) -> None:
    status, thread, _ = await api.call("POST", "/api/threads", json={})
    assert status == 200
    tid = thread["thread_id"]
    fake_openai.script(Reply(text="hello", usage=USAGE))
    assert (await api.call("POST", f"/api/threads/{tid}/runs/wait", json=RUN))[0] == 200
    status, body, _ = await api.call("GET", f"/api/threads/{tid}/token-usage")
    assert status == 200
    assert body["thread_id"] == tid
    assert (body["total_input_tokens"], body["total_output_tokens"], body["total_tokens"]) == (
        30,
        12,
        42,
    )
    assert (body["total_runs"], body["llm_call_count"], body["cached_input_tokens"]) == (1, 1, 10)
    assert body["by_model"] == {"fast": {"tokens": 42, "runs": 1}}
    assert body["by_caller"] == {"lead_agent": 42, "subagent": 0, "middleware": 0}
    assert body["currency"] == "USD"

    status, report, _ = await api.call("GET", "/api/usage?group_by=person,model")
    assert status == 200
    [item] = report["items"]
    assert item["key"] == {"person": "api", "model": "fast"}
    assert item["total_tokens"] == 42
    status, text, resp = await api.call("GET", "/api/usage?group_by=channel&format=csv")
    assert status == 200
    assert resp.headers["Content-Type"].startswith("text/csv")
    header, row = text.strip().splitlines()
    assert header.startswith("channel,prompt_tokens,completion_tokens")
    assert row.startswith("api,30,12,10,0,42,1,0,")
    status, models, _ = await api.call("GET", "/api/models")
    assert models["token_usage"] == {"enabled": True}


async def test_bad_report_questions_get_a_422(api: Api) -> None:
    for query in ("group_by=secret", "since=yesterday", "format=xml"):
        status, body, _ = await api.call("GET", f"/api/usage?{query}")
        assert status == 422, (query, body)
    status, body, _ = await api.call("GET", "/api/threads/nope/token-usage")
    assert status == 200
    assert body["total_tokens"] == 0


async def test_budgets_show_their_use_this_period(
    tmp_path: Path, fake_openai: FakeOpenAI, test_channel_registered: None
) -> None:
    usage = {
        "budgets": [
            {"scope": "channel", "name": "api", "tokens": 100},
            {"scope": "role", "name": "member", "period": "month", "cost": 2.5},
        ]
    }
    harness = make_harness(tmp_path, fake_openai, usage=usage)
    async with harness as svc, aiohttp.ClientSession() as session:
        api = Api(svc, session)
        status, thread, _ = await api.call("POST", "/api/threads", json={})
        fake_openai.script(Reply(text="hello", usage=USAGE))
        tid = thread["thread_id"]
        assert (await api.call("POST", f"/api/threads/{tid}/runs/wait", json=RUN))[0] == 200
        status, body, _ = await api.call("GET", "/api/budgets")
    assert status == 200
    channel, role = body["budgets"]
    assert channel["name"] == "api"
    assert (channel["used"], channel["limit"], channel["unit"]) == (42.0, 100.0, "tokens")
    assert (role["used"], role["unit"], role["period"]) == (None, "USD", "month")
    assert role["resets"].startswith("on ")
