"""Issue 25 against the bot's real Application (in-process, :mod:`tests.tgbot.live`), the Bot API
emulator and a private redis-server: a reply of Redis lost after the ingest script ran (through a
proxy that drops it), poison updates, and Telegram restarting its update ids lower."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

import pytest
from telegram.ext import MessageHandler, filters

from tests.tgbot.live import cb, running
from tgbot.ingest import consumer as consumer_module
from tgbot.ingest.stream import RECENT_UPDATES

pytestmark = pytest.mark.e2e

DB = 4


class ReplyDropper:
    """A TCP proxy in front of redis-server. Once :meth:`arm` ed, it forwards the next call of the
    script whose SHA is ``sha`` to Redis, and when Redis's reply comes, closes the client's
    connection instead of forwarding it: the script ran, its reply is lost (redis-py then sends it
    again on a new connection, which passes)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sha = b""
        self.dropped = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._pumps: set[asyncio.Task] = set()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"redis://127.0.0.1:{self._server.sockets[0].getsockname()[1]}/{DB}"

    def arm(self, sha: str) -> None:
        self.sha = sha.encode()

    async def start(self) -> ReplyDropper:
        self._server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        return self

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for pump in list(self._pumps):
            pump.cancel()
        await asyncio.gather(*self._pumps, return_exceptions=True)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._pumps.add(task)
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.port)
        dropping = False

        async def to_redis() -> None:
            nonlocal dropping
            while data := await reader.read(1 << 16):
                if self.sha and b"EVALSHA" in data.upper() and self.sha in data:
                    self.sha, dropping = b"", True
                up_writer.write(data)
                await up_writer.drain()

        async def to_client() -> None:
            nonlocal dropping
            while data := await up_reader.read(1 << 16):
                if dropping and not data.startswith(b"-"):  # (an error reply: the script did not run)
                    self.dropped.set()
                    writer.transport.abort()
                    return
                writer.write(data)
                await writer.drain()

        try:
            pumps = [asyncio.create_task(to_redis()), asyncio.create_task(to_client())]
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            for pump in pumps:
                pump.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)
        finally:
            up_writer.close()
            writer.close()
            self._pumps.discard(task)


@contextlib.asynccontextmanager
async def _bot(redis_server, *, through_proxy: bool = False):
    """A :func:`running` bot on database :data:`DB`, with its Redis behind a :class:`ReplyDropper`
    when ``through_proxy`` (``bot.proxy``)."""
    proxy = await ReplyDropper(redis_server.port).start() if through_proxy else None
    try:
        async with running(proxy.url if proxy else redis_server.url.replace("/0", f"/{DB}")) as bot:
            bot.proxy = proxy
            yield bot
    finally:
        if proxy is not None:
            await proxy.stop()


async def test_a_lost_reply_of_the_ingest_script_loses_no_tap(redis_server, monkeypatch):
    """The ingest script ran, its reply was lost, redis-py sent it again: the tap is still answered
    now, by the resend's reply (a sweep of entries left pending would come only later: kept out)."""
    monkeypatch.setattr(consumer_module, "STALE_AFTER", 3600.0, raising=False)
    async with _bot(redis_server, through_proxy=True) as live:
        emu = live.emu
        a, b = emu.add_user(801, "Аня"), emu.add_user(802, "Борис")
        group = emu.add_group(-4001, "Клуб", members=[a, b], admins=[a])
        for user in (a, b):
            await user.start_bot(answered=True)
        await a.send(group, "/start_game")
        lobby = await emu.wait_message(group.id, lambda m: cb(m, "j:"), timeout=20)
        await live.settle()
        live.proxy.arm(live.runner.ingest._ingest.sha)
        tap = await b.tap(lobby, cb(lobby, "j:")[0])
        await tap.answer(15)
        assert live.proxy.dropped.is_set()  # the reply really was lost
        await live.settle()
        table = await live.store.load(cb(lobby, "j:")[0]["callback_data"][2:])
        assert [seat.user_id for seat in table.seats] == [a.id, b.id]


class _HandlerBugError(Exception):
    """What the test's own handler raises (a bug in a handler)."""


async def _boom(update: object, context: object) -> None:
    raise _HandlerBugError("a handler's bug")


