"""Which agent profile and model a conversation's run uses, within what the sender may use."""

from __future__ import annotations

from agent.grant import Grant
from agent.runner import AgentRunner


def agent_for(runner: AgentRunner, chosen: str | None, grant: Grant | None) -> str:
    """The chosen agent (the chat's /agent choice, else its bot's, else the default), or the
    first the grant allows when it is not allowed."""
    current = runner.profile(chosen).name
    if grant is None or grant.allows_agent(current):
        return current
    allowed = [n for n in runner.agent_names() if grant.allows_agent(n)]
    return allowed[0] if allowed else current


def model_for(
    runner: AgentRunner, chosen: str | None, grant: Grant | None, agent: str
) -> str | None:
    """The conversation's model (else its agent's), or the first the grant allows when it is
    not allowed."""
    model = chosen or runner.profile(agent).model
    if grant is None or grant.allows_model(runner.resolve_model(model).name):
        return model
    allowed = [n for n in runner.model_names() if grant.allows_model(n)]
    return allowed[0] if allowed else model
