"""The Redis key and field layout: every key and hash field the bot stores is named here. Keys
start with ``cheat:<bot id>``; a hash tag puts the keys one Lua script changes together into one
Cluster slot: ``{g<game>}`` a game's, ``{s<bot>}`` the statistics, ``{b<bot>}`` the process's own
(lease, ingest). Older layouts: :mod:`tgbot.storage.migrate`."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

#: The first segment of every key.
ROOT = "cheat"


def bot_prefix(bot_id: str) -> str:
    """The prefix of every key of bot ``bot_id``: ``cheat:<bot id>``."""
    return f"{ROOT}:{bot_id}"


class GameField(StrEnum):
    """Fields of a game's hash (:meth:`Keys.game`), besides its once-marks (:func:`once_field`)."""

    VERSION = "version"
    TABLE = "table"  # the table's JSON
    DEAL = "deal"  # the dealt hands, compact
    EPOCH = "epoch"  # the fencing epoch of its last commit
    COUNTED = "counted"  # its statistics were counted


def once_field(what: str, user_id: int) -> str:
    """The game hash's field marking that ``what`` was done once for ``user_id``."""
    return f"once:{what}:{user_id}"


class UserField(StrEnum):
    """Fields of a user's hash (:meth:`Keys.user`)."""

    REACHABLE = "reachable"  # "1": the bot may write to them privately
    LANGUAGE = "language"  # their own choice for private messages
    TELEGRAM_LANGUAGE = "telegram_language"  # their Telegram app's, as last seen


class ChatField(StrEnum):
    """Fields of a chat's settings hash (:meth:`Keys.chat_settings`)."""

    LANGUAGE = "language"
    VARIANT = "variant"
    SEATING = "seating"
    TURN_TIMER = "turn_timer"  # seconds


class Seating(StrEnum):
    """A chat's ``seating`` setting: seats in the order people joined, or shuffled at the start."""

    JOIN = "join"
    SHUFFLE = "shuffle"


class BoardField(StrEnum):
    """A leaderboard's per-user fields (:func:`board_field`)."""

    GAMES = "games"
    WINS = "wins"
    NAME = "name"


def board_field(user_id: int | str, field: BoardField) -> str:
    """A leaderboard hash's field: ``<user>:<field>``."""
    return f"{user_id}:{field}"


class TelegramField(StrEnum):
    """Fields of a game's Telegram bookkeeping (:meth:`Keys.telegram`); per seat ``<field>:<seat>``."""

    BOARD_MESSAGE = "board_message"
    BOARD_DIGEST = "board_digest"
    PANEL_MESSAGE = "panel_message"
    PANEL_STATE = "panel_state"
    PANEL_DIGEST = "panel_digest"
    TURN_PANEL_SENT = "turn_panel_sent"
    PANEL_MAYBE_NEWER = "panel_maybe_newer"
    UNREACHABLE = "unreachable"
    TOLD_RETIRED = "told_retired"

    def of(self, seat: int) -> str:
        """This field of seat ``seat``."""
        return f"{self}:{seat}"


class IngestKeys(NamedTuple):
    """The keys the ingest script writes together (slot ``{b<bot>}``)."""

    stream: str  # stream: the updates stored and not yet processed
    recent: str  # sorted set: the update ids stored lately, scored by arrival (ms on Redis's clock)
    offset: str  # string: the next getUpdates offset
    lease: str  # string: the lease, checked by the script
    dead_letters: str  # stream, capped: the updates set aside (update_id, error, update)
    last_reply: str  # string: the last polled write's call id and what it took (a resend returns it)


