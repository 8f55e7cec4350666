"""Tools that talk to the user: `present_files` (deliver outputs) and `ask_clarification`.

`present_files` writes `{"antler": "artifact", "path": <host path>}` to the custom stream; the
relay turns it into an `Artifact` event. `ask_clarification` is `return_direct`: the run ends
after it and the relay turns its tool message into a `Clarification` event. The tool message
keeps the numbered options, so the model reads a later answer like "2" against them.
"""

from __future__ import annotations

from typing import Any

from langchain.tools import ToolRuntime
from langchain_core.tools import BaseTool, tool

from agent.context import RunContext
from agent.paths import ThreadDirs
from agent.sandbox.vfs import OUTPUTS, SandboxError, VirtualFS

CLARIFICATION_TOOL = "ask_clarification"
MAX_OPTIONS = 10


@tool
def present_files(filepaths: list[str], runtime: ToolRuntime[RunContext]) -> str:
    """Send files to the user in the chat. Only files under /mnt/user-data/outputs can be
    presented: write deliverables there first, then call this once with all of them."""
    dirs = _dirs(runtime)
    fs = VirtualFS(dirs)
    sent: list[str] = []
    for path in filepaths:
        target = fs.resolve(path)
        if target.mount.virtual != OUTPUTS:
            raise SandboxError(f"{path}: only files in {OUTPUTS} can be presented")
        if not target.host.is_file():
            raise SandboxError(f"{target.virtual}: no such file")
        runtime.stream_writer({"antler": "artifact", "path": str(target.host)})
        sent.append(target.virtual)
    if not sent:
        raise SandboxError("no files given")
    return "Presented to the user: " + ", ".join(sent)


@tool(response_format="content_and_artifact", return_direct=True)
def ask_clarification(question: str, options: list[str] | None = None) -> tuple[str, Any]:
    """Ask the user a question and stop until they answer. Use it when the request is
    ambiguous, information is missing, or a risky step needs confirmation: asking beats
    guessing. Give 2-5 short options when the answer is a choice."""
    choices = [str(o).strip() for o in (options or []) if str(o).strip()][:MAX_OPTIONS]
    lines = [question.strip()]
    lines += [f"{i}. {option}" for i, option in enumerate(choices, start=1)]
    return "\n".join(lines), {"question": question.strip(), "options": choices}


def _dirs(runtime: ToolRuntime[RunContext]) -> ThreadDirs:
    context = runtime.context
    if not isinstance(context, RunContext):
        raise SandboxError("no thread context")
    return context.dirs


def interaction_tools() -> list[BaseTool]:
    return [present_files, ask_clarification]
