"""Turn timers across a ``kill -9``, end to end (the rest of the timer tests are in test_timers.py;
this case, among the longest, has a file of its own so that pytest-xdist runs it beside them)."""

from __future__ import annotations

import asyncio

import pytest

from tests.e2e.harness import running, telegram_errors
from tests.e2e.test_full_game import open_table
from tests.e2e.test_restart import board_cards
from tests.e2e.test_timers import AUTO, FAST, QUICK, check_replay, stored_games, texts

pytestmark = pytest.mark.e2e


async def test_restart_with_a_deadline_pending_and_passed(redis_server, tmp_path):
    """Nobody taps: the timers play the whole game while the bot is killed twice, once for
    longer than a turn (the deadline passes while it is down), once briefly."""
    async with running(redis_server, tmp_path, 10, group_window=2.0, **{**FAST, **QUICK}) as (emu, (bot,), url):
        group, users = await open_table(emu, 3, "russian", chat_id=-1008)
        await asyncio.sleep(1.0)  # a reminder or first deadline is pending
        bot.kill9()
        await asyncio.sleep(4.5)  # the turn deadline passes while the bot is down
        bot.start()
        await emu.wait_for(lambda: len(texts(emu, group.id, AUTO)) >= 2, timeout=30)
        bot.kill9()
        await asyncio.sleep(0.3)
        bot.start()
        await emu.wait_for(lambda: texts(emu, group.id, "Игра окончена"), timeout=240)
        ((t, deal, log),) = await stored_games(url, group.id)
        check_replay(t, deal, log)
        assert all(s["player"] == "stand_in" and s["auto_moves"] == 2 for s in t["seats"])
        assert board_cards(emu, group.id) == 52
        assert 6 <= len(texts(emu, group.id, AUTO)) <= 7  # a crash may repeat the one in flight
        assert telegram_errors(emu) == [] and emu.violations == []
