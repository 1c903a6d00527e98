"""Turn timers with two processes on one Redis, end to end (the rest of the timer tests are in
test_timers.py; this case, among the longest, has a file of its own so that pytest-xdist runs it
beside them)."""

from __future__ import annotations

import pytest

from tests.e2e.harness import running
from tests.e2e.test_full_game import open_table
from tests.e2e.test_timers import FAST, QUICK, check_replay, idle_log_count, stored_games, texts

pytestmark = pytest.mark.e2e


async def test_two_processes_fire_each_timer_once(redis_server, tmp_path):
    """Two processes on one Redis (one active, one standing by); nobody taps: every timer fires
    once, in the active process."""
    async with running(
        redis_server, tmp_path, 9, group_window=2.0, processes=2, **{**FAST, **QUICK, "TURN_TIMEOUT": "1.5"}
    ) as (emu, bots, url):
        group, users = await open_table(emu, 3, "russian", chat_id=-1009)
        await emu.wait_for(lambda: texts(emu, group.id, "Игра окончена"), timeout=240)
        ((t, deal, log),) = await stored_games(url, group.id)
        check_replay(t, deal, log)
        assert idle_log_count(bots, "auto") == 6  # 3 seats × 2 automatic moves, each once
        assert idle_log_count(bots, "reminded") == 6
        assert idle_log_count(bots, "ai") == len(log) - 6
        assert [bool(b.log().count("fired:")) for b in bots].count(True) == 1, "only the active process fires timers"
