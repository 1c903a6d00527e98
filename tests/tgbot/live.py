"""The bot's Application run in-process (long polling) against the Bot API emulator.

Faster than :class:`tests.e2e.harness.BotProcess` (no interpreter start-up) and the test can
read the store directly. :class:`Live` starts/stops the bot (to queue updates while it is
down) and drives simulated players through their private panels.
"""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from tests.fakes.botapi import BotAPIEmulator, MessageRecord, SimChat, SimUser
from tgbot.owner.store import Store
from tgbot.process.runner import Runner
from tgbot.settings import Settings
from tgbot.storage.redis import connect


def cb(msg: MessageRecord | None, prefix: str) -> list[dict]:
    """The callback buttons of ``msg`` whose data starts with ``prefix``."""
    if msg is None:
        return []
    return [b for b in msg.flat_buttons if b.get("callback_data", "").startswith(prefix)]


class Live:
    """One bot Application on ``redis_url`` talking to ``emu``."""

    def __init__(self, emu: BotAPIEmulator, redis_url: str, **settings: object) -> None:
        self.emu = emu
        self.settings = Settings(
            **{
                "BOT_TOKEN": emu.token,
                "REDIS_URL": redis_url,
                "TELEGRAM_BASE_URL": emu.base_url,
                "RATE_GROUP_MAX": emu.group_rate,
                "RATE_GROUP_PERIOD": emu.group_window,
                "RATE_PRIVATE_MAX": emu.private_rate,
                "RATE_PRIVATE_PERIOD": emu.private_window,
                "HTTP_LISTEN": "127.0.0.1:0",
                **settings,
            }
        )
        self.app = None
        self.runner: Runner | None = None
        self._task: asyncio.Task | None = None

    @property
    def store(self) -> Store:
        return self.app.bot_data["services"].store

    async def start(self) -> Live:
        self.runner = Runner(self.settings)
        app = self.runner.app
        self._task = asyncio.create_task(self.runner.run())
        await self.emu.wait_for(
            lambda: (self.runner.role == "active" and self.runner.consumer is not None) or self._task.done(), 20
        )
        if self._task.done():
            self._task.result()
        self.app = app
        return self

    async def stop(self) -> None:
        runner, task, self.app = self.runner, self._task, None
        if runner is None or task is None:
            return
        runner.stop()
        await task

    async def settle(self, timeout: float = 20) -> None:
        """Wait until every queued update was fetched, stored, processed, and every sync finished."""
        await self.emu.wait_for(lambda: not self.emu.pending_updates, timeout)
        runner = self.runner
        syncer = self.app.bot_data["services"].syncer
        for _ in range(3):
            await self.emu.wait_for(lambda: runner.consumer is not None, timeout)
            while await runner.redis.xlen(runner.ingest.stream) > 0 or runner.consumer._chains:
                await runner.consumer.idle()
                await asyncio.sleep(0.02)
            await syncer.idle()
            await asyncio.sleep(0.05)

    async def advance(self, seconds: float) -> None:
        """Move the bot's clock (Redis's, :class:`tgbot.owner.clock.RedisClock`, which every deadline
        is measured on) ``seconds`` ahead and set every live game's timer again: whatever falls
        due by then fires now, with no wall-clock wait."""
        self.runner.clock._offset += seconds  # (the clock counts from Redis's TIME plus this)
        timers = self.app.bot_data["services"].timers
        for gid in await self.store.records.live_games():
            table = await self.store.load(gid)
            if table is not None:
                timers.schedule(table)

    # -- a game ---------------------------------------------------------------------------

    async def open_game(
        self, group: SimChat, players: list[SimUser], *, thread_id: int | None = None, start: bool = True
    ) -> str:
        """``players[0]`` opens a lobby in ``group`` (topic), the others join, and it starts.
        Every player starts the bot first. Returns the game id."""
        emu = self.emu
        for u in players:
            if not u.started or u.blocked:
                await u.start_bot(answered=True, timeout=20)  # the join below must not overtake it
        since = max((m.message_id for m in emu.chat_messages(group.id)), default=0)
        await players[0].send(group, "/start_game", thread_id=thread_id)
        lobby = await emu.wait_message(
            group.id, lambda m: cb(m, "j:") and m.thread_id == thread_id, since=since, timeout=20
        )
        gid = cb(lobby, "j:")[0]["callback_data"][2:]
        for u in players[1:]:
            await (await u.tap(lobby, cb(lobby, "j:")[0])).answer(15)
        if start:
            await (await players[0].tap(lobby, cb(lobby, "s:")[0])).answer(15)
        await self.settle()
        return gid

    def panel(self, user: SimUser, gid: str) -> MessageRecord | None:
        """The user's newest panel of game ``gid`` (any of its callbacks names the game)."""
        for m in reversed(self.emu.chat_messages(user.id, from_bot=True)):
            if any(gid in b.get("callback_data", "") for b in m.flat_buttons):
                return m
        return None

    async def pick(self, user: SimUser, gid: str) -> MessageRecord:
        """``user`` (on their turn) picks their first card; returns the panel with a play
        button."""
        p = await self.emu.wait_for(lambda: (m := self.panel(user, gid)) and cb(m, "k:") and m, timeout=20)
        await user.tap(p, cb(p, "k:")[0])
        await self.settle()
        return await self.emu.wait_for(lambda: (m := self.panel(user, gid)) and cb(m, "p:") and m, timeout=20)

    async def play_one(self, gid: str, users: dict[int, SimUser]) -> SimUser:
        """The current player plays one card (first pick, first claim). Returns them."""
        table = await self.store.load(gid)
        user = users[table.seats[table.state.current].user_id]
        p = await self.pick(user, gid)
        await (await user.tap(p, cb(p, "p:")[0])).answer(15)
        await self.settle()
        return user


@contextlib.asynccontextmanager
async def running(redis_url: str, group_window: float = 2.0, private_window: float | None = None):
    """A :class:`Live` bot on ``redis_url`` (emptied before and after; one Redis's database, or
    every primary of a Redis Cluster) against a fresh emulator whose group window is
    ``group_window`` seconds (a private chat's: ``private_window``, the group's / 20 by default);
    yields the bot (``bot.url`` = the Redis URL)."""
    redis = await connect(redis_url)
    await redis.flushdb()
    emu = BotAPIEmulator(group_window=group_window, private_window=private_window)
    await emu.start()
    bot = Live(emu, redis_url)
    await bot.start()
    bot.url = redis_url
    try:
        yield bot
    finally:
        await bot.stop()
        await emu.stop()
        await redis.flushdb()
        await redis.aclose()


def live_fixture(db: int):
    """A pytest fixture ``live``: a :func:`running` bot on database ``db`` of the test's own
    redis-server (``live = live_fixture(DB)`` in a test module)."""

    @pytest.fixture
    async def live(redis_server):
        async with running(redis_server.url.replace("/0", f"/{db}")) as bot:
            yield bot

    return live
