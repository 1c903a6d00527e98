"""The property sweep of the classic variant (test_properties.py has the Russian one): thousands
of seeded random games, every RULES.md invariant checked after every action and the record round
trip at the end of every game. A file of its own: the longest of the core tests, so pytest-xdist
runs it beside the rest (tests/conftest.py starts it among the first)."""

from __future__ import annotations

import pytest

from tests.core.engine_helpers import SWEEP_TIMEOUT, check_sweep


@pytest.mark.timeout(SWEEP_TIMEOUT)
def test_random_games_sweep_classic():
    check_sweep("classic")
