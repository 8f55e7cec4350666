"""What happens around a run so the agent keeps its footing across turns and conversations.

Before the graph runs: uploaded documents are converted, images marked for vision models, and
the person's memory block is looked up. After it: the exchange is queued for the memory pass; the
first exchange of a thread gets a title, after its answer went out.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from agent.config import AgentConfig, ModelConfig
from agent.events import Turn
from agent.memory import MemoryService
from agent.models import create_chat_model
from agent.paths import ThreadDirs
from agent.prompt import human_content, human_metadata
from agent.titles import make_title
from agent.uploads import prepare_files

log = logging.getLogger(__name__)

History = Callable[[str], Awaitable[list[Any]]]


@dataclass(frozen=True, slots=True)
class PreparedTurn:
    message: Any  # the HumanMessage
    memory: str  # the `<memory>` block ("" when none)
    first_exchange: bool


class Continuity:
    def __init__(self, config: AgentConfig, memory: MemoryService, history: History) -> None:
        self.config = config
        self.memory = memory
        self._history = history

    async def before(
        self, thread_id: str, turn: Turn, model: ModelConfig, dirs: ThreadDirs
    ) -> PreparedTurn:
        from langchain_core.messages import HumanMessage

        files = await prepare_files(
            turn.files, dirs, self.config.uploads, vision=model.supports_vision
        )
        meta = human_metadata(turn)
        if files.images:
            meta["images"] = list(files.images)
        content = human_content(turn, files.block if turn.files else None)
        message = HumanMessage(content=content, additional_kwargs={"antler": meta})
        first = self.config.title.enabled and not await self._answered_before(thread_id)
        return PreparedTurn(message, await self.memory_block(turn), first)

    async def memory_block(self, turn: Turn) -> str:
        """The sender's profile (theirs whichever agent answers), then the memory the run
        reads (the person's, or theirs with an agent of `memory: own`)."""
        name = turn.user_name if turn.chat_type != "dm" else ""
        try:
            memory = await self.memory.context_for(turn.memory_id or turn.user_id, turn.text, name)
        except Exception:  # memory is a help, never a reason to fail the turn
            log.exception("memory lookup for %s failed", turn.user_id)
            memory = ""
        return "\n\n".join(block for block in (await self.profile_block(turn), memory) if block)

    async def profile_block(self, turn: Turn) -> str:
        """The sender's `<user_profile>` ("" when none, or when it cannot be read)."""
        name = turn.user_name if turn.chat_type != "dm" else ""
        try:
            return await self.memory.profile_for(turn.user_id, name)
        except Exception:
            log.exception("profile lookup for %s failed", turn.user_id)
            return ""

    async def remember(self, thread_id: str, turn: Turn, answer: str) -> None:
        """Queue the exchange for the memory pass (which runs later, off the reply path)."""
        try:
            await self.memory.record(turn.memory_id or turn.user_id, thread_id, turn.text, answer)
        except Exception:
            log.exception("could not queue the exchange of %s for memory", turn.user_id)

    async def title(
        self, turn: Turn, answer: str, model: ModelConfig, models: list[ModelConfig]
    ) -> str:
        """A short title for a thread's first exchange ("" when none could be made)."""
        cfg = self.config.title
        title_model = next(
            (m for m in models if cfg.model_name and m.name == cfg.model_name), model
        )
        chat = create_chat_model(title_model, self.config, thinking=False, purpose="title")
        title = await make_title(
            chat, turn.text, answer, cfg, timeout=min(30.0, self.config.request_timeout_seconds)
        )
        return title or ""

    async def _answered_before(self, thread_id: str) -> bool:
        return any(getattr(m, "type", "") == "ai" for m in await self._history(thread_id))
