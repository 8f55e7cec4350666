"""Property tests of the admin API from its own /openapi.json (schemathesis): generated valid
and invalid requests to every operation never get a 5xx, on both storage backends (PostgreSQL
refuses text SQLite keeps), and neither do sequences of calls that feed one answer's ids into
the next request (schemathesis's state machine, on the links it infers from the schema). Kept
small, bounded and derandomized: the same requests every run."""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from typing import Any

import schemathesis
from hypothesis import given, settings
from schemathesis import GenerationMode
from schemathesis.core.result import Ok

from tests.fakes.recording_channel import RecordingChannel
from tests.gateway.conftest import AUTH, Api
from tests.repeatable import REPEATABLE

MAX_EXAMPLES = int(os.environ.get("ANTLER_FUZZ_EXAMPLES", "4"))  # more for a long hunt
SCENARIOS = int(os.environ.get("ANTLER_FUZZ_SCENARIOS", "12"))  # stateful: call sequences
STEPS = 8  # calls per sequence at most
NOT_IMPLEMENTED = 501  # documented answer for LangGraph options this server lacks
SKIP = {"/docs", "/openapi.json", "/metrics", "/health"}


def fuzz(doc: dict[str, Any], base_url: str, thread_id: str) -> tuple[list[str], int]:
    """Run every operation's strategy; return the 5xx answers found (runs in a thread).

    Valid requests aim at an existing chat thread (so they reach past the 404), invalid ones
    at whatever schemathesis makes up. Returns the failures and the number of requests."""
    schema = schemathesis.openapi.from_dict(doc)
    failures: list[str] = []
    sent = [0]
    statuses: list[int] = []
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

            @settings(REPEATABLE, max_examples=MAX_EXAMPLES)
            @given(case=strategy)
            def check(case: Any) -> None:
                case.headers = {**(case.headers or {}), **AUTH}  # the token, not a generated one
                response = case.call(base_url=base_url, headers=AUTH, timeout=10)
                sent[0] += 1
                statuses.append(response.status_code)
                if (problem := server_error(case, response)) is not None:
                    failures.append(problem)

            check()
    print("answers:", dict(sorted(Counter(statuses).items())))
    return failures, sent[0]


def server_error(case: Any, response: Any) -> str | None:
    if response.status_code >= 500 and response.status_code != NOT_IMPLEMENTED:
        return (
            f"{case.method} {case.formatted_path} body={case.body!r} query={case.query!r} -> "
            f"{response.status_code} {response.text[:200]}"
        )
    return None


def fuzz_stateful(doc: dict[str, Any], base_url: str) -> tuple[list[str], int]:
    """Sequences of calls along the links schemathesis infers (a created thread's id into its
    runs, a run's id into its join and cancel, a task's id into its trigger...)."""
    schema = schemathesis.openapi.from_dict(doc).exclude(path=list(SKIP))
    failures: list[str] = []
    statuses: list[int] = []

    class Machine(schema.as_state_machine()):  # type: ignore[misc]
        rule_order_seed = 27

        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return {"base_url": base_url, "headers": AUTH, "timeout": 10}

        def before_call(self, case: Any) -> None:
            case.headers = {**(case.headers or {}), **AUTH}  # the token, not a generated one

        def validate_response(self, response: Any, case: Any, **kwargs: Any) -> None:
            statuses.append(response.status_code)
            if (problem := server_error(case, response)) is not None:
                failures.append(problem)

    Machine.run(settings=settings(REPEATABLE, max_examples=SCENARIOS, stateful_step_count=STEPS))
    print("stateful answers:", dict(sorted(Counter(statuses).items())))
    return failures, len(statuses)


async def test_no_server_errors_from_generated_requests(
    api_on_backend: Api, storage: dict[str, object]
) -> None:
    api = api_on_backend
    status, doc, _ = await api.call("GET", "/openapi.json")
    assert status == 200
    channel = api.svc.channel("test")
    assert isinstance(channel, RecordingChannel)
    await channel.inject("hello")
    await api.svc.idle()
    thread_id = (await api.app.conversations.all())[0].thread_id
    failures, sent = await asyncio.to_thread(fuzz, doc, api.base, thread_id)
    chained, steps = await asyncio.to_thread(fuzz_stateful, doc, api.base)
    print(f"schemathesis ({storage['backend']}): {sent} requests, {steps} in sequences")
    assert sent > 0
    assert steps > SCENARIOS  # the sequences ran, and went past their first call
    assert failures + chained == []