def _poison(kind: str, user: dict, chat: dict) -> tuple[str, dict]:
    """A poison update's kind and body."""
    message = {"message_id": 9000, "date": int(time.time()), "chat": chat, "from": user}
    match kind:
        case "unparsable":  # a self-hosted Bot API older than PTB expects: a chat without its type
            return "message", {**message, "chat": {"id": chat["id"]}, "text": "/help"}
        case "from_not_an_object":  # a tap on an inline message: no chat to order it by either
            return "callback_query", {
                "id": "77",
                "from": user["id"],
                "chat_instance": "1",
                "inline_message_id": "x",
                "data": "j:x",
            }
        case "handler_bug":
            return "message", {**message, "text": "/boom"}
        case _:  # a lone surrogate: no valid Unicode, Redis stores none of it
            return "message", {**message, "text": "/help \ud800"}


@pytest.mark.parametrize("kind", ["unparsable", "from_not_an_object", "handler_bug", "lone_surrogate"])
async def test_a_poison_update_is_set_aside_once_and_its_chat_goes_on(redis_server, kind, caplog):
    caplog.set_level(logging.INFO)
    async with _bot(redis_server) as live:
        emu, runner = live.emu, live.runner
        runner.app.add_handler(MessageHandler(filters.Regex(r"^/boom"), _boom), group=-1)
        user = emu.add_user(811, "Вера")
        await user.start_bot(answered=True)
        before = runner.health().get("dead_letters", 0)
        since = emu.last_message(user.id).message_id
        update_id = emu.inject(*_poison(kind, user.to_dict(), {"id": user.id, "type": "private"}))
        await user.send(user.chat, "/help")  # the same chat goes on at once
        await emu.wait_message(user.id, since=since, timeout=20)
        await live.settle()
        (_, dead), *more = await runner.redis.xrange(runner.ingest.keys.dead_letters)
        assert not more and dead["update_id"] == str(update_id) and dead["error"]
        assert runner.health()["dead_letters"] == before + 1
        assert await runner.redis.xlen(runner.ingest.stream) == 0  # acknowledged
        told = [r for r in caplog.records if r.levelno >= logging.ERROR and f"update {update_id} " in r.getMessage()]
        assert len(told) == 1 and dead["error"].partition(": ")[2][:20] in told[0].getMessage()
        assert runner.role == "active" and not [r for r in caplog.records if "stopped" in r.getMessage()]


async def test_update_ids_restarted_lower_lose_no_update_and_apply_a_second_delivery_once(redis_server):
    """Telegram restarts its update ids lower after a quiet week. Ids stored lately fill the
    de-duplication set (the last hour's :data:`RECENT_UPDATES`); the next update has a lower id:
    it is processed, and its second delivery is not."""
    async with _bot(redis_server) as live:
        emu, runner = live.emu, live.runner
        user = emu.add_user(821, "Глеб")
        emu.reset_update_ids(2_000_000)
        await user.start_bot(answered=True)
        now_ms = int(time.time() * 1000)
        await runner.redis.zadd(
            runner.store.keys.ingest()[1],  # the recent ids
            {str(1_000_000 + i): now_ms - 3_600_000 + i for i in range(RECENT_UPDATES)},
        )
        emu.reset_update_ids(40)
        since = emu.last_message(user.id).message_id
        update_id = await user.send(user.chat, "/help")
        assert update_id == 40
        helped = (await emu.wait_message(user.id, since=since, timeout=20)).text
        await live.settle()
        emu.redeliver(update_id)
        await user.send(user.chat, "/rules")  # after the second delivery, in the same chat
        await emu.wait_message(user.id, lambda m: m.text != helped, since=since, timeout=20)
        await live.settle()
        assert [m.text for m in emu.chat_messages(user.id, from_bot=True)].count(helped) == 1


async def test_update_ids_restarted_on_ids_seen_a_week_ago_are_new_updates(redis_server):
    """After the quiet week the restarted ids may be ones the bot stored then: new updates."""
    async with _bot(redis_server) as live:
        emu, runner = live.emu, live.runner
        user = emu.add_user(831, "Даша")
        first = await user.start_bot(answered=True)
        await live.settle()
        week_ago_ms = int(time.time() * 1000) - 8 * 24 * 3600 * 1000
        recent = runner.store.keys.ingest()[1]
        # the quiet week: what was stored then arrived a week ago (Redis's clock cannot be moved)
        await runner.redis.zadd(recent, {member: week_ago_ms for member in await runner.redis.zrange(recent, 0, -1)})
        emu.reset_update_ids(first)
        since = emu.last_message(user.id).message_id
        assert await user.send(user.chat, "/help") == first
        await emu.wait_message(user.id, since=since, timeout=20)
