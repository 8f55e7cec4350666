"""Agent profiles (`agents:`): the config's checks name the YAML path, a SOUL file is found next
to config.yaml, `lead_agent` is implied, and a profile narrows a grant like one more role."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agent.grant import Grant, Layer
from agent.profiles import LEAD_AGENT, AgentProfile, with_lead
from bot.config.boundary import kind_of
from bot.config.schema import ConfigError, load_settings, settings_from_dict

MODELS = [{"name": "fast", "model": "m"}, {"name": "smart", "model": "m2"}]


def problems(agents: list[dict]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        settings_from_dict({"models": MODELS, "agents": agents})
    return info.value.problems


def test_bad_profiles_are_refused_with_their_yaml_path() -> None:
    assert problems([{"name": "a b"}])[0].startswith("agents[0].name: String should match")
    assert problems([{"name": "x", "model": "huge"}]) == [
        "agents[0].model: 'huge' is not one of models[].name"
    ]
    assert problems([{"name": "x"}, {"name": "X"}]) == ["agents[1].name: duplicate agent name 'X'"]
    assert problems([{"name": "x", "system_prompt": "a", "soul_file": "SOUL.md"}]) == [
        "agents[0].system_prompt: give system_prompt or soul_file, not both"
    ]
    assert problems([{"name": "x", "memory": "mine"}])[0].startswith("agents[0].memory:")
    assert kind_of("agents") == "live"
    assert kind_of("agents[0].system_prompt") == "live"


def test_a_soul_file_is_found_next_to_the_config_and_read_as_the_prompt(tmp_path: Path) -> None:
    (tmp_path / "souls").mkdir()
    (tmp_path / "souls" / "eng.md").write_text("You are Eng.\n")
    agents = [{"name": "eng", "soul_file": "souls/eng.md"}, {"name": "plain"}]
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"models": MODELS, "agents": agents}))
    settings = load_settings(path)
    eng, plain = settings.agents
    assert eng.soul_file == tmp_path / "souls" / "eng.md"
    assert eng.prompt("house") == "You are Eng."
    assert plain.prompt("house") == "house"  # no prompt of its own: agent.system_prompt
    agents[0]["soul_file"] = "souls/missing.md"
    path.write_text(yaml.safe_dump({"models": MODELS, "agents": agents}))
    with pytest.raises(ConfigError) as info:
        load_settings(path)
    assert info.value.problems == [
        f"agents[0].soul_file: {tmp_path / 'souls' / 'missing.md'} is not a file"
    ]


def test_lead_agent_is_implied_first_and_may_be_configured() -> None:
    assert list(with_lead([AgentProfile(name="eng")])) == [LEAD_AGENT, "eng"]
    own = AgentProfile(name=LEAD_AGENT, display_name="Antler", model="smart")
    assert with_lead([AgentProfile(name="eng"), own])[LEAD_AGENT] is own


def test_a_profile_narrows_a_grant_and_keeps_the_right_to_approve() -> None:
    everything = AgentProfile(name="all")
    assert everything.narrow(None) is None
    support = AgentProfile(name="support", tools=["web_*"], mcp_servers=[], skills=["faq"])
    alone = support.narrow(None)
    assert alone is not None
    assert alone.allows_tool("web_search")
    assert not alone.allows_tool("bash")
    assert not alone.allows_tool("get_issue", "github")  # no MCP server
    assert alone.allows_skill("faq")
    assert not alone.allows_skill("deploy")
    admin = Grant((Layer(role="admin", tools=("bash", "web_search"), may_approve=True),))
    both = support.narrow(admin)
    assert both is not None
    assert both.may_approve
    assert both.allows_tool("web_search")
    assert not both.allows_tool("bash")
    guest = support.narrow(Grant((Layer(role="guest", tools=()),)))
    assert guest is not None
    assert not guest.allows_tool("web_search")


def test_memory_own_keeps_a_memory_per_person_and_agent() -> None:
    assert AgentProfile(name="a").memory_key("telegram:42") == "telegram:42"
    own = AgentProfile(name="a", memory="own")
    assert own.memory_key("telegram:42") == "telegram:42@agent:a"
    assert own.memory_key("") == ""  # nobody: no memory either way
