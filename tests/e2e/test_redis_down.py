"""Redis frozen, then killed, under a running bot (issue 27): /healthz stays 200 and says
``redis: down``, /readyz answers 503 once Redis has not answered for longer than the lease, the
log says it once when the trouble starts and once when it ends, with no traceback per retry."""

from __future__ import annotations

import asyncio
import signal

import aiohttp
import pytest

from tests.e2e.harness import active_of, running
from tests.redis_server import RedisServer

pytestmark = pytest.mark.e2e

TROUBLE = "WARNING tgbot.process.watch: Redis does not answer"
BACK = "INFO tgbot.process.watch: Redis answers again"


async def _probe(port: int) -> tuple[int, dict, int]:
    """/healthz's status and body, /readyz's status."""
    timeout = aiohttp.ClientTimeout(total=2)
    async with aiohttp.ClientSession(timeout=timeout) as http:
        async with http.get(f"http://127.0.0.1:{port}/healthz") as health:
            body = await health.json()
        async with http.get(f"http://127.0.0.1:{port}/readyz") as ready:
            return health.status, body, ready.status


async def _until(check, what: str, timeout: float = 30.0):
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        got = await check()
        if got:
            return got
        await asyncio.sleep(0.2)
    raise AssertionError(what)


async def test_redis_frozen_then_killed_is_told_once_and_by_readyz(tmp_path):
    server = RedisServer()
    try:
        async with running(server, tmp_path, 0) as (_emu, (bot,), _url):
            assert await active_of([bot]) is bot
            assert await _probe(bot.http_port) == (200, await bot.health(), 200)
            assert (await bot.health())["redis"] == "ok"

            async def down():
                status, body, ready = await _probe(bot.http_port)
                return ready == 503 and status == 200 and body["redis"] == "down" and body["role"] == "standby"

            async def up():
                status, body, ready = await _probe(bot.http_port)
                return ready == 200 and body["redis"] == "ok" and body["role"] == "active"

            server.proc.send_signal(signal.SIGSTOP)  # frozen: connections open, no answer
            try:
                await _until(down, "/readyz did not say 503 while Redis was frozen")
            finally:
                server.proc.send_signal(signal.SIGCONT)
            await _until(up, "the bot did not come back once Redis answered")
            log = bot.log()
            assert log.count(TROUBLE) == 1 and log.count(BACK) == 1, log[-3000:]

            server.proc.kill()  # gone: every connection refused
            server.proc.wait(10)
            await _until(down, "/readyz did not say 503 once Redis was killed")
            await asyncio.sleep(3)  # (three more renewals fail meanwhile: none of them logged)
            log = bot.log()
            assert log.count(TROUBLE) == 2 and log.count(BACK) == 1, log[-3000:]
            assert log.count("Traceback") <= 1, log[-5000:]  # at most the consumer's, as it stops
    finally:
        server.stop()
