"""The console's Usage page by HTTP: per person, chat and model over a chosen range of days, the
chart's series a point a day, the CSV export; bad ranges a 422 naming the field; and nothing of
it without a session."""

from __future__ import annotations

import re

from bot.stores.usage import UsageRow
from tests.console.client import Console
from tests.harness import ServiceHarness

RANGE = "since=2026-09-18&until=2026-09-23"


def row(
    day: str, person: str, chat: str, model: str, tokens: tuple[int, int], cost: float
) -> UsageRow:
    prompt, out = tokens
    return UsageRow(
        at=0.0, day=day, run_id="r", thread_id="t", person=person, account=person, chat=chat,
        channel="test", model=model, purpose="answer", prompt=prompt, completion=out, cached=0,
        reasoning=0, cost=cost, estimated=False,
    )  # fmt: skip


async def spent(svc: ServiceHarness) -> None:
    store = svc.running.stores.usage
    assert store is not None
    await store.add(
        [
            row("2026-09-20", "test:ann", "test:c1", "fast", (100, 50), 0.25),
            row("2026-09-20", "test:ann", "test:c2", "smart", (1000, 200), 1.5),
            row("2026-09-22", "test:bob", "test:c1", "fast", (10, 5), 0.01),
            row("2026-08-01", "test:ann", "test:c1", "fast", (9999, 9999), 9.0),  # out of range
        ]
    )


def cells(page: str, table: str) -> list[list[str]]:
    body = page.split(f'id="by-{table}"', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr>(.*?)</tr>", body, re.S)[1:]
    cell = re.compile(r"<t[hd][^>]*>(.*?)</t[hd]>", re.S)
    return [[re.sub(r"<[^>]+>", "", c).strip() for c in cell.findall(r)] for r in rows]


async def test_usage_per_person_chat_and_model_over_a_range(
    svc: ServiceHarness, admin: Console
) -> None:
    await spent(svc)
    status, page, _ = await admin.get(f"/console/usage?{RANGE}&person=&chat=")
    assert status == 200, page[:500]
    assert 'href="/console/usage" aria-current="page"' in page
    assert re.search(r'id="u-tokens">1,365<', page)
    assert re.search(r'id="u-cost">1.76 USD<', page)
    assert cells(page, "person") == [
        ["test:ann", "1,350", "1,100", "250", "0", "2", "1.75 USD"],
        ["test:bob", "15", "10", "5", "0", "1", "0.0100 USD"],
    ]
    assert [r[0] for r in cells(page, "chat")] == ["test:c2", "test:c1"]
    assert [r[:2] for r in cells(page, "model")] == [["smart", "1,200"], ["fast", "165"]]
    assert f'href="/console/usage.csv?{RANGE}"' in page.replace("&amp;", "&")

    page = await admin.page(f"/console/usage?{RANGE}&model=fast")
    assert cells(page, "person") == [
        ["test:ann", "150", "100", "50", "0", "1", "0.2500 USD"],
        ["test:bob", "15", "10", "5", "0", "1", "0.0100 USD"],
    ]


async def test_the_charts_series_has_a_point_each_day_and_the_csv_the_rows(
    svc: ServiceHarness, admin: Console
) -> None:
    await spent(svc)
    async with admin.http.get(f"{admin.base}/console/usage/data?{RANGE}") as resp:
        assert resp.status == 200
        data = await resp.json()
    series = data["series"]
    assert data["currency"] == "USD"
    assert len(series["t"]) == 5  # 18th to 22nd
    assert series["t"][1] - series["t"][0] == 86_400
    assert series["prompt"] == [0, 0, 1100, 0, 10]
    assert series["completion"] == [0, 0, 250, 0, 5]
    assert series["cost"] == [0, 0, 1.75, 0, 0.01]
    status, text, resp = await admin.get(f"/console/usage.csv?{RANGE}")
    assert status == 200
    assert resp.headers["Content-Type"].startswith("text/csv")
    header, *rows = text.strip().splitlines()
    assert header.startswith("day,person,chat,model,prompt_tokens,completion_tokens")
    assert [r.split(",")[:6] for r in rows] == [
        ["2026-09-20", "test:ann", "test:c1", "fast", "100", "50"],
        ["2026-09-20", "test:ann", "test:c2", "smart", "1000", "200"],
        ["2026-09-22", "test:bob", "test:c1", "fast", "10", "5"],
    ]


async def test_bad_ranges_name_the_field_and_no_session_sees_nothing(
    svc: ServiceHarness, console: Console, admin: Console
) -> None:
    for query, says in (
        ("since=yesterday", "since:"),
        ("since=2026-09-20&until=2026-09-20", "until: 1 to 366 days"),
        ("since=2020-01-01&until=2026-09-20", "until: 1 to 366 days"),
        ("until=2026-13-01", "until:"),
    ):
        for path in ("/console/usage", "/console/usage/data", "/console/usage.csv"):
            status, page, _ = await admin.get(f"{path}?{query}")
            assert status == 422, (path, query)
            assert says in page, (path, query, page[-600:])
    stranger = Console(console.base)
    try:
        for path in ("/console/usage", "/console/usage/data", "/console/usage.csv"):
            status, _, resp = await stranger.get(path)
            assert status == 303
            assert resp.headers["Location"].startswith("/console/login")
    finally:
        await stranger.close()
