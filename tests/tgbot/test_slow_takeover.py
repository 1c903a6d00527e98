"""A take-over longer than the lease (a slow Bot API at setMyCommands, many live games) keeps
the lease: it is renewed from the moment it is held, so a standby never takes the lease while
its holder is still taking over, and the holder's /healthz says active and Redis ok throughout."""

from __future__ import annotations

import asyncio

import pytest

from tests.fakes.botapi import BotAPIEmulator
from tests.redis_server import RedisServer
from tests.tgbot.live import Live
from tgbot.process.lease import LEASE_SECONDS
from tgbot.process.runner import Runner

pytestmark = pytest.mark.e2e


def _run(bot: Live) -> None:
    bot.runner = Runner(bot.settings)
    bot._task = asyncio.create_task(bot.runner.run())


async def test_a_take_over_longer_than_the_lease_keeps_it():
    server = RedisServer()
    emu = BotAPIEmulator()
    await emu.start()
    held_up = asyncio.Event()
    slow_calls = [LEASE_SECONDS * 0.4] * 4  # the first four setMyCommands take 8 s in all, each within PTB's timeout

    def delay(method: str, _params: dict) -> float:
        if method == "setMyCommands" and slow_calls:
            held_up.set()
            return slow_calls.pop()
        return 0.0

    emu.delay = delay
    first, second = Live(emu, server.url), Live(emu, server.url)
    try:
        _run(first)
        await asyncio.wait_for(held_up.wait(), 20)
        epoch = first.runner.lease.epoch
        _run(second)
        healths = []
        deadline = asyncio.get_running_loop().time() + 20
        while first.runner.consumer is None:  # (sampled while the take-over is held up)
            assert asyncio.get_running_loop().time() < deadline, "the take-over did not finish"
            healths.append(first.runner.health())
            await asyncio.sleep(0.2)
        assert first.runner.lease.epoch == epoch and first.runner.lease.held()
        assert second.runner.role == "standby" and second.runner.lease.epoch == 0
        assert not slow_calls  # (held up 8 s in all: longer than the lease)
        assert all(h["role"] == "active" and h["redis"] == "ok" for h in healths), healths
    finally:
        await second.stop()
        await first.stop()
        await emu.stop()
        server.stop()
