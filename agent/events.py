"""What the agent tells the service while it works: typed events, the only output of a run."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent.approval import ApprovalPolicy
    from agent.grant import Grant


@dataclass(frozen=True, slots=True)
class TextDelta:
    """More answer text (append to what came before)."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolStarted:
    call_id: str
    name: str
    label: str = ""


@dataclass(frozen=True, slots=True)
class ToolFinished:
    call_id: str
    name: str
    ok: bool = True
    summary: str = ""


@dataclass(frozen=True, slots=True)
class Progress:
    """A progress line that is not a tool call (todo items, subagent steps)."""

    id: str
    label: str
    state: str = "running"


@dataclass(frozen=True, slots=True)
class Clarification:
    """The agent asks the user; the turn ends here."""

    question: str
    options: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ApprovalRequested:
    """The run paused: tool calls wait for a person's yes (agent/approval.py). The turn ends
    here; the run is resumed by a turn whose `resume` carries the decision."""

    interrupt_id: str
    request: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Artifact:
    """A file the agent presents to the user (host path)."""

    path: Path


@dataclass(frozen=True, slots=True)
class Final:
    """The run finished; `text` is the whole answer."""

    text: str


@dataclass(frozen=True, slots=True)
class Failed:
    """The run failed; `message` is short and fit to show a user."""

    code: str
    message: str


AgentEvent = (
    TextDelta
    | ToolStarted
    | ToolFinished
    | Progress
    | Clarification
    | ApprovalRequested
    | Artifact
    | Final
    | Failed
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Turn:
    """One user turn as the agent sees it.

    `user_id` identifies the person (platform-qualified, e.g. `telegram:42`) for memory;
    `files` are paths as the agent sees them (`/mnt/user-data/uploads/...`); `context` is text
    the channel gathered (a quoted message, earlier thread messages) shown before the message.
    """

    text: str
    user_id: str = ""
    user_name: str = ""
    files: tuple[str, ...] = ()
    context: str = ""
    chat_type: str = "dm"
    skill: str | None = None
    chat: str = ""  # the conversation's key, for the audit trail
    grant: Grant | None = None  # what the person may use here; None: everything
    run_id: str = ""  # whose model calls these are (agent/usage.py); "" → a new id
    approvals: ApprovalPolicy | None = None  # which calls wait for a yes; None: none
    # a decision for the thread's pending approval: {"interrupt_id": ..., "decision": ...,
    # "by": ...}; the run resumes there instead of starting from `text`
    resume: dict[str, Any] | None = None
    memory_id: str = ""  # whose memory the run reads and writes; "" → user_id (agent/profiles.py)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSettings:
    """Per-conversation choices that shape a run."""

    agent: str | None = None  # the agent profile (agent/profiles.py); None: lead_agent
    model: str | None = None  # None: the profile's model, else the default
    thinking: bool = False
    plan_mode: bool = False
    # DeerFlow's bootstrap: the name of the agent this run sets up (`setup_agent`); None: none
    bootstrap: str | None = None
    extra: dict[str, object] = field(default_factory=dict)
