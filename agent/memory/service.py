"""MemoryService: records exchanges, runs the debounced extraction pass, builds injections.

After each turn the runner calls `record()`: the exchange is written to the `pending` table
(so a restart loses nothing) and a flush is scheduled `debounce_seconds` later; more exchanges
arriving meanwhile push the flush back (at most to 4 × the debounce after the first) and are
batched: one extraction call per person per flush. The flush runs on its own task, never on a
reply's path. The bot's `/memory` command reads and edits through `listing`/`forget`/`clear`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.config_context import MemoryConfig
from agent.memory.extract import extraction_messages, parse_update
from agent.memory.inject import memory_block, profile_block
from agent.memory.records import Fact, PendingExchange
from agent.memory.sqlite import SqliteMemoryStore
from agent.memory.store import MemoryStore
from agent.relay import content_text
from agent.usage import UsageSink, usage_scope

log = logging.getLogger(__name__)

MAX_WAIT_FACTOR = 4
ModelFactory = Callable[[], Any]


@dataclass(frozen=True, slots=True)
class MemoryView:
    """What is remembered about one person, as `/memory` shows it (facts numbered from 1)."""

    contexts: dict[str, str]
    facts: tuple[Fact, ...]


class MemoryService:
    def __init__(
        self,
        config: MemoryConfig,
        data_dir: Path,
        model: ModelFactory,
        store: MemoryStore | None = None,
    ) -> None:
        """`store`: where memory lives (given by the caller); default `<data_dir>/memory.db`."""
        self.config = config
        self.path = Path(data_dir) / "memory.db"
        self._model = model
        self._given = store
        self._store: MemoryStore | None = store
        self._timer: asyncio.Task[None] | None = None
        self._first: float | None = None
        self._due = 0.0
        self.flushes = 0
        self.usage_sink: Callable[[], UsageSink | None] = lambda: None  # the runner's on_usage

    @property
    def enabled(self) -> bool:
        return self.config.enabled

    @property
    def store(self) -> MemoryStore:
        if self._store is None:
            self._store = self._given or SqliteMemoryStore(self.path)
        return self._store

    async def start(self) -> None:
        if self.enabled and await self.store.has_pending():
            self._schedule()

    async def stop(self) -> None:
        """Stop the timer; exchanges not yet processed stay pending for the next start."""
        if self._timer is not None:
            self._timer.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._timer
            self._timer = None
        if self._store is not None and self._store is not self._given:
            self._store.close()
            self._store = None

    # the turn's side -------------------------------------------------------------------------

    async def context_for(self, user_id: str, query: str, name: str = "") -> str:
        """The `<memory>` block for this person's turn ("" when disabled or nothing known)."""
        if not self.enabled or not user_id:
            return ""
        person = await self.store.person(user_id)
        return memory_block(
            await self.store.contexts(person),
            await self.store.facts(person),
            query,
            self.config.max_injection_tokens,
            name,
        )

    async def profile_for(self, user_id: str, name: str = "") -> str:
        """The `<user_profile>` block of this person's turn ("" when they keep none); shown
        whether or not long-term memory is enabled: the person wrote it to be read."""
        if not user_id or not (self.enabled or self._store is not None or self.path.exists()):
            return ""  # memory off and never opened (no one wrote a profile): no memory.db
        return profile_block(await self.store.profile(await self.store.person(user_id)), name)

    async def record(self, user_id: str, thread_id: str, user_text: str, answer: str) -> None:
        if not self.enabled or not user_id or not user_text.strip():
            return
        person = await self.store.person(user_id)
        await self.store.add_pending(person, thread_id, user_text, answer)
        self._schedule()

    # /memory -----------------------------------------------------------------------------------

    async def listing(self, user_id: str) -> MemoryView:
        person = await self.store.person(user_id)
        facts = await self.store.facts(person)
        return MemoryView(await self.store.contexts(person), tuple(facts))

    async def forget(self, user_id: str, number: int) -> Fact | None:
        """Forget the fact shown as `number` (1-based) by `listing`."""
        facts = (await self.listing(user_id)).facts
        if not 1 <= number <= len(facts):
            return None
        fact = facts[number - 1]
        forgotten = await self.store.forget(await self.store.person(user_id), fact.id)
        return fact if forgotten else None

    async def clear(self, user_id: str) -> int:
        return await self.store.clear(await self.store.person(user_id))

    def reload(self) -> None:
        """Reopen the database (after it was replaced on disk); a pass under way is retried.
        A store given by the caller (a database server) has nothing to reopen."""
        if self._given is not None:
            return
        old, self._store = self._store, None
        if old is not None:
            old.close()

    @property
    def flush_scheduled(self) -> bool:
        return self._timer is not None and not self._timer.done()

    # the debounced pass ------------------------------------------------------------------------

    def _schedule(self) -> None:
        now = asyncio.get_running_loop().time()
        debounce = self.config.debounce_seconds
        if self._first is None:
            self._first = now
        self._due = min(now + debounce, self._first + MAX_WAIT_FACTOR * debounce)
        if self._timer is None or self._timer.done():
            self._timer = asyncio.create_task(self._wait_and_flush(), name="memory-flush")

    async def _wait_and_flush(self) -> None:
        loop = asyncio.get_running_loop()
        while (delay := self._due - loop.time()) > 0:
            await asyncio.sleep(delay)
        self._first = None
        try:
            await self.flush()
        except Exception:
            log.exception("memory flush failed")
        if self._store is not None and await self.store.has_pending() and self._first is not None:
            self._timer = asyncio.create_task(self._wait_and_flush(), name="memory-flush")

    async def flush(self) -> None:
        """Process every pending exchange now: one extraction call per person."""
        by_person: dict[str, list[PendingExchange]] = defaultdict(list)
        for exchange in await self.store.pending():
            by_person[exchange.person].append(exchange)
        for person, exchanges in by_person.items():
            await self._extract(person, exchanges)
        self.flushes += 1

    async def _extract(self, person: str, exchanges: list[PendingExchange]) -> None:
        store, ids = self.store, [ex.id for ex in exchanges]
        messages = extraction_messages(
            exchanges,
            await store.facts(person),
            await store.contexts(person),
            self.config.fact_confidence_threshold,
        )
        try:
            with usage_scope(
                sink=self.usage_sink(),
                check=None,
                run_id="",
                thread_id=exchanges[-1].thread_id,
                user_id=person,
                chat="",
            ):
                response = await self._model().ainvoke(messages)
            update = parse_update(content_text(response.content))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # ExtractionError, provider errors: count the attempt
            log.warning("memory extraction for %s failed: %s", person, exc)
            await store.failed_pending(ids)
            return
        if self._store is not store:  # stopped or reloaded meanwhile; try again later
            return
        await store.apply(
            person,
            update,
            source=exchanges[-1].thread_id,
            max_facts=self.config.max_facts,
            threshold=self.config.fact_confidence_threshold,
            done=ids,
        )
