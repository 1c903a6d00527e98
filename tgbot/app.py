"""Building the PTB :class:`~telegram.ext.Application`: handlers, rate limiter, start-up."""

from __future__ import annotations

import asyncio
import logging

from telegram import BotCommand, BotCommandScopeAllGroupChats, BotCommandScopeAllPrivateChats, LinkPreviewOptions, Update
from telegram.constants import ParseMode
from telegram.request import BaseRequest
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    ChatMemberHandler,
    CommandHandler,
    MessageHandler,
    Defaults,
    TypeHandler,
    filters,
)

from . import handlers, timers
from .i18n import LANGUAGES, N_, translator
from .ratelimit import RedisRateLimiter
from .settings import Settings
from .store import Store, connect
from .sync import Syncer

__all__ = ["build_application", "COMMANDS"]


log = logging.getLogger(__name__)

#: Commands registered with setMyCommands: (command, description msgid), per chat kind.
GROUP_COMMANDS = (
    ("start_game", N_("Open a lobby for a new game")),
    ("stop_game", N_("Stop the game (creator or admin)")),
    ("board", N_("Show the board again")),
    ("language", N_("Choose the group's language")),
    ("add_bot", N_("Add an AI player to the lobby")),
    ("leave", N_("Leave the game (the AI takes your seat)")),
    ("timer", N_("Set the turn timer (admins)")),
    ("settings", N_("Settings of this chat (admins)")),
    ("stats", N_("Your statistics (reply: someone else's)")),
    ("top", N_("Best players of this chat")),
    ("kick", N_("Reply: the AI takes that player's seat (creator or admin)")),
    ("notify_me", N_("Tell me privately when the next game opens")),
    ("rules", N_("Rules of the game")),
    ("help", N_("How to play with this bot")),
)
PRIVATE_COMMANDS = (
    ("start", N_("Let the bot send you your cards")),
    ("language", N_("Choose your language")),
    ("stats", N_("Your statistics (reply: someone else's)")),
    ("forget_me", N_("Delete everything the bot stored about you")),
    ("rules", N_("Rules of the game")),
    ("help", N_("How to play with this bot")),
)
COMMANDS = {"group": GROUP_COMMANDS, "private": PRIVATE_COMMANDS}


def build_application(settings: Settings, request: BaseRequest | None = None) -> Application:
    """The bot's Application: long polling or webhook is chosen by the caller (``__main__``).

    The store is connected in ``post_init`` (on the Application's own event loop); the timer
    loop and a sync of every live game start there too. ``request``: the HTTP layer for every
    Bot API call (default PTB's httpx; the benchmark passes an in-process fake).
    """
    # Telegram's limits (Bot FAQ: about 30 messages a second overall, 20 a minute per group),
    # kept in Redis so they hold across every process of the bot (tgbot/ratelimit.py).
    limiter = RedisRateLimiter(
        group_max=settings.rate_group_max,
        group_period=settings.rate_group_period,
        overall_max=settings.rate_global_max,
        overall_period=settings.rate_global_period,
    )
    builder = Application.builder()
    if request is not None:
        builder = builder.request(request).get_updates_request(request)
    app = (
        builder
        .token(settings.bot_token)
        .base_url(settings.telegram_base_url)
        .base_file_url(settings.base_file_url)
        .defaults(Defaults(parse_mode=ParseMode.HTML, do_quote=False, link_preview_options=LinkPreviewOptions(is_disabled=True)))
        .rate_limiter(limiter)
        .post_init(_post_init)
        .post_stop(_post_stop)
        .post_shutdown(_post_shutdown)
        .build()
    )
    app.bot_data["settings"] = settings
    app.add_handler(TypeHandler(Update, handlers.dedup), group=-1)
    app.add_handler(CommandHandler("start_game", handlers.start_game))
    app.add_handler(CommandHandler("stop_game", handlers.stop_game))
    app.add_handler(CommandHandler("board", handlers.board_command))
    app.add_handler(CommandHandler("start", handlers.start_private))
    app.add_handler(CommandHandler("help", handlers.help_command))
    app.add_handler(CommandHandler("rules", handlers.rules_command))
    app.add_handler(CommandHandler("language", handlers.language_command))
    app.add_handler(CommandHandler("add_bot", handlers.add_bot_command))
    app.add_handler(CommandHandler("leave", handlers.leave_command))
    app.add_handler(CommandHandler("timer", handlers.timer_command))
    app.add_handler(CommandHandler("settings", handlers.settings_command))
    app.add_handler(CommandHandler("stats", handlers.stats_command))
    app.add_handler(CommandHandler("top", handlers.top_command))
    app.add_handler(CommandHandler("kick", handlers.kick_command))
    app.add_handler(CommandHandler("notify_me", handlers.notify_command))
    app.add_handler(CommandHandler("forget_me", handlers.forget_command))
    app.add_handler(ChatMemberHandler(handlers.member_left, ChatMemberHandler.CHAT_MEMBER))
    app.add_handler(CallbackQueryHandler(handlers.on_tap))
    app.add_handler(ChatMemberHandler(handlers.on_my_member, ChatMemberHandler.MY_CHAT_MEMBER))
    app.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, handlers.on_migrate))
    app.add_handler(MessageHandler(filters.StatusUpdate.LEFT_CHAT_MEMBER, handlers.on_left_member))
    app.add_error_handler(handlers.on_error)
    return app


async def _post_init(app: Application) -> None:
    settings: Settings = app.bot_data["settings"]
    redis = await connect(settings.redis_url)
    store = Store(redis)
    app.bot.rate_limiter.attach(redis)
    me = app.bot
    username = me.username or ""
    svc = handlers.Services(settings, store, Syncer(app.bot, store, lambda: username), username)
    app.bot_data["svc"] = svc
    await _register_commands(app)
    live = await store.live_games()
    for gid in live:
        svc.syncer.request(gid)
    app.bot_data["timer_task"] = asyncio.create_task(timers.run(store, svc.syncer), name="timers")
    log.info("bot @%s ready: %d game(s) to resume", username, len(live))


#: Seconds a stopping bot gives the view syncs in flight to finish their calls (PTB calls
#: post_stop while the Bot API client is still open); a lane sleeping out a rate limit is not
#: waited for: the next start syncs every live game.
STOP_GRACE = 3.0


async def _stop_background(app: Application, grace: float) -> None:
    """Stop the timer loop and the view syncs (:meth:`Syncer.close`); idempotent."""
    task = app.bot_data.pop("timer_task", None)
    if task is not None:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    svc = app.bot_data.get("svc")
    if svc is not None:
        await svc.syncer.close(grace)


async def _post_stop(app: Application) -> None:
    await _stop_background(app, STOP_GRACE)


async def _post_shutdown(app: Application) -> None:
    await _stop_background(app, 0.0)  # (when post_stop did not run: tests, a failed start)
    svc = app.bot_data.get("svc")
    if svc is not None:
        await svc.store.redis.aclose()


async def _register_commands(app: Application) -> None:
    """setMyCommands for groups and private chats, in every supported language (the default
    set in the default language)."""
    for kind, scope in (("group", BotCommandScopeAllGroupChats()), ("private", BotCommandScopeAllPrivateChats())):
        for lang in (None, *LANGUAGES):
            tr = translator(lang)
            commands = [BotCommand(cmd, tr.t(desc)) for cmd, desc in COMMANDS[kind]]
            await app.bot.set_my_commands(commands, scope=scope, language_code=lang)
