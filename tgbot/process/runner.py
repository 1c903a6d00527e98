"""A bot process's life: stand by, become the active one, work, step down (DESIGN.md, Processes).

Every process serves ``/healthz`` and, in webhook mode, stores what it receives
(:mod:`tgbot.process.web`), and tries for the lease (:mod:`tgbot.process.lease`). The holder is the
only one that calls the Bot API: it takes over (Redis's clock read, data migrated, every live
game's fencing epoch raised, its timer set and views synced, every group's rate window counted
full), then polls or tails the stream, runs the timers and syncs, and renews the lease every
second. Losing the lease (or a fenced commit) stops all that at once and drops what is in memory;
a stop (SIGTERM, SIGINT) gives the lease up for a standby.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable
from enum import StrEnum
from typing import Any
from urllib.parse import urlparse

from telegram import Update
from telegram.error import BadRequest, InvalidToken
from telegram.ext import Application

from tgbot import __version__, handlers
from tgbot.ingest.consumer import Consumer
from tgbot.ingest.poller import Poller
from tgbot.ingest.stream import Ingest, Outcome, outcome
from tgbot.owner.store import FencedError, Store, current_update, never
from tgbot.owner.timers import Timers
from tgbot.process.clock import RedisClock
from tgbot.process.lease import RENEW_EVERY, Lease
from tgbot.process.ratelimit import RateLimiter
from tgbot.process.web import start_internal, start_webhook, webhook_secret
from tgbot.settings import Settings
from tgbot.storage.keys import bot_prefix
from tgbot.storage.migrate import migrate
from tgbot.storage.redis import connect
from tgbot.views.sync import Syncer

__all__ = ["Role", "Runner"]

log = logging.getLogger(__name__)

#: Seconds a stepping-down process gives the view syncs in flight to finish their calls.
STOP_GRACE = 3.0


class Role(StrEnum):
    """What ``/healthz`` says a process is."""

    ACTIVE = "active"
    STANDBY = "standby"


async def _bounded(work: Awaitable[Any], what: str, seconds: float = 10.0) -> None:
    """Await ``work`` for at most ``seconds``; log it when it took longer (it goes on unawaited)."""
    try:
        await asyncio.wait_for(asyncio.shield(work), seconds)
    except TimeoutError:
        log.error("stepping down: %s did not stop within %.0f s", what, seconds)


class Runner:
    """One bot process. ``app``: the PTB Application, built without an Updater
    (:func:`tgbot.handlers.app.build_application`)."""

    def __init__(self, app: Application, settings: Settings) -> None:
        self.app = app
        self.settings = settings
        self.bot_id = settings.bot_token.partition(":")[0]
        self.clock = RedisClock()
        self.role = Role.STANDBY
        self.redis: Any = None
        self.consumer: Consumer | None = None
        self.secret = ""  # the webhook's secret (webhook mode)
        self._stop = asyncio.Event()
        self._step_down = asyncio.Event()
        self._servers: list[Any] = []

    def health(self) -> dict[str, Any]:
        """``/healthz``'s body: this process's role and the epoch of the lease it holds."""
        active = self.role is Role.ACTIVE and self.lease.held()
        return {"role": Role.ACTIVE if active else Role.STANDBY, "epoch": self.lease.epoch if active else 0}

    def stop(self) -> None:
        """Ask the process to stop (signal handlers call this)."""
        self._stop.set()

    async def run(self) -> None:
        """Run until :meth:`stop`. Raises what the start-up calls raise (Redis, getMe)."""
        self.redis = await connect(self.settings.redis_url)
        self.store = store = Store(self.redis, prefix=bot_prefix(self.bot_id))
        self.ingest = Ingest(self.redis, store.keys.ingest())
        self.lease = Lease(self.redis, store.keys.lease())
        await self.app.initialize()
        try:
            await self._listen()
            log.info("bot @%s: standing by for the lease", self.app.bot.username)
            while not self._stop.is_set():
                try:
                    if await self.lease.try_acquire():
                        await self._active()
                except FencedError:
                    log.warning("fenced: another process is active")
                except (InvalidToken, BadRequest):
                    raise  # a start-up call Telegram refuses (__main__ says which and exits)
                except Exception:
                    log.exception("lease or take-over failed; standing by")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), RENEW_EVERY)
        finally:
            with contextlib.suppress(Exception):
                await self.lease.release()
            for server in self._servers:
                await server.cleanup()
            await self.app.shutdown()
            await self.redis.aclose()

    async def _listen(self) -> None:
        """Start ``/healthz`` and, in webhook mode, the webhook with the bot's one secret."""
        self._servers.append(await start_internal(self.settings.http_listen, self.health))
        if self.settings.webhook_url:
            self.secret = await webhook_secret(
                self.redis, self.store.keys.webhook_secret(), self.settings.webhook_secret
            )
            path = urlparse(self.settings.webhook_url).path
            self._servers.append(
                await start_webhook(self.settings.webhook_listen, path, self.secret, self.ingest.pushed)
            )

    async def _active(self) -> None:
        """Work as the active process until the lease is lost, a commit is fenced or a stop."""
        self.role = Role.ACTIVE
        self._step_down.clear()
        syncer, timers = await self._take_up()
        tasks: list[asyncio.Task[Any]] = []
        try:
            await self._take_over(syncer, timers)
            self.consumer = Consumer(self.ingest, self.redis, self.lease.holder, self._process)
            work = {
                "consumer": self.consumer.run(),
                "lease": self._renew(),
                "stop": self._stop.wait(),
                "step-down": self._step_down.wait(),
            }
            if not self.settings.webhook_url:
                work["poller"] = Poller(self.app.bot, self.consumer, self.lease).run()
            tasks = [asyncio.create_task(coroutine, name=name) for name, coroutine in work.items()]
            log.info("bot @%s active (epoch %d, cheat-bot %s)", self.app.bot.username, self.lease.epoch, __version__)
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if not task.cancelled() and task.exception() is not None:
                    log.error("%s stopped", task.get_name(), exc_info=task.exception())
        finally:
            await self._hand_back(tasks, syncer, timers)

    async def _take_up(self) -> tuple[Syncer, Timers]:
        """Point the store, the handlers' services and the rate limiter at this lease."""
        store, lease, bot = self.store, self.lease, self.app.bot
        store.epoch, store.holds = lease.epoch, lease.active
        store.forget_tables()
        await self.clock.sync(self.redis)
        await migrate(self.redis, self.bot_id)
        syncer = Syncer(bot, store, lambda: bot.username or "", self.clock.now, self.settings.lobby_timeout)
        timers = Timers(store, syncer, self.clock)

        def on_commit(before: Any, after: Any) -> None:
            timers.schedule(after)
            syncer.request(after.id)

        store.on_commit = on_commit
        self.app.bot_data["services"] = handlers.Services(
            self.settings, store, syncer, bot.username or "", self.clock, self.bot_id, timers
        )
        if isinstance(bot.rate_limiter, RateLimiter):
            bot.rate_limiter.may_call = lease.active
            if lease.previous_renewal is not None:
                # the previous holder may have sent messages until its lease lapsed
                limiter = bot.rate_limiter
                limiter.assume_full(lease.previous_renewal + lease.seconds + limiter.group_period - self.clock.now())
        return syncer, timers

    async def _take_over(self, syncer: Syncer, timers: Timers) -> None:
        """Every live game's epoch raised first (a former holder can commit nothing from now on),
        then the commands, the webhook, and every live game's timer and views."""
        live = await self.store.live_games()
        for game_id in live:
            await self.store.raise_epoch(game_id)
        await handlers.register_commands(self.app)
        if self.settings.webhook_url:
            await self.app.bot.set_webhook(
                self.settings.webhook_url, secret_token=self.secret, allowed_updates=Update.ALL_TYPES
            )
        else:
            await self.app.bot.delete_webhook()
        for game_id in live:
            table = await self.store.load(game_id)
            if table is not None:
                timers.schedule(table)
            syncer.request(game_id)
        log.info("take-over: %d game(s) to resume", len(live))

    async def _hand_back(self, tasks: list[asyncio.Task[Any]], syncer: Syncer, timers: Timers) -> None:
        """Stop the work at once and drop what is kept in memory."""
        store = self.store
        self.role = Role.STANDBY
        log.info("bot @%s stepping down", self.app.bot.username)
        for task in tasks:
            task.cancel()
        await _bounded(asyncio.gather(*tasks, return_exceptions=True), "the update processing")
        self.consumer = None
        await _bounded(timers.close(), "the timers")
        await _bounded(syncer.close(STOP_GRACE if self._stop.is_set() else 0.0), "the view sync")
        store.on_commit = lambda before, after: None
        store.forget_tables()
        store.epoch, store.holds = 0, never
        log.info("bot @%s no longer active", self.app.bot.username)

    async def _renew(self) -> None:
        """Renew the lease every second; return when it is lost (or could not be renewed in time)."""
        while True:
            await asyncio.sleep(RENEW_EVERY)
            try:
                if not await self.lease.try_acquire():
                    log.warning("lease lost to another process")
                    return
            except Exception as error:
                if not self.lease.held():
                    log.warning("lease not renewed in time (%s): stepping down", error)
                    return
                log.warning("lease renewal failed: %s", error)

    async def _process(self, data: dict[str, Any], last_try: bool) -> bool:
        """Process one stored update through the Application's handlers; False to try again."""
        if not await self.lease.active():
            self._step_down.set()
            raise asyncio.CancelledError
        update = Update.de_json(data, self.app.bot)
        current_update.set((update.update_id, {}))
        result = Outcome()
        outcome.set(result)
        await self.app.process_update(update)
        if result.fenced:
            self._step_down.set()
            return False
        if result.retry and last_try and update.callback_query is not None:
            await handlers.tell_to_tap_again(update, self.app)
        return not result.retry
