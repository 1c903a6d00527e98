"""Start the playground: the Bot API emulator, the real bot process against it on the embedded
store, the demo people and group, and the page; stop all of it on SIGINT or SIGTERM."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import socket
import sys
import tempfile
from pathlib import Path

import aiohttp
from aiohttp import web

from playground.emulator.botapi import BotAPIEmulator
from playground.page import Demo, Page, serve

#: the bot's token in the playground: any ``<id>:<secret>`` the emulator is told to accept
TOKEN = "700000:AAplaygroundDemoToken-notSecret"
#: id, first name, username, Telegram language; the first creates and administers the group
PEOPLE = [(1001, "Алиса", "alice", "ru"), (1002, "Борис", "boris", "ru"), (1003, "Вера", "vera", "en")]
GROUP_ID, GROUP_TITLE = -100, "Demo group"
#: how long the bot may take to start (import, catalogs, first getUpdates)
START_TIMEOUT = 120.0
#: the emulator and the bot's /healthz listen here whatever address the page is given
LOOPBACK = "127.0.0.1"


def _ends_with_the_playground() -> None:
    """In the bot's process before it runs (Linux): SIGTERM once the playground is gone, even
    killed by SIGKILL (``prctl(PR_SET_PDEATHSIG)``), so no orphan keeps polling."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG


class StartError(Exception):
    """The bot did not come up; the message says why (its log's tail included)."""


def free_port(host: str) -> int:
    """A port free on ``host`` now (the bot's HTTP_LISTEN takes an address, not port 0)."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _number(name: str, default: float) -> float:
    value = os.environ.get(name)
    return float(value) if value else default


class Playground:
    """One playground run. ``await start()``, then ``await stopped()`` until a signal."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, log_path: Path | None = None) -> None:
        self.host, self.port = host, port
        self.log_path = log_path or Path(tempfile.mkdtemp(prefix="cheat-playground-")) / "bot.log"
        # the emulator's limits are those the bot is told (Telegram's unless the environment
        # scales them down, as tests do)
        self.emu = BotAPIEmulator(
            TOKEN,
            bot_username="cheat_playground_bot",
            bot_first_name="Верю — не верю",
            group_rate=int(_number("RATE_GROUP_MAX", 20)),
            group_window=_number("RATE_GROUP_PERIOD", 60.0),
            global_rate=int(_number("RATE_GLOBAL_MAX", 30)),
            global_window=_number("RATE_GLOBAL_PERIOD", 1.0),
            private_rate=int(_number("RATE_PRIVATE_MAX", 3)),
            private_window=_number("RATE_PRIVATE_PERIOD", 3.0),
            host=LOOPBACK,
            control=True,
        )
        self.bot: asyncio.subprocess.Process | None = None
        self._page: web.AppRunner | None = None
        self.url = ""

    async def start(self) -> str:
        """Start everything; return the page's URL. Raises :class:`StartError`."""
        await self.emu.start()
        await self._start_bot()
        people = [self.emu.add_user(*person) for person in PEOPLE]
        group = self.emu.add_group(GROUP_ID, GROUP_TITLE, members=people, admins=people[:1])
        for person in people:  # each presses Start, so the bot may write to them
            await person.start_bot(answered=True, timeout=30)
        self._page, port = await serve(Page(self.emu, Demo(group, people)), self.host, self.port)
        self.url = f"http://{self.host}:{port}/"
        return self.url

    async def _start_bot(self) -> None:
        """``python -m tgbot`` on the embedded store against the emulator; ready once it polls
        (getMe answered, the lease taken) and its /healthz says active."""
        http_port = free_port(LOOPBACK)
        env = dict(
            os.environ,
            BOT_TOKEN=TOKEN,
            TELEGRAM_BASE_URL=self.emu.base_url,
            REDIS_URL="memory://",
            HTTP_LISTEN=f"{LOOPBACK}:{http_port}",
            PYTHONUNBUFFERED="1",
        )
        env.pop("WEBHOOK_URL", None)  # long polling: the emulator cannot reach a webhook here
        # its own session: the terminal's Ctrl-C reaches the playground only, which stops the bot first
        with open(self.log_path, "ab") as log:
            self.bot = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "tgbot",
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_ends_with_the_playground if sys.platform == "linux" else None,
            )
        polling = asyncio.ensure_future(self.emu.wait_call("getUpdates", timeout=START_TIMEOUT))
        exited = asyncio.ensure_future(self.bot.wait())
        await asyncio.wait({polling, exited}, return_when=asyncio.FIRST_COMPLETED)
        for task in (polling, exited):
            task.cancel()
        if exited.done() and not exited.cancelled():
            raise StartError(f"the bot exited with code {exited.result()}:\n{self.log_tail()}")
        if polling.cancelled() or polling.exception() is not None:
            raise StartError(f"the bot did not poll within {START_TIMEOUT:.0f} s:\n{self.log_tail()}")
        health = await self._health(http_port)
        if health.get("role") != "active":
            raise StartError(f"the bot's /healthz says {health}:\n{self.log_tail()}")

    async def _health(self, port: int) -> dict:
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"http://{LOOPBACK}:{port}/healthz", timeout=aiohttp.ClientTimeout(total=10)) as response,
        ):
            return dict(await response.json())

    def log_tail(self, lines: int = 20) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    async def stopped(self, signalled: asyncio.Event) -> int:
        """Wait until ``signalled`` is set (0) or the bot exits by itself (1)."""
        assert self.bot is not None
        waiting = asyncio.ensure_future(signalled.wait())
        exited = asyncio.ensure_future(self.bot.wait())
        await asyncio.wait({waiting, exited}, return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        exited.cancel()
        return 0 if signalled.is_set() else 1

    async def stop(self) -> None:
        """Stop the bot (SIGTERM, SIGKILL after 10 s), then the page and the emulator."""
        if self.bot is not None and self.bot.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.bot.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(self.bot.wait(), 10)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.bot.pid, signal.SIGKILL)
                await self.bot.wait()
        if self._page is not None:
            await self._page.cleanup()
            self._page = None
        await self.emu.stop()