@dataclass(frozen=True)
class Keys:
    """The names of one bot's keys, under ``prefix`` (``cheat`` alone in tests)."""

    prefix: str = ROOT

    def _game(self, game_id: str, part: str) -> str:
        return f"{self.prefix}:{{g{game_id}}}:{part}"

    def game(self, game_id: str) -> str:
        """Hash: :class:`GameField` and once-marks."""
        return self._game(game_id, "game")

    def log(self, game_id: str) -> str:
        """List: the game's actions, one JSON object each."""
        return self._game(game_id, "log")

    def outbox(self, game_id: str) -> str:
        """List: the game's announcements still to post (JSON, each with its ``seq``)."""
        return self._game(game_id, "outbox")

    def telegram(self, game_id: str) -> str:
        """Hash: :class:`TelegramField`, the messages that show the game."""
        return self._game(game_id, "tg")

    def applied(self, game_id: str) -> str:
        """Sorted set: the update marks the game's last commits applied (exactly once)."""
        return self._game(game_id, "upd")

    def game_pattern(self) -> str:
        """A SCAN pattern matching every game hash of the bot."""
        return f"{self.prefix}:{{g*}}:game"

    def chat(self, chat_id: int, thread_id: int | None) -> str:
        """String: the live game of a chat (topic)."""
        return f"{self.prefix}:chat:{chat_id}:{thread_id or 0}"

    def chat_last(self, chat_id: int, thread_id: int | None) -> str:
        """String: the chat (topic)'s last game that ended."""
        return f"{self.prefix}:chat:{chat_id}:{thread_id or 0}:last"

    def chat_games(self, chat_id: int | str) -> str:
        """Set: the chat's games, every topic."""
        return f"{self.prefix}:chat:{chat_id}:games"

    def chat_moved(self, chat_id: int) -> str:
        """String: the supergroup that group ``chat_id`` became."""
        return f"{self.prefix}:chat:{chat_id}:moved"

    def chat_settings(self, chat_id: int | str) -> str:
        """Hash: :class:`ChatField`."""
        return f"{self.prefix}:chatcfg:{chat_id}"

    def live(self) -> str:
        """Set: the ids of the games that may be live or still have something to show."""
        return f"{self.prefix}:live"

    def user(self, user_id: int | str) -> str:
        """Hash: :class:`UserField`."""
        return f"{self.prefix}:user:{user_id}"

    def user_games(self, user_id: int | str) -> str:
        """Set: the live games the user is seated at."""
        return f"{self.prefix}:user:{user_id}:games"

    def notify(self, chat_id: int | str) -> str:
        """Set: the users to tell privately when the chat's next lobby opens."""
        return f"{self.prefix}:notify:{chat_id}"

    def user_notify(self, user_id: int | str) -> str:
        """Set: the chats where the user asked for that (for /forget_me, no scan)."""
        return f"{self.prefix}:user:{user_id}:notify"

    def _statistics(self, name: str) -> str:
        return f"{self.prefix}:{{s{self.prefix.rpartition(':')[2]}}}:{name}"

    def totals(self, user_id: int | str) -> str:
        """Hash, slot ``{s<bot>}``: the user's statistics (``place<n>`` and :class:`tgbot.storage.stats.Totals`)."""
        return self._statistics(f"user:{user_id}")

    def boards_of(self, user_id: int | str) -> str:
        """Set, slot ``{s<bot>}``: the chats whose leaderboard lists the user."""
        return self._statistics(f"user:{user_id}:boards")

    def board(self, chat_id: int | str) -> str:
        """Hash, slot ``{s<bot>}``: the chat's leaderboard, :func:`board_field` per user."""
        return self._statistics(f"top:{chat_id}")

    def counted(self) -> str:
        """Sorted set, slot ``{s<bot>}``: the games counted lately (ms), so each counts once."""
        return self._statistics("counted")

    def _bot(self, name: str) -> str:
        return f"{self.prefix}:{{b{self.prefix.rpartition(':')[2]}}}:{name}"

    def ingest(self) -> IngestKeys:
        """Slot ``{b<bot>}``: the update stream, the recent update ids, the next getUpdates offset,
        the lease (checked by the same script), the dead letters and the last polled write's reply."""
        return IngestKeys(
            self._bot("updates"),
            self._bot("recent"),
            self._bot("offset"),
            self._bot("lease"),
            self._bot("dead"),
            self._bot("ingested"),
        )

    def lease(self) -> tuple[str, str, str]:
        """Slot ``{b<bot>}``: the lease, its epoch, the time it was last renewed."""
        return self._bot("lease"), self._bot("epoch"), self._bot("renewed")

    def webhook_secret(self) -> str:
        """String: the webhook's secret token, the same for every process of the bot."""
        return self._bot("webhook_secret")

    def schema(self) -> str:
        """String: the bot's storage schema (:data:`tgbot.storage.migrate.SCHEMA`)."""
        return f"{self.prefix}:schema"
