"""A bot process's life: stand by, become the active one, work, and step down.

DESIGN.md, Processes. Every process connects to Redis, serves ``/healthz`` and, in webhook mode,
receives and stores updates (:mod:`tgbot.process.web`, :mod:`tgbot.ingest.stream`). It then tries for the lease
(:mod:`tgbot.process.lease`) until it gets it. While it holds the lease it is the active process, the
only one that calls the Bot API (a standby calls ``getMe`` at most):

1. take-over: Redis's clock is read, stored data is migrated, every live game's fencing epoch is
   raised, its timer set and its views synced; the rate limiter counts every group's window as
   full for one period (the previous holder may have just filled it);
2. work: long polling (or the webhook's stored updates), the stream consumer, the timers, the
   view syncs; the lease is renewed every second;
3. step down when the lease is lost (or a commit was fenced): everything above stops at once and
   whatever is kept in memory is dropped; the process stands by again.

A stop (SIGTERM, SIGINT) gives the lease up, so a standby takes over at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any
from urllib.parse import urlparse

from telegram import Update
from telegram.error import BadRequest, InvalidToken
from telegram.ext import Application

from tgbot import handlers

from tgbot.ingest import stream as ingest
from tgbot.ingest.stream import Outcome, outcome
from tgbot.process.clock import RedisClock
from tgbot.process.lease import RENEW_EVERY, Lease
from tgbot.storage.migrate import migrate
from tgbot.process.ratelimit import RateLimiter
from tgbot.settings import Settings
from tgbot.owner.store import FencedError, Store, connect, current_update
from tgbot.views.sync import Syncer
from tgbot.owner.timers import Timers
from tgbot.process.web import start_internal, start_webhook, webhook_secret

__all__ = ["Runner"]

log = logging.getLogger(__name__)

#: Seconds a stepping-down process gives the view syncs in flight to finish their calls.
STOP_GRACE = 3.0


async def _bounded(work: Any, what: str, seconds: float = 10.0) -> None:
    """Await ``work`` for at most ``seconds``; log it when it took longer (it goes on unawaited)."""
    try:
        await asyncio.wait_for(asyncio.shield(work), seconds)
    except asyncio.TimeoutError:
        log.error("stepping down: %s did not stop within %.0f s", what, seconds)


class Runner:
    """One bot process (see the module docstring). ``app``: the PTB Application, built without an
    Updater (:func:`tgbot.handlers.app.build_application`)."""

    def __init__(self, app: Application, settings: Settings) -> None:
        self.app = app
        self.settings = settings
        self.bot_id = settings.bot_token.partition(":")[0]
        self.clock = RedisClock()
        self.role = "standby"
        self.redis: Any = None
        self.store: Store | None = None
        self.lease: Lease | None = None
        self.consumer: ingest.Consumer | None = None
        self.secret = ""  # the webhook's secret (webhook mode)
        self._stop = asyncio.Event()
        self._step_down = asyncio.Event()
        self._servers: list[Any] = []

    def health(self) -> dict[str, Any]:
        """``/healthz``'s body: this process's role and the epoch of the lease it holds."""
        active = self.role == "active" and self.lease is not None and self.lease.held()
        return {"role": "active" if active else "standby", "epoch": self.lease.epoch if active and self.lease is not None else 0}

    def stop(self) -> None:
        """Ask the process to stop (signal handlers call this)."""
        self._stop.set()

    async def run(self) -> None:
        """Run until :meth:`stop`. Raises what the start-up calls raise (Redis, getMe)."""
        self.redis = await connect(self.settings.redis_url)
        self.store = store = Store(self.redis, prefix=f"cheat:{self.bot_id}")
        self.ingest = ingest.Ingest(self.redis, (store.k_bot("updates"), store.k_bot("recent"), store.k_bot("offset"), store.k_bot("lease")))
        self.lease = Lease(self.redis, (store.k_bot("lease"), store.k_bot("epoch"), store.k_bot("renewed")))
        await self.app.initialize()
        try:
            self._servers.append(await start_internal(self.settings.http_listen, self.health))
            if self.settings.webhook_url:
                self.secret = await webhook_secret(self.redis, store.k_bot("webhook_secret"), self.settings.webhook_secret)
                path = urlparse(self.settings.webhook_url).path
                self._servers.append(await start_webhook(self.settings.webhook_listen, path, self.secret, self.ingest.pushed))
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
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), RENEW_EVERY)
        finally:
            with contextlib.suppress(Exception):
                await self.lease.release()
            for server in self._servers:
                await server.cleanup()
            await self.app.shutdown()
            await self.redis.aclose()

    async def _active(self) -> None:
        """Work as the active process until the lease is lost, a commit is fenced or a stop."""
        assert self.store is not None and self.lease is not None
        store, lease = self.store, self.lease
        self.role = "active"
        self._step_down.clear()
        store.epoch = lease.epoch
        store.holds = lease.held
        store.forget_tables()
        await self.clock.sync(self.redis)
        await migrate(self.redis, self.bot_id)
        syncer = Syncer(self.app.bot, store, lambda: self.app.bot.username or "", self.clock.now, self.settings.lobby_timeout)
        timers = Timers(store, syncer, self.clock)

        def on_commit(before: Any, after: Any) -> None:
            timers.schedule(after)
            syncer.request(after.id)

        store.on_commit = on_commit
        self.app.bot_data["services"] = handlers.Services(self.settings, store, syncer, self.app.bot.username or "", self.clock, self.bot_id, timers)
        self._assume_windows_full()
        tasks: list[asyncio.Task[Any]] = []
        try:
            await self._take_over(store, syncer, timers)
            self.consumer = ingest.Consumer(self.ingest, self.redis, lease.holder, self._process)
            tasks.append(asyncio.create_task(self.consumer.run(), name="consumer"))
            if not self.settings.webhook_url:
                tasks.append(asyncio.create_task(ingest.Poller(self.app.bot, self.ingest, lease).run(), name="poller"))
            tasks.append(asyncio.create_task(self._renew(), name="lease"))
            tasks.append(asyncio.create_task(self._stop.wait(), name="stop"))
            tasks.append(asyncio.create_task(self._step_down.wait(), name="step-down"))
            log.info("bot @%s active (epoch %d)", self.app.bot.username, lease.epoch)
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if not task.cancelled() and task.exception() is not None:
                    log.error("%s stopped", task.get_name(), exc_info=task.exception())
        finally:
            self.role = "standby"
            log.info("bot @%s stepping down", self.app.bot.username)
            for task in tasks:
                task.cancel()
            await _bounded(asyncio.gather(*tasks, return_exceptions=True), "the update processing")
            self.consumer = None
            await _bounded(timers.close(), "the timers")
            await _bounded(syncer.close(STOP_GRACE if self._stop.is_set() else 0.0), "the view sync")
            store.on_commit = lambda before, after: None
            store.forget_tables()
            store.epoch = 0
            store.holds = lambda: False
            log.info("bot @%s no longer active", self.app.bot.username)

    def _assume_windows_full(self) -> None:
        """The previous holder may have sent messages until its lease lapsed: count every group's
        window as full until those have left Telegram's window (nothing after a long pause)."""
        assert self.lease is not None
        limiter = self.app.bot.rate_limiter
        previous = self.lease.previous_renewal
        if isinstance(limiter, RateLimiter) and previous is not None:
            limiter.assume_full(previous + self.lease.seconds + limiter.group_period - self.clock.now())

    async def _take_over(self, store: Store, syncer: Syncer, timers: Timers) -> None:
        """Every live game's epoch raised first (a former holder can commit nothing from now on),
        then the commands, the webhook, and every live game's timer and views."""
        live = await store.live_games()
        for gid in live:
            await store.raise_epoch(gid)
        await handlers.register_commands(self.app)
        if self.settings.webhook_url:
            await self.app.bot.set_webhook(self.settings.webhook_url, secret_token=self.secret, allowed_updates=Update.ALL_TYPES)
        else:
            await self.app.bot.delete_webhook()
        for gid in live:
            table = await store.load(gid)
            if table is not None:
                timers.schedule(table)
            syncer.request(gid)
        log.info("take-over: %d game(s) to resume", len(live))

    async def _renew(self) -> None:
        """Renew the lease every second; return when it is lost (or could not be renewed in time)."""
        assert self.lease is not None
        while True:
            await asyncio.sleep(RENEW_EVERY)
            try:
                if not await self.lease.try_acquire():
                    log.warning("lease lost to another process")
                    return
            except Exception as e:
                if not self.lease.held():
                    log.warning("lease not renewed in time (%s): stepping down", e)
                    return
                log.warning("lease renewal failed: %s", e)

    async def _process(self, data: dict[str, Any], last_try: bool) -> bool:
        """Process one stored update through the Application's handlers; False to try again."""
        if not (self.lease is not None and (self.lease.held() or await self.lease.confirm())):
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
