"""A lone process whose lease renewals come late (issue 25: under heavy CPU load a starved event
loop, or a slow Redis, held them past the lease's validity) takes its lease back, unchanged,
instead of stepping down: nobody else took it, so it keeps its consumer, its epoch and its games."""

from __future__ import annotations

import asyncio

import pytest

from tests.fakes.botapi import BotAPIEmulator
from tests.redis_server import RedisServer
from tests.tgbot.live import Live, cb
from tgbot.process.lease import LEASE_SECONDS, MARGIN

pytestmark = pytest.mark.e2e

#: Seconds every lease round trip is held up: past the lease's validity and the lease itself.
STALL = LEASE_SECONDS + MARGIN + 1.5


async def until(condition, timeout: float) -> None:
    """Wait until ``condition()`` holds (checked every 50 ms), failing after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)


async def test_a_lone_process_takes_its_lease_back_after_late_renewals():
    server = RedisServer()
    emu = BotAPIEmulator(group_window=2.0)
    await emu.start()
    bot = Live(emu, server.url)
    try:
        await bot.start()
        runner = bot.runner
        lease, consumer, epoch = runner.lease, runner.consumer, runner.lease.epoch
        stalled = asyncio.Event()
        original = lease._acquire

        async def held_up(**arguments):
            await stalled.wait()  # every renewal started meanwhile waits: the loop or Redis is slow
            return await original(**arguments)

        lease._acquire = held_up
        asyncio.get_running_loop().call_later(STALL, stalled.set)
        await until(lambda: not lease.held(), STALL)  # (its validity ran out during the stall)
        await until(lambda: stalled.is_set() and (lease.held() or runner.consumer is not consumer), STALL + 10)
        assert runner.consumer is consumer and runner.role == "active", "the process stepped down"
        assert lease.epoch == epoch
        user = emu.add_user(2600, "Аня")
        group = emu.add_group(-2600, "Клуб", members=[user], admins=[user])
        await user.send(group, "/start_game")
        await emu.wait_message(group.id, lambda m: cb(m, "j:"), timeout=20)  # (its games go on)
    finally:
        await bot.stop()
        await emu.stop()
        server.stop()
