"""A crash loop (issue 25): the active one of two processes is ``kill -9``ed again and again, each
time before a group's window (scaled down to 30 s here) could have emptied. Every take-over knows
each group's real window from Redis (when the bot's last messages there went out), so its first
group message goes out as soon as that window allows: a new lobby gets its answer after every
take-over, the game goes on in its group and finishes, and Telegram never answers 429."""

from __future__ import annotations

import asyncio
import random

import pytest

from tests.e2e.harness import Table, active_of, running, telegram_errors
from tests.e2e.test_full_game import open_table
from tests.e2e.test_takeover import kill_active
from tests.fakes.botapi import BotAPIEmulator, SimChat, SimUser
from tests.redis_server import RedisServer

pytestmark = pytest.mark.e2e

#: The emulator's group window (s): longer than a take-over plus the time between two kills, so
#: a process that waited for the previous holder's messages to leave it would never post.
GROUP_WINDOW = 30.0


@pytest.fixture(scope="module")
def own_redis():
    server = RedisServer()
    yield server
    server.stop()


async def lobby_answered(emu: BotAPIEmulator, user: SimUser, group: SimChat, timeout: float) -> bool:
    """``user`` opens a lobby in ``group`` (no game there yet): whether its lobby shows within ``timeout`` s."""
    await user.send(group, "/start_game")
    try:
        await emu.wait_message(
            group.id,
            lambda m: m.from_bot and any("j:" in b.get("callback_data", "") for b in m.flat_buttons),
            timeout=timeout,
        )
    except TimeoutError:
        return False
    return True


async def test_a_crash_loop_neither_silences_the_groups_nor_meets_a_429(own_redis, tmp_path):
    rng = random.Random(25)
    async with running(own_redis, tmp_path, 0, group_window=GROUP_WINDOW, processes=2, TURN_TIMEOUT="300") as (
        emu,
        bots,
        _,
    ):
        await active_of(bots)
        group, users = await open_table(emu, 4, "russian", chat_id=-1025)
        table = Table(emu, group, users, random.Random(25))
        lobbies: list[bool] = []
        playing = asyncio.Event()
        playing.set()

        async def crash_loop() -> None:
            for kill in range(2):
                # the players keep the group busy meanwhile (its window full: the boards wait)
                played = table.taps + rng.randint(60, 90)
                await emu.wait_for(lambda: table.taps >= played or table.finished(), timeout=120)
                if table.finished():
                    return
                await kill_active(bots, rng, playing.clear)
                playing.set()
                lobby = emu.add_group(-2500 - kill, f"Клуб {kill}", members=users[:1], admins=users[:1])
                lobbies.append(await lobby_answered(emu, users[0], lobby, timeout=10.0))

        killing = asyncio.create_task(crash_loop())
        try:
            while table.taps < 3000:
                await playing.wait()
                if not await table.step(timeout=40):
                    break
            await emu.wait_for(table.finished, timeout=60)
            await asyncio.wait_for(killing, 60)
        finally:
            killing.cancel()
        assert lobbies == [True] * len(lobbies) and lobbies, lobbies
        assert table.unanswered == []
        too_many = [e for e in emu.errors if e["error_code"] == 429]
        assert too_many == [], too_many[:3]
        assert telegram_errors(emu) == []
        results = [m for m in emu.chat_messages(group.id) if m.from_bot and m.text and "Игра окончена" in m.text]
        assert len(results) == 1
