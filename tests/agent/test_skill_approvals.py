"""Skills that wait for approval: a call that names a path in a skill's folder (reading its
SKILL.md, running its scripts) waits as the skill's `skill:<name>` rule says, the request naming the
skill; `skill:` patterns never match tools and tool patterns never match skills; a skill started
with `/<skill>` is not put in the prompt while it waits, the model reads it (and that asks)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.approval import ApprovalPolicy, ApprovalRule
from agent.config import AgentConfig
from agent.events import ApprovalRequested, Final, ToolFinished
from agent.hands import Hands
from agent.skills.registry import SkillRegistry
from tests.agent.conftest import MakeRunner, collect
from tests.agent.test_approvals import resume
from tests.fakes.openai_server import FakeOpenAI, Reply, ToolCall

SKILL_MD = "/mnt/skills/public/deploy/SKILL.md"
READ = Reply(tool_calls=[ToolCall("read_file", {"path": SKILL_MD}, id="r1")])


def skills_root(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    for name, body in (("deploy", "Run scripts/go.sh."), ("digest", "Summarise.")):
        folder = root / "public" / name
        (folder / "scripts").mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: D.\n---\n{body}\n")
        (folder / "scripts" / "go.sh").write_text("echo go\n")
    return root


async def hands_runner(make_runner: MakeRunner, tmp_path: Path) -> Any:
    config = AgentConfig(
        max_retries=0,
        request_timeout_seconds=10,
        title={"enabled": False},
        skills={"path": skills_root(tmp_path)},
        extensions_config=tmp_path / "none.json",
    )
    hands = Hands(config)
    return await make_runner(
        config=config, tool_providers=[hands.tools], middleware_providers=[hands.middlewares]
    )


async def reading_waits(
    make_runner: MakeRunner, tmp_path: Path, fake_openai: FakeOpenAI, mode: str
) -> tuple[Any, ApprovalPolicy, ApprovalRequested]:
    """The model reads the deploy skill's SKILL.md under `skill:deploy: <mode>`: the runner, the
    policy and the request it waits on (nothing read)."""
    runner = await hands_runner(make_runner, tmp_path)
    rules = policy(("skill:deploy", mode))
    fake_openai.script(READ)
    events = await collect(runner, "t", "deploy please", approvals=rules)
    assert not [e for e in events if isinstance(e, ToolFinished)]
    [asked] = [e for e in events if isinstance(e, ApprovalRequested)]
    return runner, rules, asked


def policy(*rules: tuple[str, str]) -> ApprovalPolicy:
    return ApprovalPolicy(tuple(ApprovalRule(p, m) for p, m in rules), timeout_seconds=60)  # type: ignore[arg-type]


def test_a_call_uses_the_skills_whose_folders_it_names(tmp_path: Path) -> None:
    registry = SkillRegistry(skills_root(tmp_path), tmp_path / "none.json")
    assert registry.used_in({"path": SKILL_MD}) == ["deploy"]
    command = "cd /mnt/skills/public/deploy && sh scripts/go.sh; cat /mnt/skills/public/digest/x"
    assert registry.used_in({"command": command}) == ["deploy", "digest"]
    assert registry.used_in({"path": "/mnt/skills"}) == []  # the list of skills uses none
    assert registry.used_in({"path": "/mnt/skills/custom/deploy/SKILL.md"}) == []  # not there
    assert registry.used_in({"paths": [{"p": SKILL_MD}], "n": 3}) == ["deploy"]


def test_skill_patterns_and_tool_patterns_never_cross() -> None:
    rules = policy(("skill:dep*", "always"), ("*", "first_use"))
    assert rules.skill_rule("deploy") == ApprovalRule("skill:dep*", "always")
    assert rules.skill_rule("digest") is None  # `*` is a tool pattern
    assert rules.rule_for("deploy") == ApprovalRule("*", "first_use")  # a tool called deploy
    assert policy(("skill:*", "never"), ("skill:deploy", "always")).skill_rule("deploy") is None


async def test_reading_a_skill_waits_names_the_skill_and_runs_once_approved(
    make_runner: MakeRunner, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    runner, rules, asked = await reading_waits(make_runner, tmp_path, fake_openai, "always")
    assert asked.request["calls"] == [
        {"id": "r1", "name": "read_file", "args": {"path": SKILL_MD}, "skills": ["deploy"]}
    ]
    fake_openai.script(Reply(text="Following the skill."))
    events = await resume(runner, "t", asked, "approve", rules)
    [read] = [e for e in events if isinstance(e, ToolFinished)]
    assert read.ok
    assert "Run scripts/go.sh." in str(fake_openai.requests[-1].messages[-1]["content"])
    assert events[-1] == Final("Following the skill.")


async def test_a_skill_rule_asks_for_no_other_file_and_a_tool_rule_for_no_skill(
    make_runner: MakeRunner, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    runner = await hands_runner(make_runner, tmp_path)
    other = Reply(tool_calls=[ToolCall("read_file", {"path": "/mnt/skills/public/digest/SKILL.md"},
                                       id="r2")])  # fmt: skip
    fake_openai.script(other, Reply(text="Read."))
    events = await collect(runner, "t", "digest", approvals=policy(("skill:deploy", "always")))
    assert not [e for e in events if isinstance(e, ApprovalRequested)]
    fake_openai.script(READ, Reply(text="Read."))
    events = await collect(runner, "u", "deploy", approvals=policy(("write_*", "always")))
    assert not [e for e in events if isinstance(e, ApprovalRequested)]


async def test_first_use_of_a_skill_asks_once_per_conversation(
    make_runner: MakeRunner, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    runner, rules, asked = await reading_waits(make_runner, tmp_path, fake_openai, "first_use")
    assert asked.request["first_use"] is True
    script = "/mnt/skills/public/deploy/scripts/go.sh"
    fake_openai.script(
        Reply(tool_calls=[ToolCall("read_file", {"path": script}, id="r3")]), Reply(text="Done.")
    )
    events = await resume(runner, "t", asked, "approve_conversation", rules)
    assert not [e for e in events if isinstance(e, ApprovalRequested)]  # its script: not again
    assert [e.ok for e in events if isinstance(e, ToolFinished)] == [True, True]


async def test_a_skill_started_with_its_command_is_read_first_while_it_waits(
    make_runner: MakeRunner, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    runner = await hands_runner(make_runner, tmp_path)
    fake_openai.script(Reply(text="ok"), Reply(text="ok"))
    await collect(runner, "t", "ship it", skill="deploy")
    await collect(runner, "u", "ship it", skill="deploy", approvals=policy(("skill:*", "always")))
    free, waiting = (str(r.messages[0]["content"]) for r in fake_openai.requests[-2:])
    assert "Run scripts/go.sh." in free
    assert "Run scripts/go.sh." not in waiting
    assert f"read {SKILL_MD} with read_file first" in waiting
