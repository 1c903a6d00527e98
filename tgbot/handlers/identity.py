"""Who sent an update and where: an anonymous admin (GroupAnonymousBot, ``sender_chat`` the group)
is never seated nor a creator, a channel is no admin, a forum topic's implicit reply is no reply
(https://core.telegram.org/bots/api#message); admin and membership checks by getChatMember."""

from __future__ import annotations

import logging

from telegram import Update, User
from telegram.constants import ChatMemberStatus
from telegram.error import TelegramError
from telegram.ext import ContextTypes

from tgbot.game.table import Answer, RefusedError, Seat, Table

log = logging.getLogger(__name__)

#: The user id anonymous group admins send messages as (GroupAnonymousBot).
ANONYMOUS_ADMIN = 1087968824


def is_anonymous_admin(update: Update) -> bool:
    """The update is a message of an anonymous admin of its own chat (``sender_chat`` is the
    chat). A channel posting in a linked group is not."""
    message, chat = update.effective_message, update.effective_chat
    if message is None or chat is None or message.sender_chat is None:
        return False
    return message.sender_chat.id == chat.id


def actor_id(update: Update) -> int:
    """The user id acting: ``0`` for an anonymous admin or a channel, else the sender's id."""
    message, user = update.effective_message, update.effective_user
    on_behalf = message is not None and message.sender_chat is not None  # an anonymous admin or a channel
    if on_behalf or user is None or user.id == ANONYMOUS_ADMIN:
        return 0
    return user.id


async def is_admin(context: ContextTypes.DEFAULT_TYPE, chat_id: int, update: Update) -> bool:
    """Whether the sender is an admin of ``chat_id`` (anonymous admins included). A failed
    getChatMember counts as "no" (fail closed)."""
    if is_anonymous_admin(update) and update.effective_chat is not None and update.effective_chat.id == chat_id:
        return True
    user_id = actor_id(update)
    if not user_id:
        return False
    try:
        member = await context.bot.get_chat_member(chat_id, user_id)
    except TelegramError:
        return False
    return member.status in (ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.OWNER)


async def may_manage(context: ContextTypes.DEFAULT_TYPE, table: Table, update: Update) -> tuple[int, bool]:
    """(acting user id, is admin) for managing ``table``; no admin check (a Bot API call) for
    its creator."""
    user_id = actor_id(update)
    if user_id and user_id == table.creator:
        return user_id, False
    return user_id, await is_admin(context, table.chat_id, update)


def seat_for(update: Update) -> Seat:
    """The sender's seat. Raises ``RefusedError``: ``ANONYMOUS`` for an anonymous admin or a
    channel (no private chat for the cards), ``NOT_ALLOWED`` for a bot."""
    user = update.effective_user
    if user is None or not actor_id(update):
        raise RefusedError(Answer.ANONYMOUS)
    if user.is_bot:
        raise RefusedError(Answer.NOT_ALLOWED)
    return Seat(user.id, user.full_name or user.username or "")


def place(update: Update) -> tuple[int, int | None]:
    """(chat id, forum topic id or ``None`` in General and in non-forum chats) of the update."""
    chat, message = update.effective_chat, update.effective_message
    assert chat is not None
    thread = message.message_thread_id if message is not None and message.is_topic_message else None
    return chat.id, thread


def replied_user(update: Update) -> User | None:
    """The user the message explicitly replies to (/kick, /stats), or ``None``; the implicit
    reply to a forum topic's creation message is no reply, nor is a message sent on behalf of a
    chat (a channel's automatic forward comes from "Telegram", a persona from Channel_Bot)."""
    message = update.effective_message
    replied = message.reply_to_message if message is not None else None
    if message is None or replied is None or replied.from_user is None or replied.forum_topic_created is not None:
        return None
    if replied.sender_chat is not None:  # a channel's post or persona, an anonymous admin: no person
        return None
    if (
        message.is_topic_message
        and message.message_thread_id is not None
        and replied.message_id == message.message_thread_id
    ):
        return None
    return replied.from_user


def departed_user(update: Update) -> User | None:
    """The person an update says left its chat (a ``chat_member`` update to a status that is
    no membership, or a ``left_chat_member`` message), or ``None``."""
    if update.chat_member is not None:
        new = update.chat_member.new_chat_member
        return new.user if is_gone(new) else None
    message = update.effective_message
    return message.left_chat_member if message is not None else None


def is_gone(member: object) -> bool:
    """A ChatMember that is no member: left, kicked, or restricted with ``is_member`` false
    (https://core.telegram.org/bots/api#chatmemberrestricted)."""
    status = getattr(member, "status", None)
    if status in (ChatMemberStatus.LEFT, ChatMemberStatus.BANNED):
        return True
    return status == ChatMemberStatus.RESTRICTED and not getattr(member, "is_member", True)


async def telegram_says_gone(context: ContextTypes.DEFAULT_TYPE, chat_id: int, user_id: int) -> bool:
    """Whether getChatMember says ``user_id`` left ``chat_id`` (:func:`is_gone`). A defence in
    depth: the proof of membership is the person's tap in the group (``model.offer_link``), and
    getChatMember about others is sure to work for admin bots only, so a failed call is False."""
    try:
        member = await context.bot.get_chat_member(chat_id, user_id)
    except TelegramError as error:
        log.info("membership of %s in %s not checked: %s", user_id, chat_id, error)
        return False
    return is_gone(member)
