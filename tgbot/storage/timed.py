"""Redis clients that time their commands (``cheat_redis_command_duration_seconds``, failures in
``cheat_redis_errors_total``): a command as sent, a pipeline as one ``PIPELINE``; a blocking read
(``XREADGROUP … BLOCK``) is left out, its time being the wait."""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline

from tgbot import metrics

__all__ = ["TimedPipeline", "TimedRedis", "fake_client"]


class TimedPipeline(Pipeline):
    """A pipeline timed as a whole (command ``PIPELINE``)."""

    async def execute(self, raise_on_error: bool = True) -> list[Any]:
        with metrics.redis_command("PIPELINE"):
            return await super().execute(raise_on_error)


class TimedRedis(Redis):
    """redis-py's client with each command timed."""

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        if b"BLOCK" in args or "BLOCK" in args:
            return await super().execute_command(*args, **options)
        with metrics.redis_command(str(args[0]).partition(" ")[0]):  # ("XGROUP CREATE": XGROUP)
            return await super().execute_command(*args, **options)

    def pipeline(self, transaction: bool = True, shard_hint: str | None = None) -> TimedPipeline:
        return TimedPipeline(self.connection_pool, self.response_callbacks, transaction, shard_hint)


def fake_client() -> Redis:
    """The embedded store (fakeredis, ``decode_responses=True``) with its commands timed too."""
    import fakeredis

    class TimedFakeRedis(TimedRedis, fakeredis.FakeAsyncRedis):  # type: ignore[misc]  # (the two bases disagree on types only)
        """fakeredis' client with each command timed."""

    return TimedFakeRedis(decode_responses=True)
