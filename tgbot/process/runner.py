"""A bot process's life (docs/DESIGN.md, Processes): stand by for the lease, take over, work, step down
at once when the lease or a commit is lost. The composition root: it builds each object with what it needs."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable
from enum import StrEnum
from typing import Any
from urllib.parse import urlparse

from redis.exceptions import ConnectionError as RedisConnectionError, RedisError, TimeoutError as RedisTimeoutError
from telegram import Update
from telegram.error import BadRequest, InvalidToken
from telegram.ext import ContextTypes
from telegram.request import BaseRequest

from tgbot import __version__, handlers, metrics
from tgbot.game.table import Table
from tgbot.ingest.consumer import Consumer
from tgbot.ingest.poller import Poller
from tgbot.ingest.stream import Ingest
from tgbot.ingest.web import start_internal, start_webhook, webhook_secret
from tgbot.owner.clock import RedisClock
from tgbot.owner.store import FencedError, Store
from tgbot.owner.timers import Timers
from tgbot.process.lease import LEASE_SECONDS, RENEW_EVERY, Lease
from tgbot.process.watch import RedisHealth, game_committed
from tgbot.settings import Settings
from tgbot.storage import chatmove, stats
from tgbot.storage.keys import Keys, bot_prefix
from tgbot.storage.migrate import SchemaError, migrate
from tgbot.storage.redis import connect
from tgbot.sync.group_lane import GameHooks
from tgbot.sync.ratelimit import ThrottledError
from tgbot.sync.syncer import Syncer

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


class Outcome:
    """How the processing of one update went: ``retry`` when it met a failure of Redis (try
    again), ``fenced`` when a commit found a newer active process, ``error`` any other failure
    (a handler's bug: the update is set aside)."""

    def __init__(self) -> None:
        self.retry = False
        self.fenced = False
        self.error: BaseException | None = None


class Runner:
    """One bot process. ``request``: the HTTP layer of its Bot API calls (default PTB's httpx)."""

    def __init__(self, settings: Settings, request: BaseRequest | None = None) -> None:
        self.app = app = handlers.build_application(settings, self._holds_lease, request)
        self.settings = settings
        self.bot_id = settings.bot_token.partition(":")[0]
        self.clock = RedisClock()
        self.role = Role.STANDBY
        self.redis: Any = None
        self.lease: Lease | None = None
        self.syncer: Syncer | None = None
        self.timers: Timers | None = None
        self.consumer: Consumer | None = None
        self.secret = ""  # the webhook's secret (webhook mode)
        self._stop = asyncio.Event()
        self._step_down = asyncio.Event()
        self._servers: list[Any] = []
        self._outcomes: dict[int, Outcome] = {}  # by update id, while it is processed
        self.redis_health = RedisHealth(LEASE_SECONDS)
        self._why = metrics.StepDown.ERROR  # why the active process steps down (when it does)
        app.add_error_handler(self._failed)

    def health(self) -> dict[str, Any]:
        """``/healthz``'s body: this process's role, the epoch of the lease it holds, the bot,
        the version, whether Redis answers and the updates it set aside (dead letters)."""
        active = self.role is Role.ACTIVE and self.lease is not None and self.lease.held()
        return {
            "role": Role.ACTIVE if active else Role.STANDBY,
            "epoch": self.lease.epoch if active and self.lease else 0,
            "bot": self._username(),
            "version": __version__,
            "redis": "ok" if self.redis_health.up() else "down",
            "dead_letters": metrics.dead_letters(),
        }

    def _username(self) -> str:
        """``@username``, or ``""`` before getMe answered."""
        try:
            return f"@{self.app.bot.username}"
        except RuntimeError:  # (PTB: the bot is not initialized yet)
            return ""

    @property
    def epoch(self) -> int:
        """The fencing number this process's commits carry (0 while not active)."""
        return self.lease.epoch if self.timers is not None and self.lease is not None else 0

    async def active(self) -> bool:
        """Whether this process may commit now: it took over, has not stepped down, holds the lease."""
        return self.timers is not None and await self._holds_lease()

    async def _holds_lease(self) -> bool:
        """Whether this process may call the Bot API now (beyond getMe and getUpdates)."""
        return self.lease is not None and await self.lease.active()

    def _committed(self, before: Table | None, after: Table) -> None:
        """After each commit: counted (and a start or end logged), the game's timer set again,
        its views synced (coalesced)."""
        game_committed(before, after)
        if self.timers is not None and self.syncer is not None:
            self.timers.schedule(after)
            self.syncer.request(after.id)

    def stop(self) -> None:
        """Ask the process to stop (signal handlers call this)."""
        self._stop.set()

    async def run(self) -> None:
        """Run until :meth:`stop`. Raises what the start-up calls raise (Redis, getMe)."""
        self.redis = await connect(self.settings.redis_url)
        metrics.set_info("webhook" if self.settings.webhook_url else "polling", _store_kind(self.redis))
        keys = Keys(bot_prefix(self.bot_id))
        self.lease = lease = Lease(self.redis, keys.lease())
        self.store = Store(self.redis, keys.prefix, fence=self, on_commit=self._committed)
        self.ingest = Ingest(self.redis, keys.ingest())
        await self.app.initialize()
        await self.app.start()  # (no Updater: only Application.create_task's tasks are tracked)
        try:
            await self._listen()
            log.info("bot @%s: standing by for the lease", self.app.bot.username)
            while not self._stop.is_set():
                try:
                    if await self.redis_health.call(lease.try_acquire()):
                        await self._active()
                except FencedError:
                    log.warning("fenced: another process is active")
                except (InvalidToken, BadRequest):
                    raise  # a start-up call Telegram refuses (__main__ says which and exits)
                except SchemaError as error:
                    self.role = Role.STANDBY
                    metrics.stepped_down(metrics.StepDown.SCHEMA)
                    log.error("not taking over: %s", error)
                    raise  # (__main__ says it in one line and exits with 2)
                except (RedisError, OSError, TimeoutError) as error:
                    self.redis_health.failed(error)  # (logged once, until Redis answers again)
                except Exception:
                    log.exception("lease or take-over failed; standing by")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), RENEW_EVERY)
        finally:
            with contextlib.suppress(Exception):
                await lease.release()
            for server in self._servers:
                await server.cleanup()
            await self.app.stop()
            await self.app.shutdown()
            await self.redis.aclose()

    async def _listen(self) -> None:
        """Start ``/healthz`` and, in webhook mode, the webhook with the bot's one secret."""
        self._servers.append(await start_internal(self.settings.http_listen, self.health, self.redis_health.up))
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
        lease = self._lease()
        self._why = metrics.StepDown.ERROR
        # renewed from the moment it is held: a take-over longer than the lease keeps it
        tasks: list[asyncio.Task[Any]] = [asyncio.create_task(self._renew(), name="lease")]
        syncer = timers = None
        try:
            syncer, timers = await self._take_up(lease)
            await self._take_over(syncer, timers)
            self.consumer = Consumer(self.ingest, self.redis, lease.holder, self._process)
            work = {
                "consumer": self.consumer.run(),
                "stop": self._stop.wait(),
                "step-down": self._step_down.wait(),
            }
            if not self.settings.webhook_url:
                work["poller"] = Poller(self.app.bot, self.consumer, lease).run()
            tasks += [asyncio.create_task(coroutine, name=name) for name, coroutine in work.items()]
            log.info("bot @%s active (epoch %d, cheat-bot %s)", self.app.bot.username, lease.epoch, __version__)
            metrics.became_active(lease.epoch)
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if task.get_name() == "stop":
                    self._why = metrics.StepDown.STOP
                elif not task.cancelled() and (error := task.exception()) is not None:
                    self._why = metrics.StepDown.ERROR
                    if isinstance(error, RedisError | OSError):  # (Redis trouble: told once by the watch)
                        self._why = metrics.StepDown.REDIS
                        self.redis_health.failed(error)
                        log.warning("%s stopped: Redis failed", task.get_name())
                    else:
                        log.error("%s stopped", task.get_name(), exc_info=error)
        finally:
            await self._hand_back(tasks, syncer, timers)

    def _lease(self) -> Lease:
        assert self.lease is not None, "run() builds the lease"
        return self.lease

    async def _take_up(self, lease: Lease) -> tuple[Syncer, Timers]:
        """The clock, the data's schema, then this lease's syncer, timers and handlers' services."""
        store, bot = self.store, self.app.bot
        store.forget_tables()
        await self.clock.sync(self.redis)
        await migrate(self.redis, self.bot_id)
        hooks = GameHooks(
            figures=functools.partial(stats.game_figures, store.records),
            shown=functools.partial(stats.count_game, store.records),
            migrated=lambda table, new: chatmove.move_chat(store, table.chat_id, new, also=(table.id,)),
        )
        self.syncer = syncer = Syncer(
            bot, store, lambda: bot.username or "", hooks, self.clock.now, self.settings.lobby_timeout
        )
        self.timers = timers = Timers(store, self.clock, syncer.request)
        self.app.bot_data["services"] = handlers.Services(
            self.settings, store, syncer, bot.username or "", self.clock, self.bot_id, timers
        )
        return syncer, timers

    async def _take_over(self, syncer: Syncer, timers: Timers) -> None:
        """Every live game's epoch raised first (a former holder can commit nothing from now on),
        then the commands, the webhook, and every live game's timer and views."""
        live = await self.store.records.live_games()
        for game_id in live:
            await self.store.raise_epoch(game_id)
        await handlers.register_commands(self.app)
        if self.settings.webhook_url:
            await self.app.bot.set_webhook(
                self.settings.webhook_url, secret_token=self.secret, allowed_updates=Update.ALL_TYPES
            )
        else:
            await self.app.bot.delete_webhook()
        resumed = [table for game_id in live if (table := await self.store.load(game_id)) is not None]
        lease = self._lease()
        # each group's real window: what the previous holders sent, and one message in flight when it lapsed
        lapsed = lease.previous_renewal + lease.seconds if lease.previous_renewal is not None else None
        await syncer.recall_windows(resumed, lapsed)
        for table in resumed:
            timers.schedule(table)
        for game_id in live:
            syncer.request(game_id)
        metrics.games_resumed(resumed)
        log.info("take-over: %d game(s) to resume", len(live))

    async def _hand_back(self, tasks: list[asyncio.Task[Any]], syncer: Syncer | None, timers: Timers | None) -> None:
        """Stop the work at once and drop what is kept in memory."""
        store = self.store
        self.role = Role.STANDBY
        metrics.stepped_down(self._why)
        log.info("bot @%s stepping down (%s)", self.app.bot.username, self._why)
        for task in tasks:
            task.cancel()
        await _bounded(asyncio.gather(*tasks, return_exceptions=True), "the update processing")
        self.consumer = None
        if timers is not None and syncer is not None:  # (None: the take-over itself failed)
            await _bounded(timers.close(), "the timers")
            await _bounded(syncer.close(STOP_GRACE if self._stop.is_set() else 0.0), "the view sync")
        self.syncer = self.timers = None
        store.forget_tables()
        log.info("bot @%s no longer active", self.app.bot.username)

    async def _renew(self) -> None:
        """Renew the lease every second; return when it is lost (or could not be renewed in time).
        A renewal late past the lease's validity (a starved event loop, a slow Redis) first takes
        the lease back, unchanged, when nobody took it since: a lone process never steps down for it."""
        lease = self._lease()
        while True:
            await asyncio.sleep(RENEW_EVERY)
            try:
                if not await self.redis_health.call(lease.try_acquire()):
                    log.warning("lease lost to another process")
                    self._why = metrics.StepDown.LEASE_LOST
                    return
            except Exception as error:
                if lease.held():
                    log.debug("lease renewal failed: %s", error)
                    continue
                with contextlib.suppress(TimeoutError):
                    if await asyncio.wait_for(lease.confirm(), lease.seconds):
                        log.warning("lease renewed late (%s): taken back", str(error) or type(error).__name__)
                        continue
                log.warning("lease not renewed in time (%s): stepping down", str(error) or type(error).__name__)
                self._why = metrics.StepDown.LEASE_LOST if lease.epoch == 0 else metrics.StepDown.RENEWAL_LATE
                return

    async def _process(self, data: dict[str, Any], last_try: bool) -> bool:
        """Process one stored update through the Application's handlers; False to try again (a
        Redis failure). Raises what PTB's parsing or a handler raised (the consumer sets it aside)."""
        if not await self._lease().active():
            self._why = metrics.StepDown.LEASE_LOST
            self._step_down.set()
            raise asyncio.CancelledError
        update = Update.de_json(data, self.app.bot)
        result = self._outcomes[update.update_id] = Outcome()
        try:
            await self.app.process_update(update)
        finally:
            del self._outcomes[update.update_id]
        if result.error is not None and not result.retry and not result.fenced:
            raise result.error
        if result.fenced:
            self._why = metrics.StepDown.FENCED
            self._step_down.set()
            return False
        if result.retry and last_try and update.callback_query is not None:
            await handlers.tell_to_tap_again(update, self.app)
        return not result.retry

    async def _failed(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        """An error handler: a fenced commit, a Redis failure or a handler's fault goes in the
        update's outcome (a reply dropped over Telegram's limit is none)."""
        result = self._outcomes.get(update.update_id) if isinstance(update, Update) else None
        if result is None:
            return
        if isinstance(context.error, FencedError):
            result.fenced = True
        elif isinstance(context.error, RedisError):
            result.retry = True  # the consumer tries the update again
            if isinstance(context.error, RedisConnectionError | RedisTimeoutError):
                self.redis_health.failed(context.error)  # (told once, until Redis answers again)
            else:
                log.warning("update met a Redis failure: %s", context.error)
        elif context.error is not None and not isinstance(context.error, ThrottledError):
            # (a reply dropped over Telegram's limit is by design: the update is done)
            result.error = context.error  # (the consumer logs it once and sets the update aside)


def _store_kind(client: Any) -> str:
    """``cheat_bot_info``'s ``store``: memory, cluster, sentinel or redis."""
    kind = type(client).__name__.lower()
    if "fake" in kind:
        return "memory"
    if "cluster" in kind:
        return "cluster"
    pool = getattr(client, "connection_pool", None)
    return "sentinel" if "sentinel" in type(pool).__name__.lower() else "redis"
