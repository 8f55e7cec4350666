"""The runner's LangGraph-API side: a turn as LangGraph's own `(mode, payload)` stream, and the
thread's checkpoints read and updated (the Gateway's threads and runs use them).

`GraphApi` is a part of `AgentRunner` (agent/runner.py), which stays the one seam callers use;
it shares the runner's runs (one per thread), graphs and checkpointer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from agent.approval import api_resume, resume_command
from agent.events import RunSettings, Turn
from agent.paths import check_thread_id
from agent.run_state import BUSY, CANCELLED, Run, RunCancelled, ThreadBusy, thread_config

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

    from agent.after_answer import AfterAnswer
    from agent.config import AgentConfig, ModelConfig
    from agent.context import RunContext
    from agent.continuity import Continuity

log = logging.getLogger(__name__)

_END = "__end__"
STOPPED = "stopped"  # the metadata mark of an answer cut short by a stop


class GraphApi:
    """Mixed into `AgentRunner`; the attributes below are the runner's."""

    if TYPE_CHECKING:
        config: AgentConfig
        _runs: dict[str, Run]
        _stopping: bool

        async def _graph(self, settings: RunSettings) -> Any: ...

        _saver: Any

        def resolve_model(self, name: str | None) -> ModelConfig: ...
        async def _title(
            self, thread_id: str, turn: Turn, answer: str, model: ModelConfig
        ) -> None: ...

        _after: AfterAnswer
        continuity: Continuity

        async def _release(self, thread_id: str, run: Run) -> None: ...
        def _context(
            self, thread_id: str, turn: Turn, settings: RunSettings, memory: str = ""
        ) -> RunContext: ...
        def usage_scope(
            self, thread_id: str, turn: Turn
        ) -> contextlib.AbstractContextManager[Any]: ...

    async def history(self, thread_id: str) -> list[BaseMessage]:
        saver = self._require_saver()
        checkpoint = await saver.aget_tuple(thread_config(thread_id))
        if checkpoint is None:
            return []
        return list(checkpoint.checkpoint["channel_values"].get("messages", []))

    async def checkpoint(self, thread_id: str, checkpoint_id: str | None = None) -> Any:
        """The thread's newest `CheckpointTuple` (or the one named), or None when none."""
        return await self._require_saver().aget_tuple(thread_config(thread_id, checkpoint_id))

    async def checkpoints(self, thread_id: str, limit: int, before: str | None = None) -> list[Any]:
        """The thread's checkpoints, newest first (`CheckpointTuple`s)."""
        cursor = {"configurable": {"checkpoint_id": before}} if before else None
        saver = self._require_saver()
        return [t async for t in saver.alist(thread_config(thread_id), limit=limit, before=cursor)]

    async def update_state(
        self,
        thread_id: str,
        values: dict[str, Any],
        as_node: str | None = None,
        checkpoint_id: str | None = None,
    ) -> Any:
        """LangGraph's `update_state`: the new checkpoint's config; ThreadBusy while it runs."""
        check_thread_id(thread_id)
        graph = await self._graph(RunSettings())
        if thread_id in self._runs:
            raise ThreadBusy(BUSY)
        unknown = sorted(set(values) - set(graph.channels))
        if unknown:
            raise ValueError(f"the state has no {', '.join(map(repr, unknown))}")
        config = thread_config(thread_id, checkpoint_id)
        return await graph.aupdate_state(config, values, as_node=as_node)

    async def pending_interrupts(self, thread_id: str) -> dict[str, Any]:
        """The thread's interrupts waiting for a resume, by id (an approval's request)."""
        check_thread_id(thread_id)
        graph = await self._graph(RunSettings())
        state = await graph.aget_state(thread_config(thread_id))
        return {str(i.id): i.value for i in getattr(state, "interrupts", ()) or ()}

    async def keep_stopped(self, thread_id: str, shown: str) -> bool:
        """A reply stopped mid-answer: its thread ends with the user's turn (or a tool's
        result) and no answer, so add what the user was shown as the assistant's message,
        marked `stopped` in its metadata (the console shows it, the next turn sees it).
        False when the thread already ends with an answer (nothing of this turn was saved)."""
        from langchain_core.messages import AIMessage

        history = await self.history(thread_id)
        if not history or history[-1].type not in ("human", "tool"):
            return False
        message = AIMessage(content=shown, response_metadata={STOPPED: True})
        await self.update_state(thread_id, {"messages": [message]}, as_node="model")
        return True

    async def stream_graph(
        self,
        thread_id: str,
        messages: list[Any],
        settings: RunSettings,
        modes: list[str],
        *,
        turn: Turn | None = None,
        checkpoint_id: str | None = None,
        resume: Any = None,
    ) -> AsyncIterator[tuple[str, Any]]:
        """Run one turn yielding LangGraph's own `(mode, payload)` stream (the LangGraph API).

        With `checkpoint_id` the run continues from that checkpoint (an older one forks).
        `turn`: who runs it (`user_id`), its usage id (`run_id`) and which calls wait for
        approval (`approvals`); its text is not used. `resume` (a client's `command.resume`, a
        decision): the run resumes the thread's pending approval instead of taking `messages`.

        Raises ThreadBusy when the thread runs, ValueError on a bad thread id or model, and
        RunCancelled when `cancel(thread_id)` stops it; other graph errors propagate as is.
        """
        check_thread_id(thread_id)
        turn = replace(turn or Turn(text=""), text="")
        if resume is not None:
            pending = await self.pending_interrupts(thread_id)
            turn = replace(turn, resume=api_resume(pending, resume))
        graph = await self._graph(settings)
        if self._stopping:  # stopped while the graph was built: as if stopped running
            raise RunCancelled(CANCELLED)
        if thread_id in self._runs:
            raise ThreadBusy(BUSY)
        run = Run()
        self._runs[thread_id] = run
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        config = thread_config(thread_id, checkpoint_id)
        graph_input = resume_command(turn.resume) if turn.resume else {"messages": messages}
        run.task = asyncio.create_task(
            self._produce_raw(graph, config, graph_input, turn, settings, modes, queue),
            name=f"agent-graph-run:{thread_id}",
        )
        try:
            while True:
                mode, payload = await queue.get()
                if mode == _END:
                    if payload is not None:
                        raise payload
                    return
                yield mode, payload
        finally:
            await self._release(thread_id, run)

    async def _produce_raw(
        self,
        graph: Any,
        config: dict[str, Any],
        graph_input: Any,
        turn: Turn,
        settings: RunSettings,
        modes: list[str],
        queue: asyncio.Queue[tuple[str, Any]],
    ) -> None:
        thread_id = config["configurable"]["thread_id"]
        profile = await self.continuity.profile_block(turn)  # the caller's (DeerFlow's USER.md)
        with self.usage_scope(thread_id, turn):
            try:
                async for mode, payload in graph.astream(
                    graph_input,
                    config={**config, "recursion_limit": self.config.recursion_limit},
                    context=self._context(thread_id, turn, settings, profile),
                    stream_mode=modes,
                ):
                    queue.put_nowait((mode, payload))
            except asyncio.CancelledError:
                queue.put_nowait((_END, RunCancelled(CANCELLED)))
                raise
            except Exception as exc:
                log.warning("graph run failed on thread %s", thread_id, exc_info=True)
                queue.put_nowait((_END, exc))
                return
            queue.put_nowait((_END, None))

    def title_later(self, thread_id: str, text: str, answer: str, model: str | None) -> None:
        """A thread's first exchange run another way (the LangGraph API) gets the same title
        step as a chat's, in the background, reported through `on_title`."""
        if self.config.title.enabled and answer.strip():
            turn = Turn(text=text)
            self._after.spawn(self._title(thread_id, turn, answer, self.resolve_model(model)))

    def _require_saver(self) -> Any:
        if self._saver is None:
            raise RuntimeError("AgentRunner.start() was not called")
        return self._saver
