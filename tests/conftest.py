"""Shared fixtures: a private redis-server (never the one at 127.0.0.1:6379)."""

from __future__ import annotations

import pytest

from tests.redis_server import RedisServer


@pytest.fixture(scope="session")
def redis_server():
    server = RedisServer()
    yield server
    server.stop()
