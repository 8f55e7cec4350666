"""The order tests are handed to pytest-xdist's workers in (`--dist worksteal`).

worksteal gives each worker one contiguous share of the collected list, in order, and lets a
worker that ran out take tests from the end of the fullest queue. A slow test stays where its
share put it, so the slow ones (seconds each: `antler serve` subprocesses, the browser, property
runs) are spread over the shares, longest first, each share starting with its own: every worker
begins with its slow tests and the quick ones at the end of the queues are what gets stolen.

The tests that load lark-oapi (the Feishu SDK: 11,000 modules, seconds of CPU per process; no
test module imports it at collection) go together at the head of the quick part of the share
with the least slow work, so one worker pays for that import instead of every worker.
"""

from __future__ import annotations

import itertools

# Rough seconds a test of the module takes on a 2-core machine under the suite's load (only the
# order depends on it: a wrong figure costs balance, never a test).
SLOW_SECONDS = {
    "tests/e2e/test_workers.py": 50.0,
    "tests/e2e/test_crash_recovery.py": 11.0,
    "tests/gateway/test_schemathesis.py": 20.0,
    "tests/e2e/test_gateway_crash.py": 4.0,
    "tests/e2e/test_connection_leases.py": 6.0,
    "tests/console/test_browser.py": 4.0,
    "tests/gateway/test_config_fuzz.py": 3.0,
    "tests/gateway/test_auth_allowlist.py": 3.0,
    "tests/gateway/test_unsafe_text.py": 3.0,
    "tests/e2e/test_cli.py": 2.0,
    "tests/e2e/test_cli_storage.py": 2.0,
    "tests/bot/test_log_secrets.py": 2.0,
    "tests/e2e/test_redis_bus.py": 2.0,
}


# what the node id of a test that loads lark-oapi holds (its module, its name or its parameter)
GROUPED = ("feishu", "tests/channels/test_webhooks.py")


def loads_lark(nodeid: str) -> bool:
    return any(mark in nodeid.lower() for mark in GROUPED)


def module_of(nodeid: str) -> str:
    return nodeid.split("::")[0]


def share_sizes(total: int, workers: int) -> list[int]:
    """The share each worker gets first, as worksteal cuts them (len(pending) // workers left)."""
    sizes: list[int] = []
    for left in range(workers, 0, -1):
        sizes.append((total - sum(sizes)) // left)
    return sizes


def spread(ids: list[str], workers: int) -> list[int]:
    """Indices of `ids` (node ids) in the order to collect them for `workers` workers."""
    slow = sorted(
        (i for i, nodeid in enumerate(ids) if module_of(nodeid) in SLOW_SECONDS),
        key=lambda i: -SLOW_SECONDS[module_of(ids[i])],
    )
    taken = set(slow)
    quick = [i for i in range(len(ids)) if i not in taken]
    grouped = [i for i in quick if loads_lark(ids[i])]
    quick = [i for i in quick if not loads_lark(ids[i])]
    if workers <= 1:
        return slow + grouped + quick
    loads = [0.0] * workers
    buckets: list[list[int]] = [[] for _ in range(workers)]
    for i in slow:  # longest first, to the least loaded share
        k = loads.index(min(loads))
        buckets[k].append(i)
        loads[k] += SLOW_SECONDS[module_of(ids[i])]
    home = buckets[loads.index(min(loads))]
    for bucket in buckets:  # a slow test loading lark-oapi joins the others
        moved = [i for i in bucket if loads_lark(ids[i])]
        bucket[:] = [i for i in bucket if not loads_lark(ids[i])]
        home += moved
    home += grouped
    rest = iter(quick)
    order: list[int] = []
    for bucket, size in zip(buckets, share_sizes(len(ids), workers), strict=True):
        order += bucket
        order += itertools.islice(rest, max(0, size - len(bucket)))
    order += list(rest)
    return order
