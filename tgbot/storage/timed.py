"""Redis clients that time their commands (``cheat_redis_command_duration_seconds``, failures in
``cheat_redis_errors_total``): a command as sent, a pipeline as one ``PIPELINE``; a blocking read
(``XREADGROUP … BLOCK``) is left out, its time being the wait. One Redis (or fakeredis) and a
Redis Cluster alike (a Cluster command's time includes its redirections and retries)."""

from __future__ import annotations

import contextlib
from contextlib import AbstractContextManager
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.asyncio.cluster import ClusterPipeline, RedisCluster

from tgbot import metrics

__all__ = ["TimedClusterPipeline", "TimedPipeline", "TimedRedis", "TimedRedisCluster", "fake_client"]


def _timed(args: tuple[Any, ...]) -> AbstractContextManager[None]:
    """The timing of the command ``args`` (nothing for a blocking read)."""
    if b"BLOCK" in args or "BLOCK" in args:
        return contextlib.nullcontext()
    return metrics.redis_command(str(args[0]).partition(" ")[0])  # ("XGROUP CREATE": XGROUP)


class TimedPipeline(Pipeline):
    """A pipeline timed as a whole (command ``PIPELINE``)."""

    async def execute(self, raise_on_error: bool = True) -> list[Any]:
        with metrics.redis_command("PIPELINE"):
            return await super().execute(raise_on_error)


class TimedRedis(Redis):
    """redis-py's client with each command timed."""

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        with _timed(args):
            return await super().execute_command(*args, **options)

    def pipeline(self, transaction: bool = True, shard_hint: str | None = None) -> TimedPipeline:
        return TimedPipeline(self.connection_pool, self.response_callbacks, transaction, shard_hint)


class TimedClusterPipeline(ClusterPipeline):
    """A Cluster pipeline timed as a whole (command ``PIPELINE``)."""

    async def execute(self, raise_on_error: bool = True, allow_redirections: bool = True) -> list[Any]:
        with metrics.redis_command("PIPELINE"):
            return await super().execute(raise_on_error, allow_redirections)


class TimedRedisCluster(RedisCluster):
    """redis-py's Cluster client with each command timed."""

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        with _timed(args):
            return await super().execute_command(*args, **kwargs)

    def pipeline(self, transaction: Any | None = None, shard_hint: Any | None = None) -> ClusterPipeline:
        if shard_hint:
            return super().pipeline(transaction, shard_hint)  # (refused there)
        return TimedClusterPipeline(self, transaction)  # type: ignore[abstract]  # (as redis-py makes its own)


def fake_client() -> Redis:
    """The embedded store (fakeredis, ``decode_responses=True``) with its commands timed too."""
    import fakeredis

    class TimedFakeRedis(TimedRedis, fakeredis.FakeAsyncRedis):  # type: ignore[misc]  # (the two bases disagree on types only)
        """fakeredis' client with each command timed."""

    return TimedFakeRedis(decode_responses=True)
