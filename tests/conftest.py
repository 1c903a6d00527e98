"""Shared fixtures: a private redis-server (never the one at 127.0.0.1:6379), and a private
3-primary Redis Cluster of such servers."""

from __future__ import annotations

import pytest

from tests.redis_server import RedisClusterServers, RedisServer


@pytest.fixture(scope="session")
def redis_server():
    server = RedisServer()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def redis_cluster():
    cluster = RedisClusterServers(primaries=3)
    yield cluster
    cluster.stop()
