"""Fixtures for tests/tgbot: a Store over fakeredis and over the private redis-server."""

from __future__ import annotations

import asyncio

import fakeredis
import pytest
from redis.asyncio import Redis

from tgbot.owner.store import Store

REAL_DB = 7  # the e2e tests use 1 and 2 on the same private server


@pytest.fixture(params=["fake", "real"])
async def redis(request):
    if request.param == "fake":
        client = fakeredis.FakeAsyncRedis(decode_responses=True)
    else:
        server = request.getfixturevalue("redis_server")
        client = Redis.from_url(server.url.replace("/0", f"/{REAL_DB}"), decode_responses=True)
    await client.flushdb()
    yield client
    await client.flushdb()
    await client.aclose()


@pytest.fixture
def store(redis):
    return Store(redis)


class FakeSyncer:
    """Records :meth:`tgbot.sync.syncer.Syncer.request` calls; ``requested`` is set at each (a test
    clears it and waits on it instead of on the clock)."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.requested = asyncio.Event()

    def request(self, gid: str) -> None:
        self.requests.append(gid)
        self.requested.set()


@pytest.fixture
def syncer():
    return FakeSyncer()
