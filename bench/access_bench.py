"""What access costs a message: the effective grant and its checks (pure CPU), and the lookups
`People.who` makes per turn and command (the person's links, the role given by the API, the
config), on SQLite; and an audit append.

Figures in microseconds per call, the median of many calls on the service loop.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from agent.memory.sqlite import SqliteMemoryStore
from agent.sql import SqliteSql
from bench.support import median_us, per_call_us
from bot.access.audit import Audit
from bot.access.people import People
from bot.access.roles import AccessConfig, RoleConfig, effective_grant
from bot.access.store import AccessStore, AuditEntry
from bot.db import open_db
from bot.metrics import Metrics
from channels.base import ChatRef, InboundMessage, UserRef

ROLES = {
    "eng": RoleConfig(tools=["bash", "read_*", "write_file", "github:get_*"], mcp_servers=["jira"]),
}
TOOLS = [f"tool_{i}" for i in range(40)] + ["bash", "read_file", "write_file"]


async def run() -> dict[str, object]:
    cfg = AccessConfig(roles=ROLES, chats={"slack:C1": "guest"})
    grant = effective_grant(cfg.roles, "eng", "member")
    figures: dict[str, object] = {
        "effective_grant_us": per_call_us(lambda: effective_grant(cfg.roles, "eng", "guest")),
        "filter_43_tools_us": per_call_us(
            lambda: [t for t in TOOLS if grant.allows_tool(t)], 2_000
        ),
        "check_one_mcp_tool_us": per_call_us(lambda: grant.allows_tool("get_issue", "github")),
    }
    with tempfile.TemporaryDirectory() as tmp:
        db = open_db(Path(tmp))
        store = AccessStore(SqliteSql(db), "access_")
        memory = SqliteMemoryStore(Path(tmp) / "memory.db")
        await memory.link("slack:U2", "telegram:1")
        await store.set_role("telegram:1", "eng", "bench")
        audit = Audit(store, Metrics(), lambda: 90)
        people = People(lambda: cfg, store, lambda: memory, audit)
        msg = InboundMessage(
            event_id="e1",
            chat=ChatRef(channel="slack", chat_id="C1", chat_type="group"),
            sender=UserRef(id="U2", name="u"),
            text="hi",
        )
        figures["who_sqlite_us"] = await median_us(lambda: people.who(msg))
        entry = AuditEntry(kind="tool", person="telegram:1", subject="bash", detail={"a": 1})
        figures["audit_append_sqlite_us"] = await median_us(lambda: store.append(entry))
        memory.close()
        db.close()
    return figures
