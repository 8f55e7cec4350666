"""The memory block a turn gets: context summaries, then the most relevant facts, within a cap.

Tokens are estimated at four characters each (no tokenizer download). Corrections come first,
then facts ranked by confidence plus word overlap with the current message.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agent.memory.records import Fact

_LABELS = {"work": "Work", "personal": "Personal", "top_of_mind": "Current focus"}
_WORD = re.compile(r"\w{3,}")


def estimate_tokens(text: str) -> int:
    return (len(text) + 3) // 4


def memory_block(
    contexts: dict[str, str],
    facts: Sequence[Fact],
    query: str,
    max_tokens: int,
    name: str = "",
) -> str:
    """`<memory>…</memory>` for the model, or "" when nothing is remembered."""
    if not contexts and not facts:
        return ""
    who = f" about {name}" if name else " about the person you are talking with"
    head = f"<memory>\nWhat you remember{who} from earlier conversations:"
    tail = "</memory>"
    lines = [head]
    used = estimate_tokens(head) + estimate_tokens(tail)
    for kind, label in _LABELS.items():
        if kind in contexts:
            line = f"{label}: {contexts[kind]}"
            if used + estimate_tokens(line) > max_tokens:
                break
            lines.append(line)
            used += estimate_tokens(line) + 1
    ranked = rank_facts(facts, query)
    if ranked:
        lines.append("Facts:")
        used += 2
    for fact in ranked:
        line = f"- {fact.content}"
        cost = estimate_tokens(line) + 1
        if used + cost > max_tokens:
            break
        lines.append(line)
        used += cost
    if lines[-1] == "Facts:":
        lines.pop()
    lines.append(tail)
    return "\n".join(lines)


def profile_block(profile: str, name: str = "") -> str:
    """`<user_profile>…</user_profile>`: what the person wrote about themselves (DeerFlow's
    USER.md), or "" when nothing."""
    if not profile.strip():
        return ""
    who = name or "the person you are talking with"
    return (
        f"<user_profile>\nWhat {who} wrote about themselves (background and preferences):\n"
        f"{profile.strip()}\n</user_profile>"
    )


def rank_facts(facts: Sequence[Fact], query: str) -> list[Fact]:
    words = set(_WORD.findall(query.lower()))

    def score(fact: Fact) -> tuple[bool, float, int]:
        overlap = len(words & set(_WORD.findall(fact.content.lower())))
        return (fact.category == "correction", fact.confidence + 0.25 * min(overlap, 4), fact.id)

    return sorted(facts, key=score, reverse=True)
