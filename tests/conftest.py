"""Shared fixtures: a private redis-server (never the one at 127.0.0.1:6379), and a private
3-primary Redis Cluster of such servers; and the order the files run in (:data:`LONGEST_FIRST`)."""

from __future__ import annotations

import pytest

from tests.redis_server import RedisClusterServers, RedisServer

#: The test files that take longest, longest first (seconds, measured on the 2 cores shared with
#: other runs: at a load of 2 to 6, then beside other suites at a load of up to 14). pytest-xdist
#: hands the files out in collection order (``--no-loadscope-reorder`` in pyproject.toml), the
#: next file to a worker whenever it has two tests or fewer left: these start first, so none of
#: them begins late and finishes after everything else. tests/test_longest_first.py checks that
#: each names a test file. Not here: tests/e2e/test_crash_loop.py, whose take-overs met a 429 about
#: one full run in six when it ran beside the two CPU-bound property sweeps (a fault to fix, not a
#: reason to start it there).
LONGEST_FIRST = (
    "tests/e2e/test_scale_out.py",  # 90-300
    "tests/e2e/test_takeover.py",  # 158
    "tests/core/test_properties_classic.py",  # 45-314
    "tests/core/test_properties.py",  # 47-305
    "tests/e2e/test_restart.py",  # up to 78
    "tests/e2e/test_timers.py",  # 95 (three cases)
    "tests/e2e/test_timers_restart.py",  # 81
    "tests/e2e/test_timers_two_processes.py",  # 70
    "tests/playground/test_page.py",  # 51
    "tests/core/test_ai_search.py",  # 18-161
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
