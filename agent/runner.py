"""AgentRunner: the one seam between the service and the agent stack.

`stream(thread_id, turn, settings)` runs one turn and yields `AgentEvent`s, ending with exactly
one `Final` or `Failed`. One run per thread at a time; cancel by cancelling the task iterating
the stream (or `cancel(thread_id)`). Checkpoints live where the caller's `checkpoints` says
(default `<data_dir>/checkpoints.db`, see agent/checkpoints.py). The LangGraph-API side (a
turn as LangGraph's own stream, checkpoints read and updated) is agent/graph_api.py, a part of
the runner.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from agent.after_answer import AfterAnswer
from agent.approval import resume_command
from agent.checkpoints import Checkpoints, SqliteCheckpoints
from agent.config import AgentConfig, ModelConfig
from agent.context import BuildContext, RunContext
from agent.continuity import Continuity, PreparedTurn
from agent.errors import describe_failure, setup_failure
from agent.events import AgentEvent, Failed, Final, RunSettings, Turn
from agent.features import context_middlewares
from agent.grant import ToolObserver
from agent.graph_api import GraphApi
from agent.graph_cache import GraphCache
from agent.http import hold_pools, release_pools
from agent.memory import MemoryService, MemoryStore
from agent.models import create_chat_model, model_warnings, warm_imports
from agent.paths import ThreadDirs, check_thread_id, thread_dirs
from agent.profiles import AgentProfile, with_lead
from agent.relay import EventRelay, coalesce_deltas
from agent.run_state import BUSY, CANCELLED, Run, RunCancelled, ThreadBusy, settle, thread_config
from agent.tools import DEFAULT_TOOL_PROVIDERS, MiddlewareProvider, ToolProvider
from agent.usage import UsageScope, UsageSink, new_run_id, usage_scope

__all__ = ["BUSY", "CANCELLED", "AgentRunner", "RunCancelled", "ThreadBusy"]

log = logging.getLogger(__name__)

# Checkpoint once, when the run ends (finished, failed or cancelled), not after every step:
# a turn interrupted by a crash is answered again from its start (the delivery journal), so the
# steps in between are never resumed, and each write costs a serialization of the history.
DURABILITY = "exit"


class AgentRunner(GraphApi):
    def __init__(
        self,
        *,
        models: list[ModelConfig],
        default_model: str | None,
        config: AgentConfig,
        data_dir: Path,
        tool_providers: Sequence[ToolProvider] = DEFAULT_TOOL_PROVIDERS,
        middleware_providers: Sequence[MiddlewareProvider] = (),
        checkpoints: Checkpoints | None = None,
        memory_store: MemoryStore | None = None,
    ) -> None:
        if not models:
            raise ValueError("at least one model must be configured (models[])")
        self.models = list(models)
        self.default_model = default_model
        self.config = config
        self.profiles = with_lead([])  # use_profiles: the `agents:` section
        self.data_dir = Path(data_dir)
        self.tool_providers = list(tool_providers)
        self.middleware_providers = [context_middlewares, *middleware_providers]
        self.checkpoint_store = checkpoints or SqliteCheckpoints(self.data_dir / "checkpoints.db")
        self.memory = MemoryService(
            config.memory, self.data_dir, self._memory_model, store=memory_store
        )
        self.memory.usage_sink = lambda: self.on_usage
        self.continuity = Continuity(config, self.memory, self.history)
        self.graphs = GraphCache()
        self._stopping = False
        self._runs: dict[str, Run] = {}
        self._dirs_made: set[str] = set()
        self._saver: Any = None
        self._after = AfterAnswer()
        self.on_title: Callable[[str, str], Awaitable[None] | None] = lambda _id, _title: None
        self.on_tool: ToolObserver | None = None  # every tool call, as it ends or is refused
        self.on_usage: UsageSink | None = None  # every model call's tokens (agent/usage.py)
        self.usage_check: Callable[[UsageScope], Awaitable[None]] | None = None  # before a call

    def replace_providers(
        self,
        tools: Mapping[ToolProvider, ToolProvider],
        middlewares: Mapping[MiddlewareProvider, MiddlewareProvider],
    ) -> None:
        """Swap providers (the hands rebuilt by a config reload) for the next runs."""
        self.tool_providers = [tools.get(p, p) for p in self.tool_providers]
        self.middleware_providers = [middlewares.get(p, p) for p in self.middleware_providers]

    def reconfigure(
        self, *, models: list[ModelConfig], default_model: str | None, config: AgentConfig
    ) -> None:
        """New settings for the next runs (a config reload); running ones finish as they began."""
        if not models:
            raise ValueError("at least one model must be configured (models[])")
        self.models, self.default_model, self.config = list(models), default_model, config
        self.continuity.config = config
        self.memory.config = config.memory
        self.graphs.clear()  # built again, with the new settings, by the next run

    def use_profiles(self, profiles: Sequence[AgentProfile]) -> None:
        """The agent profiles for the next runs (`agents:`; `lead_agent` implied)."""
        self.profiles = with_lead(list(profiles))
        self.graphs.clear()

    # lifecycle -------------------------------------------------------------------------------

    async def start(self) -> None:
        from agent.tracing import inline_untraced_bookkeeping

        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._stopping = False
        self._saver = await self.checkpoint_store.open()
        inline_untraced_bookkeeping()
        hold_pools()
        await self.memory.start()
        await asyncio.to_thread(warm_imports, self.models)

    async def stop(self) -> None:
        self._stopping = True
        tasks = [run.task for run in self._runs.values() if run.task is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self.graphs.drain()
        await self._after.close()
        await self.memory.stop()
        await release_pools()
        if self._saver is not None:
            await self.checkpoint_store.close()
        self._saver = None

    # models ----------------------------------------------------------------------------------

    def model_names(self) -> list[str]:
        return [model.name for model in self.models]

    def resolve_model(self, name: str | None) -> ModelConfig:
        """The named model; None or an unconfigured name → `default_model`, else the first."""
        for wanted in (name, self.default_model):
            for model in self.models:
                if wanted is not None and model.name == wanted:
                    return model
        if name is not None:
            log.warning("model %r is not configured; using the default", name)
        return self.models[0]

    def agent_names(self) -> list[str]:
        """Every agent profile, `lead_agent` first."""
        return list(self.profiles)

    def profile(self, name: str | None) -> AgentProfile:
        """The named profile; None or an unconfigured name → `lead_agent`."""
        found = self.profiles.get(name or "")
        if found is None and name is not None:
            log.warning("agent %r is not configured; using lead_agent", name)
        return found or next(iter(self.profiles.values()))

    def model_for(self, settings: RunSettings) -> ModelConfig:
        """The run's model: the chat's choice, else its agent's, else the default."""
        return self.resolve_model(settings.model or self.profile(settings.agent).model)

    def model_warnings(self) -> list[str]:
        warnings = model_warnings(self.models)
        if self.default_model and self.default_model not in self.model_names():
            warnings.append(f"default_model {self.default_model!r} is not in models[]")
        return warnings

    # threads ---------------------------------------------------------------------------------

    def thread_dirs(self, thread_id: str) -> ThreadDirs:
        """The thread's host directories, created on first use."""
        made = thread_id in self._dirs_made
        dirs = thread_dirs(self.data_dir, thread_id, create=not made)
        self._dirs_made.add(thread_id)
        return dirs

    async def _made_thread_dirs(self, thread_id: str) -> ThreadDirs:
        """`thread_dirs`, created on a worker thread the first time (a slow disk stalls no
        other conversation)."""
        if thread_id in self._dirs_made:
            return self.thread_dirs(thread_id)
        return await asyncio.to_thread(self.thread_dirs, thread_id)

    def is_running(self, thread_id: str) -> bool:
        return thread_id in self._runs

    def cancel(self, thread_id: str) -> bool:
        """Stop the thread's run; its stream ends with `Failed("cancelled")`. False if idle."""
        run = self._runs.get(thread_id)
        if run is None or run.task is None or run.task.done():
            return False
        run.task.cancel()
        return True

    async def delete_thread(self, thread_id: str) -> None:
        """Forget the thread's checkpoints and files. Refused (ThreadBusy) while it runs."""
        check_thread_id(thread_id)
        if thread_id in self._runs:
            raise ThreadBusy(BUSY)
        await self._require_saver().adelete_thread(thread_id)
        root = self.data_dir / "threads" / thread_id
        await asyncio.to_thread(shutil.rmtree, root, True)
        self._dirs_made.discard(thread_id)

    # runs ------------------------------------------------------------------------------------

    async def stream(
        self, thread_id: str, turn: Turn, settings: RunSettings
    ) -> AsyncIterator[AgentEvent]:
        if thread_id in self._runs:
            yield Failed("busy", BUSY)
            return
        run = Run()
        self._runs[thread_id] = run
        try:
            async for event in self._run(run, thread_id, turn, settings):
                if isinstance(event, Final | Failed):  # free the thread before the consumer
                    await self._release(thread_id, run)  # sees the end (it may not aclose us)
                yield event
        finally:
            await self._release(thread_id, run)

    async def _release(self, thread_id: str, run: Run) -> None:
        await settle(run.task)
        if self._runs.get(thread_id) is run:
            del self._runs[thread_id]

    async def _run(
        self, run: Run, thread_id: str, turn: Turn, settings: RunSettings
    ) -> AsyncIterator[AgentEvent]:
        try:
            check_thread_id(thread_id)
        except ValueError as exc:
            log.warning("run setup failed for %s: %s", thread_id, exc)
            yield setup_failure(exc)
            return
        queue: asyncio.Queue[AgentEvent] = asyncio.Queue()
        run.task = asyncio.create_task(
            self._produce(thread_id, turn, settings, queue), name=f"agent-run:{thread_id}"
        )
        pending: AgentEvent | None = None
        while True:
            event = pending or await queue.get()
            event, pending = coalesce_deltas(event, queue)
            yield event
            if isinstance(event, Final | Failed):
                return

    def usage_scope(self, thread_id: str, turn: Turn) -> contextlib.AbstractContextManager[Any]:
        """Whom this run's model calls count for (titles, subagents and memory inherit it)."""
        sink, check, run_id = self.on_usage, self.usage_check, turn.run_id or new_run_id()
        return usage_scope(sink=sink, check=check, run_id=run_id, thread_id=thread_id,
                           user_id=turn.user_id, chat=turn.chat)  # fmt: skip

    async def _produce(
        self, thread_id: str, turn: Turn, settings: RunSettings, queue: asyncio.Queue[AgentEvent]
    ) -> None:
        with self.usage_scope(thread_id, turn):
            await self._produce_in_scope(thread_id, turn, settings, queue)

    async def _produce_in_scope(
        self, thread_id: str, turn: Turn, settings: RunSettings, queue: asyncio.Queue[AgentEvent]
    ) -> None:
        try:
            graph = await self._graph(settings)
        except asyncio.CancelledError:
            queue.put_nowait(Failed("cancelled", CANCELLED))
            raise
        except Exception as exc:  # unknown model, bad class path
            log.warning("run setup failed for %s: %s", thread_id, exc)
            queue.put_nowait(setup_failure(exc))
            return
        await self._turn(graph, thread_id, turn, settings, queue)

    async def _turn(
        self,
        graph: Any,
        thread_id: str,
        turn: Turn,
        settings: RunSettings,
        queue: asyncio.Queue[AgentEvent],
    ) -> None:
        relay = EventRelay()
        model = self.model_for(settings)
        turn = replace(turn, memory_id=self.profile(settings.agent).memory_key(turn.user_id))
        try:
            dirs = await self._made_thread_dirs(thread_id)
            prepared = await self._prepare(thread_id, turn, model, dirs)
            message = {"messages": [prepared.message]}
            async for mode, payload in graph.astream(
                message if turn.resume is None else resume_command(turn.resume),
                config={**thread_config(thread_id), "recursion_limit": self.config.recursion_limit},
                context=self._context(thread_id, turn, settings, prepared.memory, dirs),
                stream_mode=["messages", "updates", "custom"],
                durability=DURABILITY,
            ):
                for event in relay.feed(mode, payload):
                    queue.put_nowait(event)
        except asyncio.CancelledError:
            queue.put_nowait(Failed("cancelled", CANCELLED))
            raise
        except Exception as exc:
            log.warning("run failed on thread %s", thread_id, exc_info=True)
            queue.put_nowait(describe_failure(exc))
            return
        for event in relay.final():
            queue.put_nowait(event)
        if turn.resume is not None:
            return  # the exchange is remembered once, from the turn that asked
        # after the answer, not before; a task of its own, so the end of the stream (which
        # cancels this producer) does not cut the write short on a database server
        self._after.spawn(self.continuity.remember(thread_id, turn, relay.text), finish=True)
        if prepared.first_exchange and relay.text.strip():
            self._after.spawn(self._title(thread_id, turn, relay.text, model))

    async def _prepare(
        self, thread_id: str, turn: Turn, model: ModelConfig, dirs: ThreadDirs
    ) -> PreparedTurn:
        if turn.resume is None:
            return await self.continuity.before(thread_id, turn, model, dirs)
        return PreparedTurn(None, await self.continuity.memory_block(turn), False)

    async def _title(self, thread_id: str, turn: Turn, answer: str, model: ModelConfig) -> None:
        """Title the thread after its first answer went out; never on the answer's path."""
        with usage_scope(check=None):  # counted for the run, never refused by a budget
            title = await self.continuity.title(turn, answer, model, self.models)
        if title:
            done = self.on_title(thread_id, title)
            if inspect.isawaitable(done):
                await done

    async def _graph(self, settings: RunSettings) -> Any:
        """The compiled graph for these settings (agent/graph_cache.py)."""
        from agent.graph import build_agent

        model = self.model_for(settings)
        thinking = settings.thinking and model.supports_thinking
        # a bootstrap run (DeerFlow's agent creation) is the lead agent with `setup_agent`
        profile = self.profile(None if settings.bootstrap else settings.agent)
        ctx = BuildContext(
            model=model,
            agent=self.config,
            settings=RunSettings(
                agent=profile.name,
                model=model.name,
                thinking=thinking,
                plan_mode=settings.plan_mode,
                bootstrap=settings.bootstrap,
            ),
            models=tuple(self.models),
            profile=profile,
            checkpointer=self._require_saver(),
        )
        saver, tools, middlewares = (self._require_saver(), self.tool_providers,
                                     self.middleware_providers)  # fmt: skip
        return await self.graphs.get(
            ctx,
            lambda c: build_agent(
                c, checkpointer=saver, tool_providers=tools, middleware_providers=middlewares
            ),
        )

    def _context(
        self, thread_id: str, turn: Turn, settings: RunSettings, memory: str = "",
        dirs: ThreadDirs | None = None,
    ) -> RunContext:  # fmt: skip
        return RunContext(
            thread_id=thread_id,
            dirs=dirs or self.thread_dirs(thread_id),
            user_id=turn.user_id,
            user_name=turn.user_name,
            chat_type=turn.chat_type,
            settings=settings,
            memory=memory,
            chat=turn.chat,
            grant=self.profile(settings.agent).narrow(turn.grant),
            observe=self.on_tool,
            approvals=turn.approvals,
            deciding=tuple(str(c) for c in (turn.resume or {}).get("calls") or ()),
        )

    def _memory_model(self) -> Any:
        model = self.resolve_model(self.config.memory.model_name)
        return create_chat_model(model, self.config, thinking=False, purpose="memory")
