"""Property tests of the admin API from its own /openapi.json (schemathesis): generated valid
and invalid requests to every operation never get a 5xx. Kept small and bounded."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.core.result import Ok

from tests.fakes.recording_channel import RecordingChannel
from tests.gateway.conftest import AUTH, Api

MAX_EXAMPLES = int(os.environ.get("ANTLER_FUZZ_EXAMPLES", "4"))  # more for a long hunt
NOT_IMPLEMENTED = 501  # documented answer for LangGraph options this server lacks
SKIP = {"/docs", "/openapi.json", "/metrics", "/health"}


def fuzz(doc: dict[str, Any], base_url: str, thread_id: str) -> tuple[list[str], int]:
    """Run every operation's strategy; return the 5xx answers found (runs in a thread).

    Valid requests aim at an existing chat thread (so they reach past the 404), invalid ones
    at whatever schemathesis makes up. Returns the failures and the number of requests."""
    schema = schemathesis.openapi.from_dict(doc)
    failures: list[str] = []
    sent = [0]
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), result  # every operation of our schema loads
        operation = result.ok()
        if operation.path in SKIP:
            continue
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            fixed = (
                {"thread_id": thread_id}
                if mode is GenerationMode.POSITIVE and "{thread_id}" in operation.path
                else None
            )
            strategy = operation.as_strategy(generation_mode=mode, path_parameters=fixed)

            @settings(
                max_examples=MAX_EXAMPLES,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
                derandomize=True,
            )
            @given(case=strategy)
            def check(case: Any) -> None:
                response = case.call(base_url=base_url, headers=AUTH, timeout=10)
                sent[0] += 1
                if response.status_code >= 500 and response.status_code != NOT_IMPLEMENTED:
                    failures.append(
                        f"{case.method} {case.formatted_path} -> "
                        f"{response.status_code} {response.text[:200]}"
                    )

            check()
    return failures, sent[0]


async def test_no_server_errors_from_generated_requests(api: Api) -> None:
    status, doc, _ = await api.call("GET", "/openapi.json")
    assert status == 200
    channel = api.svc.channel("test")
    assert isinstance(channel, RecordingChannel)
    await channel.inject("hello")
    await api.svc.idle()
    thread_id = (await api.app.conversations.all())[0].thread_id
    failures, sent = await asyncio.to_thread(fuzz, doc, api.base, thread_id)
    print(f"schemathesis: {sent} requests, {len(failures)} server errors")
    assert sent > 0
    assert failures == []
