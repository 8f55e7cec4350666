"""Budgets pooled across workers in Redis: the model calls in flight against a budget, held.

A budget's spend is summed from the usage store (PostgreSQL, shared by the workers), but a call
under way on another worker is not in it until its row is written. So before each model call of
a run under a `refuse` budget, the worker asks one Lua script (atomic on Redis) to *hold* room for
the call in the budget's hash (`<prefix>:spend:<budget>:<subject>:<period start>`):

- `again` when a call against the budget was written since the worker read the store's sum
  (the sum is read again: a call's hold is released only once its row is in the store, so
  every call admitted is in the sum or held);
- `full` when the store's spend has reached the limit;
- `ok` (a hold of the size of the largest call counted against the budget this period) when the
  spend, the other calls' holds and this hold fit in the limit, or when no other call is in
  flight against it (the call goes alone);
- `wait` otherwise: the worker asks again once the calls in flight are written.

A hold is released when its call's row is in the store (`release`, which also raises the
budget's largest call), or when its run ends; a hold older than `ttl` (its worker died) is
dropped by the next script. So racing runs on any number of workers overshoot a budget by less
than one model call, as long as no call is larger than the largest before it in the period
(docs/usage.md). When Redis cannot be reached the call goes ahead on the store's sum alone
(the bound is then one call per racing run), said once in the log.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from bot.cluster.redis_client import done

log = logging.getLogger("bot.cluster.spend")
TTL = 300.0  # seconds a hold lives without its call being written (its worker died)

# KEYS[1]: the budget's hash. ARGV: limit, spent (the store's sum), hold id, ttl (s), and the
# `written` count read before that sum. Fields: `largest` (the largest call counted this
# period), `written` (calls released once in the store), `h:<hold id>` = "amount|expires".
# A call written since the sum was read makes the sum stale: `again`.
_ADMIT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local limit, spent, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[4])
local mine = 'h:' .. ARGV[3]
if (tonumber(redis.call('HGET', KEYS[1], 'written')) or 0) ~= tonumber(ARGV[5]) then
  return 'again'
end
if spent >= limit then return 'full' end
local fields = redis.call('HGETALL', KEYS[1])
local held, others, largest = 0, 0, 0
for i = 1, #fields, 2 do
  local f, v = fields[i], fields[i + 1]
  if f == 'largest' then
    largest = tonumber(v) or 0
  elseif string.sub(f, 1, 2) == 'h:' and f ~= mine then
    local sep = string.find(v, '|', 1, true)
    if tonumber(string.sub(v, sep + 1)) < now then
      redis.call('HDEL', KEYS[1], f)
    else
      held, others = held + tonumber(string.sub(v, 1, sep - 1)), others + 1
    end
  end
end
if not ((largest > 0 and spent + held + largest <= limit) or others == 0) then return 'wait' end
redis.call('HSET', KEYS[1], mine, string.format('%.17g|%.17g', largest, now + ttl))
redis.call('EXPIRE', KEYS[1], 32 * 86400)
return 'ok'
"""

# KEYS[1]: the budget's hash. ARGV: hold id, the call's amount ("" when none was counted).
_RELEASE = """
redis.call('HDEL', KEYS[1], 'h:' .. ARGV[1])
local amount = tonumber(ARGV[2])
if amount then redis.call('HINCRBY', KEYS[1], 'written', 1) end
if amount and amount > (tonumber(redis.call('HGET', KEYS[1], 'largest')) or 0) then
  redis.call('HSET', KEYS[1], 'largest', string.format('%.17g', amount))
end
return 1
"""


class SpendHolds:
    """The `Holds` of bot/usage/budgets.py on the workers' Redis."""

    def __init__(
        self, client: Callable[[], aioredis.Redis | None], prefix: str, ttl: float = TTL
    ) -> None:
        self.client = client  # the bus's connection (made when the bus opens)
        self.prefix = prefix
        self.ttl = ttl
        self.down = False

    def key(self, name: str) -> str:
        return f"{self.prefix}:spend:{name}"

    async def written(self, name: str) -> int:
        """How many calls against the budget were released once in the store: read it before
        the store's sum and give it to `admit`."""
        client = self.client()
        if client is None:
            return 0
        try:
            return int(await done(client.hget(self.key(name), "written")) or 0)
        except (RedisError, OSError) as exc:
            self._lost(exc)
            return 0

    async def admit(self, name: str, limit: float, spent: float, hold: str, written: int) -> str:
        """`ok` (held), `wait`, `full`, or `again` (a call was written since `written` was
        read: read the sum again); `ok` without a hold when Redis cannot be reached."""
        args = (repr(limit), repr(spent), hold, repr(self.ttl), str(written))
        client = self.client()
        if client is None:  # the bus is not open yet
            return "ok"
        try:
            answer = await done(client.eval(_ADMIT, 1, self.key(name), *args))
        except (RedisError, OSError) as exc:
            self._lost(exc)
            return "ok"
        self._back()
        return str(answer)

    async def release(self, name: str, hold: str, amount: float | None) -> None:
        client = self.client()
        if client is None:
            return
        try:
            given = "" if amount is None else repr(amount)
            await done(client.eval(_RELEASE, 1, self.key(name), hold, given))
        except (RedisError, OSError) as exc:
            self._lost(exc)  # the hold expires after `ttl`

    def _lost(self, exc: BaseException) -> None:
        if not self.down:
            log.warning(
                "budgets: Redis cannot be reached, calls go ahead on the store's sums: %s", exc
            )
        self.down = True

    def _back(self) -> None:
        if self.down:
            log.info("budgets: Redis answers again; calls in flight are held again")
        self.down = False
