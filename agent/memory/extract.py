"""The extraction pass: recent exchanges + what is known → a `MemoryUpdate` (one LLM call).

The model answers with one JSON object; anything else is an `ExtractionError`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from agent.memory.records import CONTEXT_KINDS, Fact, MemoryUpdate, NewFact, PendingExchange

CATEGORIES = ("preference", "knowledge", "context", "behavior", "goal", "correction")

EXTRACTOR_PROMPT = """\
You are the memory extractor of a chat assistant. From the new exchanges between one person \
and the assistant, update what the assistant should remember about THIS person for future \
conversations.

Rules:
- Keep only durable, descriptive facts about the person (preferences, knowledge, ongoing \
context, habits, goals, corrections of earlier facts). No facts about other people, no \
one-off requests, nothing the assistant said about itself.
- Each fact: "content" (one short sentence), "category" (one of: {categories}), \
"confidence" (0 to 1; below {threshold} is not worth keeping).
- Do not repeat a fact that is already known. List in "remove" the ids of known facts that \
the new exchanges contradict or make stale.
- "work", "personal", "top_of_mind": 1-3 sentence summaries of the person's work context, \
personal context and current focus; null keeps the current summary.

Answer with one JSON object and nothing else:
{{"work": str|null, "personal": str|null, "top_of_mind": str|null,
 "facts": [{{"content": str, "category": str, "confidence": number}}], "remove": [int]}}"""


class ExtractionError(ValueError):
    """The model's answer is not a usable update."""


def extraction_messages(
    exchanges: Sequence[PendingExchange],
    facts: Sequence[Fact],
    contexts: dict[str, str],
    threshold: float,
) -> list[tuple[str, str]]:
    """(role, text) pairs for the extractor model."""
    system = EXTRACTOR_PROMPT.format(categories=", ".join(CATEGORIES), threshold=threshold)
    known = [f"{kind}: {contexts[kind]}" for kind in CONTEXT_KINDS if kind in contexts]
    known += [f"[{f.id}] ({f.category}, {f.confidence:.2f}) {f.content}" for f in facts]
    talk = [
        f"Person: {ex.user_text.strip()}\nAssistant: {_clip(ex.answer, 1500)}" for ex in exchanges
    ]
    user = (
        "Known so far:\n"
        + ("\n".join(known) if known else "(nothing)")
        + "\n\nNew exchanges:\n\n"
        + "\n\n---\n\n".join(talk)
    )
    return [("system", system), ("user", user)]


def parse_update(text: str) -> MemoryUpdate:
    data = _json_object(text)
    contexts = {
        kind: str(data[kind]).strip()
        for kind in CONTEXT_KINDS
        if isinstance(data.get(kind), str) and str(data[kind]).strip()
    }
    facts = tuple(fact for item in _list(data, "facts") if (fact := _fact(item)) is not None)
    remove = tuple(
        int(item)
        for item in _list(data, "remove")
        if isinstance(item, int | float | str) and str(item).strip().isdigit()
    )
    return MemoryUpdate(contexts=contexts, facts=facts, remove=remove)


def _json_object(text: str) -> dict[str, Any]:
    stripped = re.sub(r"^```(?:json)?\s*|\s*```$", "", text.strip())
    start, end = stripped.find("{"), stripped.rfind("}")
    if start < 0 or end < start:
        raise ExtractionError(f"no JSON object in the answer: {text[:80]!r}")
    try:
        data = json.loads(stripped[start : end + 1])
    except json.JSONDecodeError as exc:
        raise ExtractionError(f"bad JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ExtractionError("the answer is not a JSON object")
    return data


def _list(data: dict[str, Any], key: str) -> list[Any]:
    value = data.get(key)
    return value if isinstance(value, list) else []


def _fact(item: Any) -> NewFact | None:
    if not isinstance(item, dict) or not str(item.get("content") or "").strip():
        return None
    try:
        confidence = min(max(float(item.get("confidence", 0)), 0.0), 1.0)
    except (TypeError, ValueError):
        return None
    category = str(item.get("category") or "context").strip().lower()
    return NewFact(
        content=str(item["content"]).strip()[:500],
        category=category if category in CATEGORIES else "context",
        confidence=confidence,
    )


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."
