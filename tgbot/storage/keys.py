"""The Redis key schema: every key the bot stores is named here, nowhere else.

Keys start with the bot's prefix ``cheat:<bot id>`` (:func:`bot_prefix`), so several bots share
one Redis or Cluster. A hash tag puts keys that one Lua script changes together into one Cluster
slot: ``{g<game>}`` a game's, ``{u<user>}`` a user's statistics, ``{c<chat>}`` a chat's
leaderboard, ``{b<bot>}`` the bot's own process coordination (lease, ingest).

- a game: :meth:`Keys.game` hash (``version``, ``table``, ``deal``, ``epoch``, ``counted``,
  ``once:<what>:<user>``), :meth:`Keys.log` list, :meth:`Keys.outbox` list,
  :meth:`Keys.telegram` hash (the views' bookkeeping), :meth:`Keys.applied` sorted set;
- indexes, checked against the game when read: :meth:`Keys.chat`, :meth:`Keys.chat_last`,
  :meth:`Keys.chat_games`, :meth:`Keys.live`, :meth:`Keys.user_games`;
- records: :meth:`Keys.chat_settings`, :meth:`Keys.chat_moved`, :meth:`Keys.user`,
  :meth:`Keys.notify`, :meth:`Keys.user_notify`; statistics: :meth:`Keys.user_statistics`,
  :meth:`Keys.board`, :meth:`Keys.board_handoff` (board fields ``<user>:games|wins|name``);
- the bot: :meth:`Keys.ingest`, :meth:`Keys.lease`, :meth:`Keys.webhook_secret`,
  :meth:`Keys.schema` (the storage schema, :mod:`tgbot.storage.migrate`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ROOT", "Keys", "bot_prefix"]

#: The first segment of every key.
ROOT = "cheat"


def bot_prefix(bot_id: str) -> str:
    """The prefix of every key of bot ``bot_id`` (decimal digits): ``cheat:<bot id>``."""
    return f"{ROOT}:{bot_id}"


@dataclass(frozen=True)
class Keys:
    """The names of one bot's keys, under ``prefix`` (``cheat`` alone in tests)."""

    prefix: str = ROOT

    def _game(self, game_id: str, part: str) -> str:
        return f"{self.prefix}:{{g{game_id}}}:{part}"

    def game(self, game_id: str) -> str:
        """Hash: the game's version, table, deal, fencing epoch and once-marks."""
        return self._game(game_id, "game")

    def log(self, game_id: str) -> str:
        """List: the game's actions, one JSON object each (append-only)."""
        return self._game(game_id, "log")

    def outbox(self, game_id: str) -> str:
        """List: the game's announcements still to post (JSON, each with its ``seq``)."""
        return self._game(game_id, "outbox")

    def telegram(self, game_id: str) -> str:
        """Hash: the game's Telegram bookkeeping (message ids and what they show)."""
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
        """String: the chat (topic)'s last game that ended, kept as long as the game's own keys."""
        return f"{self.prefix}:chat:{chat_id}:{thread_id or 0}:last"

    def chat_games(self, chat_id: int | str) -> str:
        """Set: the chat's games, every topic."""
        return f"{self.prefix}:chat:{chat_id}:games"

    def chat_moved(self, chat_id: int) -> str:
        """String: the supergroup that group ``chat_id`` became."""
        return f"{self.prefix}:chat:{chat_id}:moved"

    def chat_settings(self, chat_id: int | str) -> str:
        """Hash: the chat's settings (:class:`tgbot.storage.records.ChatSettings`, ``turn_timer``)."""
        return f"{self.prefix}:chatcfg:{chat_id}"

    def live(self) -> str:
        """Set: the ids of the games that may be live or still have something to show."""
        return f"{self.prefix}:live"

    def user(self, user_id: int | str) -> str:
        """Hash: ``reachable`` (the bot may write to them), ``language`` (of private messages, their
        choice), ``telegram_language`` (their Telegram app's, as last seen)."""
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

    def user_statistics(self, user_id: int | str) -> tuple[str, str, str]:
        """Slot ``{u<user>}``: the totals hash, the set of chats whose board lists the user,
        the sorted set of counted games."""
        base = f"{self.prefix}:stats:{{u{user_id}}}"
        return base, base + ":chats", base + ":counted"

    def board(self, chat_id: int | str) -> tuple[str, str]:
        """Slot ``{c<chat>}``: the chat's leaderboard hash and its counted games."""
        base = f"{self.prefix}:top:{{c{chat_id}}}"
        return base, base + ":counted"

    def board_handoff(self, chat_id: int | str) -> tuple[str, str]:
        """Slot ``{c<chat>}``: a board on its way to the supergroup the chat became."""
        base = f"{self.prefix}:top:{{c{chat_id}}}:handoff"
        return base, base + ":counted"

    def board_pattern(self) -> str:
        """A SCAN pattern matching every leaderboard and handoff key of the bot."""
        return f"{self.prefix}:top:{{c*}}*"

    def _bot(self, name: str) -> str:
        return f"{self.prefix}:{{b{self.prefix.rpartition(':')[2]}}}:{name}"

    def ingest(self) -> tuple[str, str, str, str]:
        """Slot ``{b<bot>}``: the update stream, the recent update ids, the next getUpdates
        offset, and the lease (checked by the same script)."""
        return self._bot("updates"), self._bot("recent"), self._bot("offset"), self._bot("lease")

    def lease(self) -> tuple[str, str, str]:
        """Slot ``{b<bot>}``: the lease, its epoch, the time it was last renewed."""
        return self._bot("lease"), self._bot("epoch"), self._bot("renewed")

    def webhook_secret(self) -> str:
        """String: the webhook's secret token, the same for every process of the bot."""
        return self._bot("webhook_secret")

    def schema(self) -> str:
        """String: the bot's storage schema (:data:`tgbot.storage.migrate.SCHEMA`)."""
        return f"{self.prefix}:schema"
