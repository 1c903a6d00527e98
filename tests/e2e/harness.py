"""End-to-end harness: the real bot process (``python -m tgbot``) against the Bot API emulator.

:class:`BotProcess` starts and ``kill -9``s the bot; :class:`Table` drives simulated players who
only read the messages the bot shows them and tap the buttons it offers.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import redis as redis_sync

from core.record import replay
from tests.fakes.botapi import BotAPIEmulator, MessageRecord, SimChat, SimUser
from tests.redis_server import RedisServer
from tgbot.game.table import Table as BotTable
from tgbot.i18n import LANGUAGES, translator

#: The result's first line in every language (the group's language decides which one shows).
GAME_OVER = tuple(translator(lang).t("Game over.") for lang in LANGUAGES)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def debug_redis():
    """A private redis-server that accepts DEBUG from localhost (DEBUG SLEEP stalls it)."""
    server = RedisServer(extra=["--enable-debug-command", "local"])
    yield server
    server.stop()


@contextlib.asynccontextmanager
async def running(
    server: Any,
    tmp_path: Path,
    db: int,
    group_window: float = 6.0,
    private_window: float | None = None,
    processes: int = 1,
    started: int | None = None,
    each: list[dict] | None = None,
    fresh: bool = True,
    **env: str,
) -> AsyncIterator[tuple[BotAPIEmulator, list["BotProcess"], str]]:
    """The emulator and ``processes`` bot processes on db ``db`` of redis-server ``server``, the
    first ``started`` of them started (all by default; one is active, the others stand by);
    ``each``: extra keyword arguments of each process; ``fresh``: the first empties the database.
    ``private_window``: the private chats' (the group's / 20 by default).
    Yields (emulator, processes, Redis url); stops them all at the end."""
    emu = BotAPIEmulator(group_window=group_window, private_window=private_window)
    await emu.start()
    url = server.url.replace("/0", f"/{db}")
    bots = [
        BotProcess(emu, url, tmp_path / f"bot{i}.log", **{**env, **(each[i] if each else {})}) for i in range(processes)
    ]
    try:
        for i, bot in enumerate(bots):
            bot.keep_data = i > 0 or not fresh  # one database, emptied once
            if started is None or i < started:
                bot.start()
        yield emu, bots, url
    finally:
        for bot in bots:
            bot.stop()
        await emu.stop()


def redis_key(token: str, *parts: str) -> str:
    """A key of the bot with ``token``: ``redis_key(token, "{g<game>}", "log")``."""
    return ":".join(("cheat", token.partition(":")[0], *parts))


def stream_length(url: str, token: str) -> int:
    """Updates stored and not yet processed (the ingest stream's length)."""
    bot_id = token.partition(":")[0]
    with redis_sync.Redis.from_url(url, decode_responses=True) as client:
        return int(client.xlen(redis_key(token, f"{{b{bot_id}}}", "updates")))


def game_log(url: str, token: str, game_id: str) -> list[dict]:
    """The game's action log as stored (the record's actions)."""
    with redis_sync.Redis.from_url(url, decode_responses=True) as client:
        return [json.loads(action) for action in client.lrange(redis_key(token, f"{{g{game_id}}}", "log"), 0, -1)]


def stored_table(url: str, token: str, game_id: str) -> BotTable:
    """The game's table as stored in Redis."""
    with redis_sync.Redis.from_url(url, decode_responses=True) as client:
        return BotTable.from_json(client.hget(redis_key(token, f"{{g{game_id}}}", "game"), "table"))


def turn_of(url: str, token: str, game_id: str) -> tuple[int, int]:
    """Whose turn it is as stored (their user id) and the game's action count."""
    table = stored_table(url, token, game_id)
    assert table.state is not None
    return table.seats[table.state.current].user_id, table.action_count


def replay_of(url: str, token: str, game_id: str) -> dict:
    """The replay summary (GAME_RECORD.md) of the game's record as stored in Redis."""
    from tgbot.storage.stats import record_of_game

    with redis_sync.Redis.from_url(url, decode_responses=True) as client:
        deal = json.loads(client.hget(redis_key(token, f"{{g{game_id}}}", "game"), "deal"))
    record = record_of_game(stored_table(url, token, game_id), deal, game_log(url, token, game_id))
    assert record is not None
    return replay(record).summary()


def game_id(emu: BotAPIEmulator, group_id: int) -> str:
    """The id of the game in the group: from its board or lobby, or a player's panel."""
    messages = [*emu.chat_messages(group_id)]
    for user in emu.users.values():
        messages += emu.chat_messages(user.id)
    for message in reversed(messages):
        for button in message.flat_buttons:
            op, _, rest = button.get("callback_data", "").partition(":")
            if op in ("j", "s", "k", "p", "c", "b", "r", "t", "q") and rest:
                return rest.split(":")[0]
    raise AssertionError("no game seen")


class BotProcess:
    """The bot as a separate process pointed at ``emu`` and ``redis_url``."""

    def __init__(
        self, emu: BotAPIEmulator, redis_url: str, log_path: Path, wrapper: tuple[str, ...] = (), **env: str
    ) -> None:
        from tests.redis_server import free_port

        self.emu = emu
        self.redis_url = redis_url
        self.log_path = log_path
        self.wrapper = wrapper  # a command the bot runs under, e.g. ("faketime", "-f", "+20s")
        self.env = env
        self.proc: subprocess.Popen | None = None
        self.starts = 0
        self.keep_data = False  # a second process on the same database sets this
        self.http_port = free_port()

    def start(self) -> None:
        """Start the bot. The first start of a test's bot empties its Redis database: tests share
        one private redis-server, and update ids restart at 1 with every emulator, so a database
        left by another test would make the bot skip the new updates as re-deliveries."""
        if self.starts == 0 and not self.keep_data:
            import redis

            client = redis.Redis.from_url(self.redis_url)
            client.flushdb()
            client.close()
        env = dict(os.environ)
        env.update(
            BOT_TOKEN=self.emu.token,
            REDIS_URL=self.redis_url,
            TELEGRAM_BASE_URL=self.emu.base_url,
            LOG_LEVEL="INFO",
            RATE_GROUP_MAX=str(self.emu.group_rate),
            RATE_GROUP_PERIOD=str(self.emu.group_window),
            RATE_PRIVATE_MAX=str(self.emu.private_rate),
            RATE_PRIVATE_PERIOD=str(self.emu.private_window),
            PYTHONUNBUFFERED="1",
            HTTP_LISTEN=f"127.0.0.1:{self.http_port}",
        )
        env.update(self.env)
        log = open(self.log_path, "ab")
        # its own process group: a wrapper (faketime forks the bot) and the bot get every signal
        self.proc = subprocess.Popen(
            [*self.wrapper, sys.executable, "-m", "tgbot"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.starts += 1

    def _signal(self, number: int) -> None:
        """Send signal ``number`` to the bot's process group (the wrapper and the bot)."""
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, number)

    async def health(self) -> dict | None:
        """``GET /healthz`` of this process: ``{"role", "epoch"}``, or None when it does not answer."""
        import aiohttp

        try:
            async with (
                aiohttp.ClientSession() as http,
                http.get(f"http://127.0.0.1:{self.http_port}/healthz", timeout=aiohttp.ClientTimeout(total=2)) as r,
            ):
                return await r.json()
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError):
            return None

    def pause(self) -> None:
        """SIGSTOP: the process keeps its sockets but does nothing (a long GC pause, a frozen VM)."""
        self._signal(signal.SIGSTOP)

    def resume(self) -> None:
        self._signal(signal.SIGCONT)

    def kill9(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self._signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        """SIGTERM to the bot (a clean stop), SIGKILL after 10 s; nothing of it outlives the test."""
        if self.proc is not None and self.proc.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.proc.wait(10)
        self._signal(signal.SIGKILL)  # a child the wrapper left behind

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


_CARDS = re.compile(r"(\d+)")


def telegram_errors(emu: BotAPIEmulator) -> list[dict]:
    """The emulator's error answers, less those a crash or a take-over makes by design: a
    restarted poller's 409 while the dead one's long poll is still open, a second answer to a
    tap processed again after a ``kill -9`` (Telegram refuses it; the first one was given), and
    an edit repeated because the process died before recording it ("message is not modified")."""
    return [
        e
        for e in emu.errors
        if not (e["method"] == "getUpdates" and e["error_code"] == 409)
        and not (e["method"] == "answerCallbackQuery" and e["error_code"] == 400)
        and "message is not modified" not in e["description"]
    ]


async def active_of(bots: list[BotProcess], timeout: float = 30.0) -> BotProcess:
    """The one process whose /healthz says active (waits until exactly one does); fails when two
    say so at once."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        roles = [await b.health() for b in bots]
        active = [b for b, r in zip(bots, roles) if r is not None and r.get("role") == "active"]
        assert len(active) <= 1, roles
        if active:
            return active[0]
        await asyncio.sleep(0.1)
    raise AssertionError("no process became active")


def board_of(emu: BotAPIEmulator, group: SimChat) -> MessageRecord | None:
    """The newest bot message in the group that looks like the board (it has a hand list)."""
    msgs = [m for m in emu.chat_messages(group.id) if m.from_bot and m.text]
    return msgs[-1] if msgs else None


class Table:
    """Simulated players at one group table, each acting only through its private chat."""

    def __init__(self, emu: BotAPIEmulator, group: SimChat, players: list[SimUser], rng: random.Random) -> None:
        self.emu = emu
        self.group = group
        self.players = players
        self.rng = rng
        self.taps = 0
        self.unanswered: list[str] = []
        self.answers: list[tuple[SimUser, dict]] = []

    def panel(self, user: SimUser) -> MessageRecord | None:
        msgs = [m for m in self.emu.chat_messages(user.id) if m.from_bot and m.buttons]
        return msgs[-1] if msgs else None

    def actionable(self) -> list[tuple[SimUser, MessageRecord, list[dict]]]:
        out = []
        for u in self.players:
            p = self.panel(u)
            if p is None:
                continue
            # the game's moves, and "take my seat back" when the turn timer gave the seat to the AI
            buttons = [b for b in p.flat_buttons if "callback_data" in b and b["callback_data"][0] in "kpcbt"]
            if buttons:
                out.append((u, p, buttons))
        return out

    def choose(self, buttons: list[dict]) -> dict:
        weights = []
        for b in buttons:
            code = b["callback_data"][0]
            weights.append({"p": 6.0, "k": 2.0, "c": 0.6, "b": 1.0, "t": 1.0}[code])
        return self.rng.choices(buttons, weights)[0]

    async def tap(self, user: SimUser, message: MessageRecord, button: dict, timeout: float = 15.0) -> dict | None:
        edits = message.edited_count
        result = await user.tap(message, button)
        self.taps += 1
        try:
            ans = await result.answer(timeout)
            self.answers.append((user, ans))
        except (TimeoutError, asyncio.TimeoutError):
            self.unanswered.append(result.query_id)
            return None
        if message.chat_id > 0:
            # as a person does, look at the panel's change before the next tap (a pick drawn, a
            # play's panel after it): the bot draws it as the private chat takes messages
            with contextlib.suppress(TimeoutError):
                await self.emu.wait_for(
                    lambda: message.edited_count > edits or message.deleted, self.emu.private_window + 0.5
                )
        return ans

    async def step(self, timeout: float = 20.0) -> bool:
        """One tap by whoever has buttons to press; False when nobody has (game over)."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while loop.time() < end:
            acts = self.actionable()
            if acts:
                user, msg, buttons = self.rng.choice(acts)
                await self.tap(user, msg, self.choose(buttons))
                return True
            if self.finished():
                return False
            await asyncio.sleep(0.05)
        return False

    def finished(self) -> bool:
        return any(
            m.from_bot and m.text and any(g in m.text for g in GAME_OVER) for m in self.emu.chat_messages(self.group.id)
        )
