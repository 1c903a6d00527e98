"""The search player alone at a table plays legal moves only (test_ai.py has the other strategies;
this one is the slowest, so it has a file of its own that pytest-xdist runs beside the rest)."""

from __future__ import annotations

import pytest

from core.ai import STRATEGIES
from tests.core.test_ai import play_alone


#: About 18 s of CPU, 161 s on a machine loaded 7 times over: more than the suite's 300 s limit
#: (pyproject.toml) so that only a hang stops it.
@pytest.mark.timeout(600)
def test_search_alone_is_legal():
    assert "search" in STRATEGIES
    play_alone("search")
