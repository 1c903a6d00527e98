"""What the bot stores beside the game tables: chat settings, user records, lobby notifications,
the live set, a group's upgrade, and a game's outbox, record, once-marks and Telegram bookkeeping."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tgbot.storage.keys import ChatField, GameField, Keys, Seating, UserField, once_field
from tgbot.storage.redis import RedisClient

#: Seconds the record "group X became supergroup Y" is kept (longer than a finished game).
CHAT_MOVED_TTL = 30 * 24 * 3600

# Delete the string KEYS[1] if it holds ARGV[1].
DELETE_IF_EQUAL = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
return 0
"""

_TAKE = """
local members = redis.call('SMEMBERS', KEYS[1])
redis.call('DEL', KEYS[1])
return members
"""


@dataclass(frozen=True)
class ChatSettings:
    """A chat's settings (``None``: the default): ``lang`` the group's language, ``variant`` a new
    lobby's, ``seating`` a :class:`~tgbot.storage.keys.Seating`. The turn timer: :meth:`Records.chat_turn_timeout`."""

    lang: str | None = None
    variant: str | None = None
    seating: str | None = None

    @property
    def shuffle(self) -> bool:
        """Whether seats are shuffled when the game starts."""
        return self.seating == Seating.SHUFFLE

    @classmethod
    def from_hash(cls, raw: dict[str, str]) -> ChatSettings:
        """From the stored hash; unknown fields are ignored."""
        return cls(*(raw.get(field) or None for field in (ChatField.LANGUAGE, ChatField.VARIANT, ChatField.SEATING)))


