"""Building the PTB :class:`~telegram.ext.Application`: handlers, defaults, rate limiter.

The Application has no Updater: updates reach it from the stored stream (:mod:`tgbot.ingest.stream`,
:mod:`tgbot.process.runner`), one :meth:`~telegram.ext.Application.process_update` each.
"""

from __future__ import annotations

import logging

from telegram import LinkPreviewOptions
from telegram.constants import ParseMode
from telegram.request import BaseRequest
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    ChatMemberHandler,
    CommandHandler,
    MessageHandler,
    Defaults,
    filters,
)

from tgbot.handlers import commands as handlers
from tgbot.handlers.budget import ReplyGate
from tgbot.i18n import N_
from tgbot.process.ratelimit import RateLimiter
from tgbot.settings import Settings

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
    """The bot's Application, without an Updater (:mod:`tgbot.process.runner` feeds it). ``request``: the
    HTTP layer for every Bot API call (default PTB's httpx; the benchmark passes a fake)."""
    # Telegram's limits (Bot FAQ: about 30 messages a second overall, 20 a minute per group),
    # kept by the one active process (tgbot/process/ratelimit.py).
    limiter = RateLimiter(
        group_max=settings.rate_group_max,
        group_period=settings.rate_group_period,
        overall_max=settings.rate_global_max,
        overall_period=settings.rate_global_period,
    )
    builder = Application.builder().updater(None)
    if request is not None:
        builder = builder.request(request).get_updates_request(request)
    app = (
        builder
        .token(settings.bot_token)
        .base_url(settings.telegram_base_url)
        .base_file_url(settings.base_file_url)
        .defaults(Defaults(parse_mode=ParseMode.HTML, do_quote=False, link_preview_options=LinkPreviewOptions(is_disabled=True)))
        .rate_limiter(limiter)
        .build()
    )
    app.bot_data["settings"] = settings
    # New messages only: an edited message never runs a command again.
    new = filters.UpdateType.MESSAGE
    # Before a group command's own handler: who asked what, so its reply in the group is
    # bounded and never at a running game's expense (tgbot/handlers/budget.py).
    app.add_handler(MessageHandler(filters.COMMAND & filters.ChatType.GROUPS & new, ReplyGate().check), group=-1)
    for command, callback in (
        ("start_game", handlers.start_game), ("stop_game", handlers.stop_game), ("board", handlers.board_command),
        ("start", handlers.start_private), ("help", handlers.help_command), ("rules", handlers.rules_command),
        ("language", handlers.language_command), ("add_bot", handlers.add_bot_command), ("leave", handlers.leave_command),
        ("timer", handlers.timer_command), ("settings", handlers.settings_command), ("stats", handlers.stats_command),
        ("top", handlers.top_command), ("kick", handlers.kick_command), ("notify_me", handlers.notify_command),
        ("forget_me", handlers.forget_command),
    ):
        app.add_handler(CommandHandler(command, callback, filters=new))
    app.add_handler(ChatMemberHandler(handlers.member_left, ChatMemberHandler.CHAT_MEMBER))
    app.add_handler(CallbackQueryHandler(handlers.on_tap))
    app.add_handler(ChatMemberHandler(handlers.on_my_member, ChatMemberHandler.MY_CHAT_MEMBER))
    app.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, handlers.on_migrate))
    app.add_handler(MessageHandler(filters.StatusUpdate.LEFT_CHAT_MEMBER, handlers.on_left_member))
    app.add_error_handler(handlers.on_error)
    return app
