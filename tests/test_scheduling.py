"""The order tests are handed to xdist's workers in (tests/scheduling.py): every test once, each
worker's first share headed by its slow tests, the longest spread first."""

from __future__ import annotations

from tests.scheduling import SLOW_SECONDS, share_sizes, spread

SLOW = list(SLOW_SECONDS)


def ids() -> list[str]:
    quick = [f"tests/quick/test_{m}.py::test_{t}" for m in range(20) for t in range(30)]
    slow = [f"{module}::test_{t}" for module in SLOW for t in range(2)]
    feishu = ["tests/channels/feishu/test_a.py::test_b", "tests/e2e/test_c.py::test_d[feishu]"]
    return quick[:300] + feishu[:1] + slow + quick[300:] + feishu[1:]


def test_every_test_once_in_any_layout() -> None:
    only_slow = [f"{module}::test" for module in SLOW[:2]]  # e.g. `pytest -n 4 <two modules>`
    for nodeids in (ids(), only_slow, []):
        for workers in (1, 2, 3, 4, 8):
            assert sorted(spread(nodeids, workers)) == list(range(len(nodeids)))


def test_shares_as_worksteal_cuts_them() -> None:
    assert share_sizes(10, 4) == [2, 2, 3, 3]
    assert sum(share_sizes(918, 4)) == 918


def test_each_share_starts_with_its_slow_tests_and_the_longest_are_apart() -> None:
    nodeids = ids()
    order = [nodeids[i] for i in spread(nodeids, 4)]
    starts = [0]
    for size in share_sizes(len(order), 4)[:-1]:
        starts.append(starts[-1] + size)
    heads = [order[s] for s in starts]
    assert all(head.split("::")[0] in SLOW_SECONDS for head in heads)
    longest = [h for h in heads if h.startswith(SLOW[0])]
    assert len(longest) == 2  # the two longest tests begin two different shares


def test_the_tests_loading_lark_oapi_run_together_on_the_least_loaded_share() -> None:
    nodeids = ids()
    order = [nodeids[i] for i in spread(nodeids, 4)]
    sizes = share_sizes(len(order), 4)
    ends = [sum(sizes[: k + 1]) for k in range(4)]
    at = [
        next(k for k, end in enumerate(ends) if order.index(n) < end)
        for n in nodeids
        if "feishu" in n
    ]
    assert len(set(at)) == 1
    share = at[0]
    start = ends[share] - sizes[share]
    head = [n for n in order[start : start + 4] if n.split("::")[0] not in SLOW_SECONDS]
    assert all("feishu" in n for n in head[:2])  # first after its slow tests: never stolen
    assert not any(n.startswith(SLOW[0]) for n in order[start : ends[share]])


def test_one_worker_runs_the_slow_ones_first() -> None:
    nodeids = ids()
    order = [nodeids[i] for i in spread(nodeids, 1)]
    assert order[0].startswith(SLOW[0])
    assert all(n.split("::")[0] in SLOW_SECONDS for n in order[: 2 * len(SLOW)])
