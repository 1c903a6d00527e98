"""Redis misbehaving and clocks that lie (issue 14): a stall longer than redis-py's timeout loses
no tap, and a standby whose clock runs 20 s ahead fires nothing early once it takes over."""

from __future__ import annotations

import asyncio
import random
import shutil

import pytest

from tests.e2e.harness import Table, active_of, debug_redis, game_id, game_log, replay_of, running, turn_of  # noqa: F401 (fixture)
from tests.e2e.test_full_game import open_table
from tests.tgbot.live import cb
from tgbot.codec import decode

pytestmark = pytest.mark.e2e


async def test_a_redis_stall_longer_than_the_timeout_loses_no_tap(debug_redis, tmp_path):  # noqa: F811
    async with running(debug_redis, tmp_path, 1, TURN_TIMEOUT="120") as (emu, (bot,), url):
        group, users = await open_table(emu, 3, "russian", chat_id=-1004)
        gid = game_id(emu, group.id)
        table = Table(emu, group, users, random.Random(5))
        for _ in range(4):
            assert await table.step(timeout=40)
        # The current player picks a card, then Redis stalls for 7 s (more than redis-py's 5 s
        # socket timeout) and the player plays during the stall.
        before = len(game_log(url, emu.token, gid))
        player, panel = await _current_panel(table, url, gid)
        await table.tap(player, panel, cb(panel, "k:")[0])
        panel = await emu.wait_for(lambda: (p := table.panel(player)) and cb(p, "p:") and p, timeout=20)
        stall = asyncio.create_task(asyncio.to_thread(debug_redis.cli, "DEBUG", "SLEEP", "7"))
        await asyncio.sleep(0.3)  # (the stall has begun: DEBUG SLEEP answers only at its end)
        answer = await table.tap(player, panel, cb(panel, "p:")[0], timeout=40)
        await stall
        assert answer is not None, bot.log()[-3000:]
        log = game_log(url, emu.token, gid)
        played = [a for a in log[before:] if "play" in a]
        assert len(played) == 1, (log[before:], answer)  # applied once, after Redis answered
        while await table.step(timeout=40):
            pass
        await emu.wait_for(table.finished, timeout=60)
        assert table.unanswered == []
        summary = replay_of(url, emu.token, gid)
        assert summary["status"] == "finished", summary
        assert "Traceback" not in bot.log(), bot.log()[-3000:]


async def _current_panel(table: Table, url: str, gid: str):
    """The player on turn (as stored) and their panel, once it offers this turn's card picks (a
    panel of the player before may still show its old ones for a private chat's window)."""

    def found():
        user_id, action_count = turn_of(url, table.emu.token, gid)
        for user, message, buttons in table.actionable():
            picks = [decode(b["callback_data"]) for b in buttons if b["callback_data"].startswith("k:")]
            if user.id == user_id and picks and picks[0].action_count == action_count:
                return user, message
        return None

    return await table.emu.wait_for(found, timeout=20)


@pytest.mark.skipif(shutil.which("faketime") is None, reason="Debian's faketime is not installed (.ci/run installs it)")
async def test_a_standby_whose_clock_runs_ahead_fires_nothing_early(redis_server, tmp_path):
    turn = 16.0
    each = [{}, {"wrapper": ("faketime", "-f", "+20s")}]  # the second process's clock runs 20 s ahead
    async with running(redis_server, tmp_path, 11, processes=2, started=1, each=each, TURN_TIMEOUT=str(turn)) as (
        emu,
        (first, ahead),
        url,
    ):
        assert await active_of([first]) is first
        ahead.start()
        group, users = await open_table(emu, 3, "russian", chat_id=-1005)
        table = Table(emu, group, users, random.Random(3))
        assert await table.step(timeout=40)
        # Somebody's turn begins; nobody taps. The active process dies and the standby, whose
        # clock runs 20 s ahead, takes over and must wait for the turn's real end.
        player, _panel = await _current_panel(table, url, game_id(emu, group.id))
        # when the emulator received the panel of this turn (its clock, not the test's view of it)
        turn_began = max(c["time"] for c in emu.calls if c["method"] == "sendMessage" and c["chat_id"] == player.id)
        last = max(m.message_id for m in emu.chat_messages(group.id))
        first.kill9()
        assert await active_of([ahead], timeout=30) is ahead
        auto = await emu.wait_message(
            group.id, lambda m: m.message_id > last and m.text and player.first_name in m.text, timeout=60
        )
        sent = min(
            c["time"]
            for c in emu.calls
            if c["method"] == "sendMessage"
            and c["chat_id"] == group.id
            and c["ok"]
            and (c["result"] or {}).get("message_id") == auto.message_id
        )
        waited = sent - turn_began
        print(f"turn of {turn:.0f} s: the automatic move came after {waited:.1f} s")
        assert waited >= turn - 1.0, (waited, ahead.log()[-3000:])
