"""``kill -9`` of the bot at random moments of a game: nothing is lost, every tap is answered."""

from __future__ import annotations

import asyncio
import random
import re

import pytest

from tests.e2e.harness import BotProcess, Table, telegram_errors
from tests.e2e.test_full_game import open_table
from tests.fakes.botapi import BotAPIEmulator

pytestmark = pytest.mark.e2e

#: A seat's row (numbered while the game runs; by place, unnumbered, once it has a result) and the
#: pile's line («Стопка пуста» when empty).
_SEAT = re.compile(r"^(?:▶ )?(?:\d+\. )?.* — (?:\d+-е место · )?(\d+) карт", re.M)
_PILE = re.compile(r"В стопке: (\d+) карт|Стопка пуста")


def board_cards(emu: BotAPIEmulator, group_id: int) -> int | None:
    """Hand sizes plus pile on the group's board, or None when no board is shown yet."""
    boards = [m for m in emu.chat_messages(group_id) if m.from_bot and m.text and _PILE.search(m.text)]
    if not boards:
        return None
    text = boards[-1].text
    return sum(int(n) for n in _SEAT.findall(text)) + int(_PILE.search(text).group(1) or 0)


@pytest.mark.parametrize("seed", [11])
async def test_kill_nine_three_times_during_a_game(redis_server, tmp_path, seed):
    rng = random.Random(seed)
    emu = BotAPIEmulator(group_window=6.0)
    await emu.start()
    bot = BotProcess(emu, redis_server.url.replace("/0", "/3"), tmp_path / "bot.log")
    bot.start()
    try:
        group, users = await open_table(emu, 4, "russian", chat_id=-1003)
        table = Table(emu, group, users, random.Random(seed))
        kills = sorted(rng.sample(range(5, 120), 3))
        while table.taps < 6000:
            if kills and table.taps >= kills[0]:
                kills.pop(0)
                bot.kill9()
                await asyncio.sleep(rng.uniform(0, 0.5))
                bot.start()
                await asyncio.sleep(1.0)
                total = board_cards(emu, group.id)
                assert total in (None, 52), total
            if not await table.step(timeout=40):
                break
        await emu.wait_for(table.finished, timeout=60)
        assert bot.starts == 4
        assert table.unanswered == []
        assert board_cards(emu, group.id) == 52
        errors = telegram_errors(emu)
        assert errors == [], errors[:3]
        assert emu.violations == []
        assert len([m for m in emu.chat_messages(group.id) if m.text and "Игра окончена" in m.text]) == 1
    finally:
        bot.stop()
        await emu.stop()
