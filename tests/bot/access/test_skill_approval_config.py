"""Skills in the approval policy (`skill:<name>` patterns): a pattern that cannot name a skill
stops start-up with its YAML path; one no installed skill matches is a warning of `antler check`
(a skill may be installed later); a valid one becomes the turn's rule for that skill."""

from __future__ import annotations

import pytest

from agent.approval import ApprovalRule
from bot.access.approvals import approval_policy
from bot.config.schema import ConfigError, settings_from_dict

MODEL = {"name": "a", "model": "m"}


def test_a_skill_pattern_that_cannot_name_a_skill_is_named_by_its_yaml_path() -> None:
    raw = {
        "models": [MODEL],
        "access": {
            "approvals": {"tools": {"skill:": "always", "skill:Deploy_Prod": "always"}},
            "roles": {"ops": {"approvals": {"skill:ok-*": "first_use", "skill:a b": "never"}}},
        },
    }
    with pytest.raises(ConfigError) as info:
        settings_from_dict(raw)
    why = "a skill pattern is `skill:` and a skill name or glob"
    assert [p.split(": ", 1)[0] for p in info.value.problems] == [
        "access.approvals.tools.skill:",
        "access.approvals.tools.skill:Deploy_Prod",
        "access.roles.ops.approvals.skill:a b",
    ]
    assert all(why in p for p in info.value.problems)


def test_a_skill_pattern_no_skill_matches_is_a_warning() -> None:
    raw = {
        "models": [MODEL],
        "access": {
            "approvals": {
                "tools": {"skill:deploy": "always", "skill:data-*": "first_use"},
                "chats": {"telegram:5": {"skill:nope-*": "always"}},
            }
        },
    }
    settings = settings_from_dict(raw)
    warnings = settings.access.warnings(set(), {"data-to-chart", "team-reply"}, {"a"})
    assert warnings == [
        "access.approvals.tools.skill:deploy: no skill matches 'deploy'",
        "access.approvals.chats.telegram:5.skill:nope-*: no skill matches 'nope-*'",
    ]


def test_a_skill_setting_becomes_the_turns_rule_for_that_skill() -> None:
    raw = {
        "models": [MODEL],
        "access": {
            "approvals": {
                "groups": {"skill:deploy": {"approval": "always", "approvers": ["admin"]}},
                "tools": {"skill:*": "first_use"},
            }
        },
    }
    cfg = settings_from_dict(raw).access.approvals
    group = approval_policy(cfg, {}, "telegram:-1", group=True)
    dm = approval_policy(cfg, {}, "telegram:1", group=False)
    assert group is not None
    assert dm is not None
    assert group.skill_rule("deploy") == ApprovalRule("skill:deploy", "always", ("admin",))
    assert dm.skill_rule("deploy") == ApprovalRule("skill:*", "first_use")
    assert dm.rule_for("deploy") is None  # a tool of that name is not the skill
