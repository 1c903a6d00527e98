"""An older process never writes a newer stored schema (issue 27): it refuses to start (one line,
exit 2), and a standby that meets it at a take-over steps down, says why and exits 2, leaving
the lease free."""

from __future__ import annotations

import asyncio

import pytest
import redis as redis_sync

from tests.e2e.harness import BotProcess, active_of, running
from tests.redis_server import RedisServer
from tgbot.storage.keys import Keys, bot_prefix
from tgbot.storage.migrate import SCHEMA

pytestmark = pytest.mark.e2e

ADVICE = "run the newer version (or restore the backup taken before the upgrade)"
REFUSAL = f"the stored data is of schema {SCHEMA + 1}, newer than this version knows ({SCHEMA})"


async def _exit_code(bot: BotProcess, timeout: float = 30.0) -> int:
    assert bot.proc is not None
    return await asyncio.wait_for(asyncio.to_thread(bot.proc.wait), timeout)


async def test_a_newer_stored_schema_is_refused_at_start_and_at_a_take_over(tmp_path):
    server = RedisServer()
    try:
        async with running(server, tmp_path, 0, processes=2) as (emu, (first, second), url):
            active = await active_of([first, second])
            standby = second if active is first else first
            while (await standby.health() or {}).get("role") != "standby":  # (it may still be starting)
                assert standby.proc is not None and standby.proc.poll() is None, standby.log()
                await asyncio.sleep(0.1)
            # a newer version's migration, as seen by these older processes
            schema_key = Keys(bot_prefix(emu.token.partition(":")[0])).schema()
            with redis_sync.Redis.from_url(url) as client:
                client.set(schema_key, SCHEMA + 1)
            active.kill9()
            assert await _exit_code(standby) == 2, standby.log()[-3000:]
            log = standby.log()
            assert f"ERROR tgbot.process.runner: not taking over: {REFUSAL}" in log, log[-3000:]
            assert f"cheat-bot: {REFUSAL}" in log and "Traceback" not in log, log[-3000:]

            late = BotProcess(emu, url, tmp_path / "late.log")
            late.keep_data = True
            late.start()
            try:
                assert await _exit_code(late) == 2
                assert late.log().splitlines() == [f"cheat-bot: {REFUSAL}: {ADVICE}"], late.log()
            finally:
                late.stop()
    finally:
        server.stop()
