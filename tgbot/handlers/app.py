"""The PTB Application without an Updater (updates come from the stored stream): one
CallbackQueryHandler per tap action, commands on new messages only, the typed context, the limiter."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from telegram import BotCommand, BotCommandScopeAllGroupChats, BotCommandScopeAllPrivateChats, LinkPreviewOptions
from telegram.constants import ParseMode
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    ChatMemberHandler,
    CommandHandler,
    ContextTypes,
    Defaults,
    MessageHandler,
    filters,
)
from telegram.request import BaseRequest

from tgbot.codec import Op, pattern
from tgbot.handlers import admin, chat, language, lobby, play, private
from tgbot.handlers.common import TapAction, answer_unknown_tap, answering, on_error
from tgbot.handlers.context import BotContext
from tgbot.i18n import LANGUAGES, N_, translator
from tgbot.settings import Settings
from tgbot.sync.messages import SEND_READ_TIMEOUT
from tgbot.sync.ratelimit import RateLimiter

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
    ("stats", N_("Your statistics")),  # no reply to someone else's message in a private chat
    ("forget_me", N_("Delete everything the bot stored about you")),
    ("rules", N_("Rules of the game")),
    ("help", N_("How to play with this bot")),
)
COMMANDS = {"group": GROUP_COMMANDS, "private": PRIVATE_COMMANDS}


#: Each tap's action, by op (one CallbackQueryHandler each); an action checks who may press.
TAPS: tuple[tuple[TapAction, tuple[Op, ...]], ...] = (
    (lobby.join, (Op.JOIN,)),
    (lobby.leave, (Op.LEAVE,)),
    (lobby.quit_game, (Op.QUIT,)),
    (lobby.manage, (Op.START, Op.CANCEL, Op.VARIANT, Op.ADDBOT, Op.RMBOT)),
    (lobby.play_again, (Op.AGAIN,)),
    (play.show_panel, (Op.PICK, Op.REFRESH)),
    (play.act, (Op.PLAY, Op.CHALLENGE, Op.BELIEVE)),
    (play.take_back, (Op.TAKEBACK,)),
    (play.send_record, (Op.REC,)),
    (admin.confirm_stop, (Op.STOPOK,)),
    (admin.set_timer, (Op.TIMER,)),
    (admin.apply_setting, (Op.SETTINGS,)),
    (language.set_language, (Op.LANG,)),
)

#: ``/start j<game id>``: a join deep link (:func:`lobby.join`).
JOIN_LINK = filters.Regex(rf"^/start(@\w+)?\s+{lobby.JOIN_PAYLOAD}\S")


def build_application(
    settings: Settings, may_call: Callable[[], Awaitable[bool]] | None = None, request: BaseRequest | None = None
) -> Application[Any, Any, Any, Any, Any, Any]:
    """The bot's Application, without an Updater. ``may_call``: the rate limiter's lease check;
    ``request``: the HTTP layer of every Bot API call (default PTB's httpx)."""
    limiter = RateLimiter(
        group_max=settings.rate_group_max,
        group_period=settings.rate_group_period,
        overall_max=settings.rate_global_max,
        overall_period=settings.rate_global_period,
        private_max=settings.rate_private_max,
        private_period=settings.rate_private_period,
        may_call=may_call,
    )
    builder = Application.builder().updater(None)
    # an answer Telegram holds (slow mode) is awaited, not taken for a lost call and repeated
    builder = (
        builder.request(request).get_updates_request(request)
        if request is not None
        else builder.read_timeout(SEND_READ_TIMEOUT)
    )
    defaults = Defaults(
        parse_mode=ParseMode.HTML, do_quote=False, link_preview_options=LinkPreviewOptions(is_disabled=True)
    )
    application = (
        builder.token(settings.bot_token)
        .base_url(settings.telegram_base_url)
        .base_file_url(settings.base_file_url)
        .defaults(defaults)
        .rate_limiter(limiter)
        .context_types(ContextTypes(context=BotContext))
        .build()
    )
    _add_commands(application)
    _add_taps_and_members(application)
    application.add_error_handler(on_error)
    return application


def _add_taps_and_members(application: Application[Any, Any, Any, Any, Any, Any]) -> None:
    """The taps' handlers (by their data's pattern) and the chat and member updates' handlers."""
    for action, ops in TAPS:
        application.add_handler(CallbackQueryHandler(answering(action), pattern=pattern(*ops)))
    application.add_handler(CallbackQueryHandler(answer_unknown_tap))
    application.add_handler(ChatMemberHandler(chat.member_left, ChatMemberHandler.CHAT_MEMBER))
    application.add_handler(ChatMemberHandler(chat.on_my_member, ChatMemberHandler.MY_CHAT_MEMBER))
    application.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, chat.on_migrate))
    application.add_handler(MessageHandler(filters.StatusUpdate.LEFT_CHAT_MEMBER, chat.on_left_member))


def _add_commands(application: Application[Any, Any, Any, Any, Any, Any]) -> None:
    """The commands' handlers, new messages only; a group's command in private gets a hint."""
    new = filters.UpdateType.MESSAGE
    groups, private_chat = filters.ChatType.GROUPS & new, filters.ChatType.PRIVATE & new
    for command, callback, where in (
        ("start", private.join_by_link, private_chat & JOIN_LINK),
        ("start", private.start_private, private_chat),
        ("start", private.help_command, groups),
        ("start_game", lobby.start_game, groups),
        ("timer", admin.timer_command, groups),
        ("settings", admin.settings_command, groups),
        ("notify_me", private.notify_command, groups),
        (["start_game", "timer", "settings", "notify_me"], private.group_only, private_chat),
        ("stop_game", admin.stop_game, new),
        ("board", play.board_command, new),
        ("help", private.help_command, new),
        ("rules", private.rules_command, new),
        ("language", language.language_command, new),
        ("add_bot", lobby.add_bot_command, new),
        ("leave", lobby.leave_command, new),
        ("stats", private.stats_command, new),
        ("top", private.top_command, new),
        ("kick", admin.kick_command, new),
        ("forget_me", private.forget_command, new),
    ):
        application.add_handler(CommandHandler(command, callback, filters=where))


async def register_commands(application: Application[Any, Any, Any, Any, Any, Any]) -> None:
    """setMyCommands for groups and private chats, in every supported language (the default
    set in the default language)."""
    for kind, scope in (("group", BotCommandScopeAllGroupChats()), ("private", BotCommandScopeAllPrivateChats())):
        for code in (None, *LANGUAGES):
            translated = translator(code)
            commands = [BotCommand(command, translated.t(description)) for command, description in COMMANDS[kind]]
            await application.bot.set_my_commands(commands, scope=scope, language_code=code)
