"""The webhook route under a flood of idle and half-open connections (issue 26, item 10): the bot,
in webhook mode with 1,024 files (``prlimit``), meets 1,100 connections that send nothing or half a
request and stay open; meanwhile Telegram's POST still opens a lobby, ``/healthz`` answers and the
log gains a few lines, not one per connection. A secret header that is not ASCII is refused with
403, without a traceback."""

from __future__ import annotations

import asyncio
import contextlib
import os

import pytest

from tests.e2e.harness import active_of, running
from tests.redis_server import RedisServer, free_port

pytestmark = pytest.mark.e2e

#: Connections the flood holds open, and the files the bot may have (the numbers reported).
FLOOD = 1100
FILES = 1024
SECRET = "s3cret-hook"


@pytest.fixture(scope="module")
def own_redis():
    server = RedisServer()
    yield server
    server.stop()


async def _hold(port: int, count: int) -> list[asyncio.StreamWriter]:
    """Open ``count`` connections to the webhook: a third send nothing, the others the start of a
    request and no more. The ones the bot takes are kept open (those refused are dropped)."""
    held: list[asyncio.StreamWriter] = []
    limit = asyncio.Semaphore(100)

    async def one(i: int) -> None:
        async with limit:
            try:
                _, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 3)
            except (OSError, TimeoutError):
                return
            if i % 3:
                writer.write(b"POST /hook HTTP/1.1\r\nHost: bot.example\r\n" if i % 3 == 1 else b"POS")
            held.append(writer)

    await asyncio.gather(*(one(i) for i in range(count)))
    return held


async def _raw_post(port: int, secret: bytes) -> int:
    """The status of a webhook POST whose secret header is the raw bytes ``secret``."""
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 5)
    body = b'{"update_id": 1}'
    writer.write(
        b"POST /hook HTTP/1.1\r\nHost: bot.example\r\nContent-Type: application/json\r\n"
        b"X-Telegram-Bot-Api-Secret-Token: " + secret + b"\r\nConnection: close\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )
    try:
        status_line = await asyncio.wait_for(reader.readline(), 10)
    finally:
        writer.close()
    return int(status_line.split()[1])


async def test_idle_connections_neither_starve_the_webhook_nor_flood_the_log(own_redis, tmp_path):
    port = free_port()
    files = ("prlimit", f"--nofile={FILES}:{FILES}", "--")
    async with running(
        own_redis,
        tmp_path,
        0,
        each=[{"wrapper": files}],
        WEBHOOK_URL="https://bot.example/hook",
        WEBHOOK_LISTEN=f"127.0.0.1:{port}",
        WEBHOOK_SECRET=SECRET,
    ) as (emu, (bot,), _url):
        emu.webhook_targets = [f"http://127.0.0.1:{port}/hook"]
        await active_of([bot])
        await emu.wait_call("setWebhook", timeout=30)
        before = bot.log().count("\n")

        held = await _hold(port, FLOOD)
        try:
            print(f"connections opened and held by the flood: {len(held)} of {FLOOD}")
            files = len(os.listdir(f"/proc/{bot.proc.pid}/fd"))  # (prlimit runs the bot in its own place)
            print(f"files the bot has open meanwhile: {files} of {FILES}")
            assert files < FILES // 2
            # Telegram's POST (a fresh connection) still gets through: a lobby opens
            user = emu.add_user(901, "Аня")
            group = emu.add_group(-4001, "Клуб", members=[user], admins=[user])
            await user.send(group, "/start_game")
            await emu.wait_message(group.id, lambda m: m.from_bot and bool(m.buttons), timeout=20)
            assert await bot.health() is not None, bot.log()[-3000:]
            # a secret header that is no ASCII: 403, not 500
            assert await _raw_post(port, "sécret".encode()) == 403
            assert await _raw_post(port, b"s\xe9cret") == 403
        finally:
            for writer in held:
                writer.close()
                with contextlib.suppress(OSError):
                    await writer.wait_closed()
        assert await bot.health() is not None
        log = bot.log()
        lines = log.splitlines()[before:]
        print(f"log lines written during the flood: {len(lines)}")
        assert "Traceback" not in log, log[-5000:]
        assert len(lines) <= 10, "\n".join(lines[:40])
