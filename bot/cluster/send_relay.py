"""The Redis side of `channels.relay.SendRelay`: sends from workers without a bot's connection,
run by the worker holding it.

Keys (`<base>` is `<prefix>:relay:<channel>:<bot id>`): the queue `<base>:q` (a list: senders
RPUSH a request, the holder BLPOPs it), and per send key `<base>:claim:<key>` (who runs it, or
`abandoned`), `<base>:result:<key>` (its answer, kept `KEEP` seconds) and `<base>:answer:<key>`
(a list the sender BLPOPs). The holder claims a key with `SET NX` before running it, so a key
runs once however often it is queued; a sender that hears nothing queues the request again every
`repost` seconds (a holder killed after popping it) and after `wait` seconds claims it as
abandoned itself (`SET NX`): from then on no holder runs it and the sender fails retryable; when
a holder claimed it first, the sender takes its answer, or OutcomeUnknown when that holder died
while running it. Sends of one `order` key (a chat, a stream) run one after another, in the
order they were popped.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from bot.cluster.redis_client import done
from channels.errors import ChannelError
from channels.relay import Handler, OutcomeUnknown, Payload
from channels.tasks import cancel, cancel_all

log = logging.getLogger("bot.cluster.send_relay")
KEEP = 600  # seconds a claim and an answer stay (a retried send finds them)
ABANDONED = "abandoned"
UNKNOWN = {"relay": "unknown"}
POP_EVERY = 1.0
DRAIN = 5.0  # seconds a holder letting go waits for the sends it is running


class RedisRelay:
    def __init__(
        self,
        client: Callable[[], aioredis.Redis | None],
        base: str,
        worker: Callable[[], str],
        may_serve: Callable[[], bool],
        *,
        wait: float,
        repost: float,
    ) -> None:
        self.client, self.base, self.worker, self.may_serve = client, base, worker, may_serve
        self.wait, self.repost = wait, repost
        self.queue = f"{base}:q"
        self._task: asyncio.Task[None] | None = None
        self._handler: Handler | None = None
        self._lanes: dict[str, tuple[asyncio.Lock, int]] = {}
        self._running: set[asyncio.Task[None]] = set()
        self._mine: set[str] = set()

    def _redis(self) -> aioredis.Redis:
        client = self.client()
        if client is None:
            raise ChannelError("the send relay has no Redis connection", retryable=True)
        return client

    # ------------------------------------------------------------------ the sender

    async def call(self, send: Payload, *, key: str, order: str, idempotent: bool) -> Payload:
        request = json.dumps({"key": key, "order": order, "idempotent": idempotent, "send": send})
        answers = f"{self.base}:answer:{key}"
        loop = asyncio.get_running_loop()
        until = loop.time() + self.wait
        try:
            client = self._redis()
            while loop.time() < until:
                await done(client.rpush(self.queue, request))
                slice_ = max(min(self.repost, until - loop.time()), 0.05)
                got = await done(client.blpop([answers], timeout=slice_))
                if got:
                    return _answer(json.loads(got[1]), idempotent)
            return await self._give_up(client, key, idempotent)
        except (RedisError, OSError) as exc:
            raise ChannelError(f"send relay: Redis failed: {exc}", retryable=True) from exc

    async def _give_up(self, client: aioredis.Redis, key: str, idempotent: bool) -> Payload:
        if await client.set(f"{self.base}:claim:{key}", ABANDONED, nx=True, ex=KEEP):
            raise ChannelError(
                f"no worker took this send within {self.wait:.0f} s (the connection's lease "
                "is changing hands)",
                retryable=True,
            )
        found = await client.get(f"{self.base}:result:{key}")
        if found is None:  # a holder is running it, or died while running it
            got = await done(client.blpop([f"{self.base}:answer:{key}"], timeout=self.repost))
            found = got[1] if got else json.dumps(UNKNOWN)
        return _answer(json.loads(found), idempotent)

    # ------------------------------------------------------------------ the holder

    def serve(self, handler: Handler) -> None:
        self._handler = handler
        if self._task is None:
            self._task = asyncio.create_task(self._serve(), name=f"relay {self.base}")

    async def stop_serving(self) -> None:
        task, self._task = self._task, None
        await cancel(task)
        if self._running:
            await asyncio.wait(set(self._running), timeout=DRAIN)
        await cancel_all(self._running)

    async def _serve(self) -> None:
        while True:
            try:
                client = self._redis()
                got = await done(client.blpop([self.queue], timeout=POP_EVERY))
                if got is None:
                    continue
                if not self.may_serve():  # the lease lapsed: leave it to the next holder
                    await done(client.lpush(self.queue, got[1]))
                    await asyncio.sleep(POP_EVERY)
                    continue
            except (RedisError, OSError, ChannelError) as exc:
                log.warning("send relay %s: Redis failed: %s", self.base, exc)
                await asyncio.sleep(POP_EVERY)
                continue
            request = json.loads(got[1])
            order = str(request["order"])
            lock, count = self._lanes.get(order) or (asyncio.Lock(), 0)
            self._lanes[order] = (lock, count + 1)
            task = asyncio.create_task(self._run(client, request, lock))
            self._running.add(task)
            task.add_done_callback(self._running.discard)

    async def _run(self, client: aioredis.Redis, request: Payload, lock: asyncio.Lock) -> None:
        order, key = str(request["order"]), str(request["key"])
        try:
            async with lock:
                answer = await self._once(client, key, request)
                if answer is not None:
                    answers = f"{self.base}:answer:{key}"
                    await done(client.rpush(answers, json.dumps(answer)))
                    await done(client.expire(answers, KEEP))
        except (RedisError, OSError) as exc:
            log.warning("send relay %s: Redis failed: %s", self.base, exc)
        finally:
            lock_, count = self._lanes[order]
            if count <= 1:
                del self._lanes[order]
            else:
                self._lanes[order] = (lock_, count - 1)

    async def _once(self, client: aioredis.Redis, key: str, request: Payload) -> Payload | None:
        """Run the send unless its key ran (its answer) or runs here (None: that one answers)."""
        claim, me = f"{self.base}:claim:{key}", self.worker()
        if not await client.set(claim, me, nx=True, ex=KEEP):
            found = await client.get(f"{self.base}:result:{key}")
            if found is not None:
                return dict(json.loads(found))
            holder = await client.get(claim)
            if holder == ABANDONED or (holder == me and key in self._mine):
                return None
            if not request["idempotent"]:
                return UNKNOWN  # its runner died: it may have been posted
            await client.set(claim, me, ex=KEEP)
        self._mine.add(key)
        try:
            answer = await self._handle(request["send"])
            await client.set(f"{self.base}:result:{key}", json.dumps(answer), ex=KEEP)
        finally:
            self._mine.discard(key)
        return answer

    async def _handle(self, send: Payload) -> Payload:
        assert self._handler is not None
        try:
            return await self._handler(send)
        except Exception as exc:  # the handler answers errors itself; this is a bug's trace
            log.exception("send relay %s: the send failed", self.base)
            return {"relay": "failed", "error": f"{type(exc).__name__}: {exc}"}


def _answer(answer: Payload, idempotent: bool) -> Payload:
    if answer.get("relay") == "unknown":
        if idempotent:
            raise ChannelError("the worker running this send died; send it again", retryable=True)
        raise OutcomeUnknown(
            "the worker holding the connection died while sending this; not sent again "
            "(it may have been posted)"
        )
    if answer.get("relay") == "failed":
        raise ChannelError(f"relayed send failed: {answer.get('error')}")
    return answer
