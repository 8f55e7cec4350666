"""System prompt sections for the agent's hands (files, skills, clarification, subagents)."""

from __future__ import annotations

from collections.abc import Callable
from html import escape

from agent.skills.registry import SkillRegistry

WORKING_DIRECTORY = """\
<working_directory>
You have a private file area for this conversation (paths are absolute, virtual):
- /mnt/user-data/uploads: files the user sent in the chat. New ones are listed in their message.
- /mnt/user-data/workspace: your working directory for scratch work.
- /mnt/user-data/outputs: deliverables. Write files for the user here, then call present_files \
with their paths to send them in the chat (after your answer).
Tools: ls, read_file (start_line/end_line for ranges), write_file (append=true to add), \
str_replace (prefer it to rewriting a file), glob, grep.{bash}
Paths outside these folders, '..' and links leading out are refused.
</working_directory>"""

BASH_LINE = (
    "\nbash runs shell commands and python runs Python code, with /mnt/user-data/workspace as "
    "the working directory; both see the folders above at the same paths."
)

CLARIFICATION = """\
<clarification>
When a request is ambiguous, information is missing, or a step is risky or irreversible, call \
ask_clarification(question, options) instead of guessing; the turn ends there and the user's \
answer arrives as the next message (a button press gives the option's text; a bare number \
means that option). Ask one focused question with 2-5 short options when it is a choice. Do \
not ask about things you can reasonably decide yourself.
</clarification>"""

SUBAGENTS = """\
<subagents>
task(description, prompt, subagent_type) delegates a self-contained piece of work to a \
subagent, which cannot see this conversation (put everything it needs in prompt) and returns \
a report. Use it for independent parallel work (research several topics, process several \
files); do simple things yourself. At most {limit} task calls per response run; extra calls \
are discarded. Types: {types}.
</subagents>"""


def lead_static(*, bash: bool, subagent_types: list[str] | None, limit: int) -> str:
    parts = [WORKING_DIRECTORY.format(bash=BASH_LINE if bash else ""), CLARIFICATION]
    if subagent_types:
        parts.append(SUBAGENTS.format(limit=limit, types=", ".join(subagent_types)))
    return "\n\n".join(parts)


def subagent_static(*, bash: bool) -> str:
    return WORKING_DIRECTORY.format(bash=BASH_LINE if bash else "")


def skills_section(registry: SkillRegistry, allowed: Callable[[str], bool] = bool) -> str:
    enabled = [s for s in registry.enabled() if allowed(s.name)]
    if not enabled:
        return ""
    items = "\n".join(
        f"<skill><name>{escape(s.name)}</name><description>{escape(s.description)}"
        f"</description><location>{s.virtual_path}</location></skill>"
        for s in enabled
    )
    return (
        "<skills>\nSkills are instructions for specific kinds of work, located at /mnt/skills. "
        "When a request matches a skill's description, read its SKILL.md with read_file first "
        "and follow it (it may point to more files next to it). The user can also start a "
        "message with /<skill-name> to use one.\n<available_skills>\n"
        f"{items}\n</available_skills>\n</skills>"
    )