def _split(fields: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Fields to set and fields to delete (those given as ``None``)."""
    return {k: v for k, v in fields.items() if v is not None}, [k for k, v in fields.items() if v is None]


class Records:
    """The records over one redis-py asyncio client (``decode_responses=True``)."""

    def __init__(self, redis: RedisClient, prefix: str = "cheat") -> None:
        # (typed Any: redis-py types replies bytes | str; with decode_responses=True they are str)
        self.redis: Any = redis
        self.keys = Keys(prefix)
        self._del_if = redis.register_script(DELETE_IF_EQUAL)

    async def release_chat(self, chat_id: int, thread_id: int | None, game_id: str) -> None:
        """Drop the chat's index if it still points at ``game_id``."""
        await self._del_if(keys=[self.keys.chat(chat_id, thread_id)], args=[game_id])

    async def live_games(self) -> list[str]:
        """Ids of the games that may be live or still have something to show (check each)."""
        return sorted(await self.redis.smembers(self.keys.live()))

    async def forget_live(self, game_id: str) -> None:
        """Drop an ended game from the live set once everything of it has been shown."""
        await self.redis.srem(self.keys.live(), game_id)

    async def chat_moved_to(self, chat_id: int) -> int | None:
        """The supergroup that group ``chat_id`` became (:meth:`set_chat_moved`), or ``None``."""
        raw = await self.redis.get(self.keys.chat_moved(chat_id))
        return int(raw) if raw else None

    async def set_chat_moved(self, old_chat_id: int, new_chat_id: int) -> None:
        """Record that group ``old_chat_id`` became supergroup ``new_chat_id``."""
        await self.redis.set(self.keys.chat_moved(old_chat_id), str(new_chat_id), ex=CHAT_MOVED_TTL)

    # -- users -------------------------------------------------------------------------------

    async def set_dm(self, user_id: int, reachable: bool, telegram_language: str | None = None) -> None:
        """Record whether the bot can write to the user privately, and their Telegram app's language
        when an update of theirs told it (``language_code``)."""
        fields: dict[str, str | int] = {UserField.REACHABLE: int(reachable)}
        if telegram_language:
            fields[UserField.TELEGRAM_LANGUAGE] = telegram_language
        await self.redis.hset(self.keys.user(user_id), mapping=fields)

    async def can_dm(self, user_id: int) -> bool:
        """Whether the user has started the bot (and not blocked it since, as far as known)."""
        return await self.redis.hget(self.keys.user(user_id), UserField.REACHABLE) == "1"

    async def user_lang(self, user_id: int) -> str | None:
        """The user's own language for private messages (``/language`` in private), or ``None``."""
        return await self.redis.hget(self.keys.user(user_id), UserField.LANGUAGE) or None

    async def dm_languages(self, user_id: int) -> tuple[str | None, str | None] | None:
        """The user's own language and their Telegram app's as last recorded, or ``None`` when the
        bot may not write to them (:meth:`can_dm`); one round trip."""
        reachable, own, telegram = await self.redis.hmget(self.keys.user(user_id), list(UserField))
        return (own or None, telegram or None) if reachable == "1" else None

    async def set_user_lang(self, user_id: int, lang: str) -> None:
        """Record the user's own language for private messages."""
        await self.redis.hset(self.keys.user(user_id), UserField.LANGUAGE, lang)

    # -- chat settings -----------------------------------------------------------------------

    async def chat_settings(self, chat_id: int) -> ChatSettings:
        """The chat's settings (defaults when none were set)."""
        return ChatSettings.from_hash(await self.redis.hgetall(self.keys.chat_settings(chat_id)))

    async def set_chat_settings(self, chat_id: int, **fields: str | None) -> ChatSettings:
        """Change some of the chat's settings (``None`` resets a field); returns them all."""
        keep, drop = _split(
            {ChatField.LANGUAGE if name == "lang" else ChatField(name): value for name, value in fields.items()}
        )
        if keep:
            await self.redis.hset(self.keys.chat_settings(chat_id), mapping=keep)
        if drop:
            await self.redis.hdel(self.keys.chat_settings(chat_id), *drop)
        return await self.chat_settings(chat_id)

    async def chat_turn_timeout(self, chat_id: int, default: float) -> float:
        """The chat's turn timer in seconds, or ``default`` when the chat never set one."""
        raw = await self.redis.hget(self.keys.chat_settings(chat_id), ChatField.TURN_TIMER)
        try:
            return float(raw) if raw else default
        except ValueError:
            return default

    async def set_chat_turn_timeout(self, chat_id: int, seconds: float) -> None:
        """Store the chat's turn timer (seconds; the caller checks the allowed range)."""
        await self.redis.hset(self.keys.chat_settings(chat_id), ChatField.TURN_TIMER, str(int(seconds)))

    async def move_chat_settings(self, old_chat_id: int, new_chat_id: int) -> dict[str, str]:
        """Copy group ``old_chat_id``'s settings to supergroup ``new_chat_id`` (the new chat's own
        kept: HSETNX), then drop the old ones; returns the fields found in the old hash."""
        old_key, new_key = self.keys.chat_settings(old_chat_id), self.keys.chat_settings(new_chat_id)
        fields = await self.redis.hgetall(old_key)
        if not fields:
            return {}
        pipe = self.redis.pipeline(transaction=False)
        for name, value in fields.items():
            pipe.hsetnx(new_key, name, value)
        await pipe.execute()
        await self.redis.hdel(old_key, *fields)
        return fields

    # -- lobby notifications -----------------------------------------------------------------

    async def want_notify(self, chat_id: int, user_id: int) -> bool:
        """Ask to be told when the chat's next lobby opens; False if already asked."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.sadd(self.keys.notify(chat_id), user_id)
        pipe.sadd(self.keys.user_notify(user_id), chat_id)
        added, _ = await pipe.execute()
        return bool(added)

    async def take_notify(self, chat_id: int) -> list[int]:
        """Take and clear, atomically, the users to tell that a lobby opened: each told once."""
        return sorted(int(x) for x in await self.redis.eval(_TAKE, 1, self.keys.notify(chat_id)))  # type: ignore[misc]

    async def move_notify(self, old_chat_id: int, new_chat_id: int) -> int:
        """Move group ``old_chat_id``'s lobby notifications and their askers' index entries to
        ``new_chat_id`` (copies first, then removes exactly those copied); returns the users moved."""
        users = await self.redis.smembers(self.keys.notify(old_chat_id))
        if not users:
            return 0
        pipe = self.redis.pipeline(transaction=False)
        pipe.sadd(self.keys.notify(new_chat_id), *users)
        for user_id in users:
            pipe.sadd(self.keys.user_notify(user_id), new_chat_id)
        await pipe.execute()
        pipe = self.redis.pipeline(transaction=False)
        for user_id in users:
            pipe.srem(self.keys.user_notify(user_id), old_chat_id)
        pipe.srem(self.keys.notify(old_chat_id), *users)
        await pipe.execute()
        return len(users)

    async def forget_notify(self, user_id: int) -> None:
        """Drop the user from every lobby notification they asked for (/forget_me)."""
        asked = await self.redis.smembers(self.keys.user_notify(user_id))
        if not asked:
            return
        pipe = self.redis.pipeline(transaction=False)
        for chat in asked:
            pipe.srem(self.keys.notify(chat), user_id)
        pipe.delete(self.keys.user_notify(user_id))
        await pipe.execute()

    # -- a game's records --------------------------------------------------------------------

    async def tg_get(self, game_id: str) -> dict[str, str]:
        """The game's Telegram bookkeeping (message ids, shown-content hashes)."""
        return await self.redis.hgetall(self.keys.telegram(game_id))

    async def tg_set(self, game_id: str, **fields: Any) -> None:
        """Record Telegram bookkeeping fields (``None`` deletes a field)."""
        await self.tg_set_many({game_id: fields})

    async def tg_set_many(self, changes: dict[str, dict[str, Any]]) -> None:
        """:meth:`tg_set` for several games in one round trip (``{game id: fields}``)."""
        only = next(iter(changes.items())) if len(changes) == 1 else None
        if only and only[1] and None not in only[1].values():  # the usual case: one command
            await self.redis.hset(self.keys.telegram(only[0]), mapping=only[1])
            return
        pipe = self.redis.pipeline(transaction=False)
        for game_id, fields in changes.items():
            keep, drop = _split(fields)
            if keep:
                pipe.hset(self.keys.telegram(game_id), mapping=keep)
            if drop:
                pipe.hdel(self.keys.telegram(game_id), *drop)
        await pipe.execute()

    async def outbox(self, game_id: str) -> list[tuple[str, dict[str, Any]]]:
        """The announcements still to post, oldest first, as (raw, decoded)."""
        return [(raw, json.loads(raw)) for raw in await self.redis.lrange(self.keys.outbox(game_id), 0, -1)]

    async def outbox_drop(self, game_id: str, raws: list[str], telegram: dict[str, str] | None = None) -> None:
        """Drop these announcements wherever they are in the outbox (each is unique: its ``seq``);
        ``telegram``: bookkeeping fields written in the same round trip."""
        if not raws:
            return
        pipe = self.redis.pipeline(transaction=False)
        for raw in raws:
            pipe.lrem(self.keys.outbox(game_id), 1, raw)
        if telegram:
            pipe.hset(self.keys.telegram(game_id), mapping=telegram)
        await pipe.execute()

    async def outbox_clear(self, game_id: str) -> None:
        """Drop every announcement still to post (the group can no longer be written to)."""
        await self.redis.delete(self.keys.outbox(game_id))

    async def record(self, game_id: str) -> tuple[list[str] | None, list[dict[str, Any]]]:
        """The game's deal (compact hands) and its action log."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.hget(self.keys.game(game_id), GameField.DEAL)
        pipe.lrange(self.keys.log(game_id), 0, -1)
        deal, actions = await pipe.execute()
        return (json.loads(deal) if deal else None), [json.loads(a) for a in actions]

    async def marked(self, game_id: str, what: str, user_id: int) -> bool:
        """Whether ``what`` was marked for ``user_id`` in the game (:meth:`first_time`)."""
        return bool(await self.redis.hexists(self.keys.game(game_id), once_field(what, user_id)))

    async def first_time(self, game_id: str, what: str, user_id: int) -> bool:
        """True the first time ``what`` is marked for ``user_id`` in the game, False ever after."""
        return bool(await self.redis.hsetnx(self.keys.game(game_id), once_field(what, user_id), 1))
