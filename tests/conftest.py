"""Shared fixtures: a private redis-server (never the one at 127.0.0.1:6379), and a private
3-primary Redis Cluster of such servers; and the order the files run in (:data:`LONGEST_FIRST`)."""

from __future__ import annotations

import pytest

from tests.redis_server import RedisClusterServers, RedisServer

#: The test files that take longest, longest first (seconds on 2 cores with 4 workers, the
#: second figure under the load of a second suite beside it). pytest-xdist hands the files out in
#: collection order (``--no-loadscope-reorder`` in pyproject.toml), two to each worker at first,
#: then one whenever a worker is almost done: these start first, so none of them begins late and
#: finishes after everything else. tests/test_longest_first.py checks that each names a test file.
LONGEST_FIRST = (
    "tests/e2e/test_scale_out.py",  # 150-300 s
    "tests/e2e/test_takeover.py",
    "tests/core/test_properties_classic.py",  # 45-240 s
    "tests/core/test_properties.py",
    "tests/playground/test_page.py",
    "tests/e2e/test_restart.py",  # 40-78 s
    "tests/e2e/test_crash_loop.py",  # 40-76 s
    "tests/e2e/test_timers_restart.py",  # 35-69 s
    "tests/core/test_ai_search.py",  # 18-135 s
    "tests/e2e/test_backlog.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The files of :data:`LONGEST_FIRST` first, in its order; the rest after them as collected
    (the tests of one file keep their order)."""
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


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
