"""Several workers on one Redis (`bus.backend: redis`, docs/scale-out.md).

- `redis_client`: the connection, and the start-up error naming `bus.redis.url`;
- `lease`: the one lease (set-if-absent with expiry, renewed, with a fencing token);
- `partitions`: which worker owns which partition stream of the bus;
- `stream_bus`: the bus on partitioned Redis streams with consumer groups;
- `connections`: one live platform connection per bot account;
- `control`: /stop and /status across workers;
- `shared_budgets`: platform budgets and 429 blocks wider than a conversation, shared by all.
"""
