"""What a person asks for themselves: /start (and the join deep link), /help, /rules, /stats,
/top, /notify_me, /forget_me. In a group with a running game these answer privately."""

from __future__ import annotations

from collections.abc import Callable

from telegram import Update
from telegram.constants import ChatType

from tgbot import i18n
from tgbot.handlers import budget
from tgbot.handlers.chat import set_reachable
from tgbot.handlers.context import BotContext
from tgbot.handlers.identity import actor_id, replied_user
from tgbot.handlers.lobby import join_offered, seat_by_link
from tgbot.render.announcements import note
from tgbot.render.menus import help_text, private_hint, rules, stats_text, top_text
from tgbot.render.text import group_title
from tgbot.storage import stats

Text = Callable[[str], str]


async def start_private(update: Update, context: BotContext) -> None:
    """``/start`` in private chat: the bot may now write to this person."""
    services, user = context.services, update.effective_user
    assert user is not None
    await set_reachable(services, user.id, True, user.language_code)
    if await join_offered(update, context):  # a join link that arrived without its payload
        return
    translator = i18n.translator(await context.language())
    await context.reply(
        translator.t(
            "Hi! I run «I doubt it» card games in groups. Add me to a group and send /start_game there; "
            "I will send your cards here. /rules explains the game."
        )
        + "\n\n"
        + translator.t("To join a game that is open, tap «Join» under its lobby in the group."),
    )


async def join_by_link(update: Update, context: BotContext) -> None:
    """``/start j<game id>``: seat the sender if the lobby offered them the link
    (:func:`lobby.seat_by_link`)."""
    services, user = context.services, update.effective_user
    assert user is not None and context.args
    await set_reachable(services, user.id, True, user.language_code)
    await seat_by_link(update, context, context.args[0][1:])


async def group_only(update: Update, context: BotContext) -> None:
    """A group's command sent in private chat: how to use it."""
    translator = i18n.translator(await context.language())
    await context.reply(translator.t("Add me to a group and send /start_game there."))


async def help_command(update: Update, context: BotContext) -> None:
    """``/help`` (and ``/start`` in a group): how to use the bot (:func:`_private_text`)."""
    await _private_text(update, context, help_text)


async def rules_command(update: Update, context: BotContext) -> None:
    """``/rules``: the rules of the game (:func:`_private_text`)."""
    await _private_text(update, context, rules)


async def _private_text(update: Update, context: BotContext, text: Text) -> None:
    """Send ``text`` in the person's language, always privately (in a group it would eat the
    game's message budget). The group gets a one-line note when no game is running there
    (the text was sent, or how to let the bot write privately)."""
    services, chat, user = context.services, update.effective_chat, update.effective_user
    assert chat is not None
    private = chat.type == ChatType.PRIVATE
    language = await context.language(group_id=None if private else chat.id)
    if private:
        await context.reply(text(language))
        return
    sent = user is not None and bool(actor_id(update)) and await context.tell(user.id, text(language))
    # only a real block (a 403 recorded it) or a bot never started is "I can't write to you"
    reachable = sent or (user is not None and bool(actor_id(update)) and await services.store.records.can_dm(user.id))
    if not await budget.game_running(services.store, chat.id):  # else the group's budget is the game's
        await context.reply(private_hint(await context.group_language(chat.id), sent, reachable))


async def _answer_quietly(update: Update, context: BotContext, text: Text) -> None:
    """Answer in the chat, except in a group with a running game: then privately (as /rules)."""
    services, chat = context.services, update.effective_chat
    assert chat is not None
    if chat.type == ChatType.PRIVATE:
        await context.reply(text(await context.language()))
    elif await budget.game_running(services.store, chat.id):
        await _private_text(update, context, text)
    else:
        await context.reply(text(await context.group_language(chat.id)))


async def stats_command(update: Update, context: BotContext) -> None:
    """``/stats``: the sender's figures, or (as a reply) the replied-to person's."""
    target = replied_user(update) or update.effective_user
    if target is None or target.is_bot:
        return
    totals, places = await stats.totals(context.services.store.records, target.id)
    await _answer_quietly(update, context, lambda language: stats_text(language, target.full_name, totals, places))


async def top_command(update: Update, context: BotContext) -> None:
    """``/top``: the chat's leaderboard (most wins; at least 3 games to be listed)."""
    assert update.effective_chat is not None
    rows = await stats.top(context.services.store.records, update.effective_chat.id)
    await _answer_quietly(update, context, lambda language: top_text(language, rows, stats.MIN_TOP_GAMES))


async def notify_command(update: Update, context: BotContext) -> None:
    """``/notify_me`` in a group: the sender is told privately when the next lobby opens there."""
    services, chat, user = context.services, update.effective_chat, update.effective_user
    assert chat is not None
    language = await context.language(group_id=chat.id)
    if user is None or not actor_id(update):
        await context.reply(i18n.translator(language).t("Add me to a group and send /start_game there."))
    elif not await services.store.records.can_dm(user.id):
        await context.reply(private_hint(language, False))
    else:
        await services.store.records.want_notify(chat.id, user.id)
        if await context.hush() is budget.Hush.GAME:  # a bystander of a running game: privately
            await context.tell(user.id, note("notify_on_private", language, group=group_title(chat.title or "")))
        else:
            await context.reply(note("notify_on", language))


async def forget_command(update: Update, context: BotContext) -> None:
    """``/forget_me`` in private chat: delete everything stored about the sender (statistics,
    leaderboard entries, preferences, reachability, notifications)."""
    services, chat, user = context.services, update.effective_chat, update.effective_user
    assert chat is not None and user is not None
    language = await context.language()
    if chat.type != ChatType.PRIVATE:
        await context.reply(note("forget_private", language))
        return
    await stats.forget_user(services.store.records, user.id)
    await context.reply(note("forgotten", language))
