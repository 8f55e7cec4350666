"""/stop and /status across workers.

A conversation's messages, commands included, go to the worker owning its partition, so /stop,
the busy `interrupt` and /status of one conversation act where its reply is written whichever
worker received them. What spans conversations (in a main chat: the sender's replies in all of
its threads, each possibly on another worker) goes through Redis: each worker lists the replies
it is writing in a hash per chat (`<prefix>:runs:<chat>`), and asks the worker writing one to
stop it over pub/sub (`<prefix>:control:<worker>`), which answers on a reply channel.

Gateway API runs are cancelled the same way: a cancel of a run that another worker executes is
broadcast on `<prefix>:control:runs`; every live worker answers, the one running it cancels it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from bot.cluster.redis_client import done, keep_listening
from bot.stores.journal import dump_message, load_message
from channels.base import ChatRef, InboundMessage
from channels.tasks import cancel

log = logging.getLogger("bot.cluster.control")

StopLocal = Callable[[str], Awaitable[bool]]
CancelLocal = Callable[[str], bool]
ANSWER_SECONDS = 6.0  # a stop waits up to 5 s for the run to end


@dataclass(eq=False)
class ClusterRuns:
    """The replies being written on other workers; `RunsElsewhere` of bot/lanes.py."""

    client: Callable[[], aioredis.Redis | None]
    prefix: str
    worker: Callable[[], str]
    stop_local: StopLocal
    cancel_local: CancelLocal = field(default=lambda run_id: False, init=False)  # the Gateway's
    _listener: asyncio.Task[None] | None = field(default=None, init=False)

    def _runs_key(self, chat: ChatRef) -> str:
        return f"{self.prefix}:runs:{chat.with_topic(None).key}"

    # ---------------------------------------------------------------- this worker's runs

    async def started(self, msg: InboundMessage) -> None:
        entry = json.dumps({"worker": self.worker(), "msg": dump_message(msg)})
        await self._quietly(lambda c: done(c.hset(self._runs_key(msg.chat), msg.chat.key, entry)))

    async def ended(self, msg: InboundMessage) -> None:
        await self._quietly(lambda c: done(c.hdel(self._runs_key(msg.chat), msg.chat.key)))

    # ---------------------------------------------------------------- other workers' runs

    async def in_chat(self, chat: ChatRef, sender_id: str) -> list[InboundMessage]:
        """The sender's replies being written in `chat` (any thread) on other live workers."""
        client = self.client()
        if client is None:
            return []
        try:
            found = await done(client.hgetall(self._runs_key(chat)))
            live = await self._live(client)
        except (RedisError, OSError) as exc:
            log.warning("control: cannot read other workers' runs: %s", exc)
            return []
        runs = []
        for value in found.values():
            entry = json.loads(value)
            msg = load_message(entry["msg"])
            if (
                entry["worker"] != self.worker()
                and entry["worker"] in live
                and msg.sender.id == sender_id
            ):
                runs.append(msg)
        return runs

    async def stop(self, chat: ChatRef) -> bool:
        """Ask the worker writing the reply in conversation `chat` to stop it."""
        client = self.client()
        if client is None:
            return False
        try:
            value = await done(client.hget(self._runs_key(chat), chat.key))
            if value is None or (worker := json.loads(value)["worker"]) == self.worker():
                return False
            return await self._ask(client, worker, chat.key)
        except (RedisError, OSError) as exc:
            log.warning("control: stop of %s not delivered: %s", chat.key, exc)
            return False

    async def _ask(self, client: aioredis.Redis, worker: str, key: str) -> bool:
        channel = f"{self.prefix}:control:{worker}"
        return await self._request(client, channel, {"stop": key}, "stopped")

    # ---------------------------------------------------------------- Gateway API runs

    def answer_with(self, cancel_local: CancelLocal) -> None:
        """Cancel requests for API runs are answered by `cancel_local(run_id)` (the Gateway's)."""
        self.cancel_local = cancel_local

    async def cancel_elsewhere(self, run_id: str) -> bool:
        """Ask the live worker running API run `run_id` to cancel it (False: none runs it)."""
        client = self.client()
        if client is None:
            return False
        try:
            channel = f"{self.prefix}:control:runs"
            return await self._request(client, channel, {"cancel_run": run_id}, "cancelled")
        except (RedisError, OSError) as exc:
            log.warning("control: cancel of run %s not delivered: %s", run_id, exc)
            return False

    async def _request(
        self, client: aioredis.Redis, channel: str, request: dict[str, str], answer: str
    ) -> bool:
        """Publish `request` on `channel`; True once a listener answers `answer`, False when
        every listener answered otherwise, none listens (the worker is gone) or time ran out."""
        reply = f"{self.prefix}:control:reply:{uuid.uuid4().hex}"
        pubsub = client.pubsub()
        await pubsub.subscribe(reply)
        try:
            listeners = await client.publish(channel, json.dumps({**request, "reply": reply}))
            deadline = time.monotonic() + ANSWER_SECONDS
            while listeners > 0 and (left := deadline - time.monotonic()) > 0:
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=left)
                if message is None:
                    continue
                if json.loads(message["data"]).get(answer):
                    return True
                listeners -= 1
            return False
        finally:
            await pubsub.aclose()

    # ---------------------------------------------------------------- answering requests

    def listen(self) -> None:
        self._listener = asyncio.create_task(
            keep_listening(self.client, self._serve, "control"), name="cluster-control"
        )

    async def close(self) -> None:
        await cancel(self._listener)

    async def _serve(self, client: aioredis.Redis) -> None:
        pubsub = client.pubsub()
        await pubsub.subscribe(
            f"{self.prefix}:control:{self.worker()}", f"{self.prefix}:control:runs"
        )
        try:
            async for message in pubsub.listen():
                if message.get("type") != "message":
                    continue
                request = json.loads(message["data"])
                if "cancel_run" in request:
                    answer = {"cancelled": self.cancel_local(request["cancel_run"])}
                else:
                    answer = {"stopped": await self.stop_local(request["stop"])}
                await client.publish(request["reply"], json.dumps(answer))
        finally:
            with contextlib.suppress(RedisError, OSError):
                await pubsub.aclose()

    async def _live(self, client: aioredis.Redis) -> set[str]:
        workers = await client.zrangebyscore(f"{self.prefix}:workers", time.time(), "+inf")
        return set(workers)

    async def _quietly(self, op: Callable[[aioredis.Redis], Awaitable[object]]) -> None:
        client = self.client()
        if client is None:
            return
        try:
            await op(client)
        except (RedisError, OSError) as exc:
            log.warning("control: run registry not updated: %s", exc)
