"""A table's value types: :class:`Table`, :class:`Seat`, their enums, the tap answers, and the
table's JSON form (stored in Redis, see :mod:`tgbot.owner.store`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from typing import Annotated, Any, ClassVar

from pydantic import ConfigDict, PlainValidator, TypeAdapter

import core
from tgbot.i18n import pick_language

#: The version of :meth:`Table.to_json`'s format (its ``schema`` field); older ones are
#: :mod:`tgbot.storage.migrate`'s to convert.
TABLE_SCHEMA = 3
#: Default bounds of the human-like pause before an AI seat acts (seconds).
AI_PAUSE = (1.0, 3.0)

#: The engine state, as :meth:`Table.from_json` reads it.
EngineState = Annotated[core.GameState, PlainValidator(core.GameState.from_dict)]
#: Stored JSON with a field this code does not know is refused.
_STRICT = ConfigDict(extra="forbid")


class Status(StrEnum):
    """Life of a table: lobby → playing → over; or cancelled (stopped or expired, no result)."""

    LOBBY = "lobby"
    PLAYING = "playing"
    OVER = "over"
    CANCELLED = "cancelled"


class GroupAccess(StrEnum):
    """Whether the bot may post in the table's group (topic), as Telegram last answered:
    ``unwritable`` for now (the game goes on in private until ``retire_at``), or ``gone`` for good."""

    WRITABLE = "writable"
    UNWRITABLE = "unwritable"
    GONE = "gone"


class Ending(StrEnum):
    """How a table ended (its ``ended``); the last three retire a table whose group was lost (no
    result, its people told privately: :data:`RETIRED`)."""

    FINISHED = "finished"
    STOPPED = "stopped"
    EXPIRED = "expired"
    ABANDONED = "abandoned"
    BOT_REMOVED = "bot_removed"  # an update or a 403 "bot was kicked" said so
    CHAT_GONE = "chat_gone"  # 400 "chat not found", "message thread not found"
    UNWRITABLE = "unwritable"  # the group took no message for LOBBY_TIMEOUT


#: The endings of a table retired because its group was lost.
RETIRED = frozenset({Ending.BOT_REMOVED, Ending.CHAT_GONE, Ending.UNWRITABLE})


class DeadlineKind(StrEnum):
    """What the table's timer does when it fires."""

    LOBBY = "lobby"  # the lobby expires
    REMIND = "remind"  # a quarter of the turn is left: remind the player
    TURN = "turn"  # the turn ran out: the automatic move
    AI = "ai"  # an AI seat acts


class AnnouncementKind(StrEnum):
    """What an outbox note announces (its ``kind``)."""

    CHALLENGE_RESOLVED = "challenge_resolved"
    BELIEVED = "believed"
    GAME_ENDED = "game_ended"
    CANCELLED = "cancelled"
    AUTOMATIC_MOVE = "automatic_move"
    LEFT = "left"
    REMINDER = "reminder"

    @classmethod
    def read(cls, stored: object) -> AnnouncementKind | None:
        """The kind of a stored note; ``None`` for a kind this version does not know."""
        return _KINDS.get(str(stored))


_KINDS = {kind.value: kind for kind in AnnouncementKind}


#: What a tap or a transition came to: the code of the short answer the tapper sees
#: (:func:`tgbot.render.answers.answer`), a success or a refusal (:class:`RefusedError`); engine
#: refusals carry :mod:`core.errors`' codes. Each code is its member's name in lower case; the
#: last ones (``ai`` on) answer no tap.
Answer = StrEnum(
    "Answer",
    """
    OK JOINED ALREADY_JOINED LEFT NOT_SEATED VARIANT STARTED CANCELLED PLAYED CHALLENGED BELIEVED STALE
    NOT_IN_LOBBY LOBBY_FULL NOT_ALLOWED TOO_FEW GAME_OVER NOT_RUNNING NO_GAME LINK_NOT_YOURS NOT_YOUR_TURN
    PLAY_NOT_ALLOWED BELIEVE_NOT_ALLOWED CHALLENGE_NOT_ALLOWED BAD_CARD_COUNT CARDS_NOT_IN_HAND
    CLAIM_NOT_ALLOWED OPEN_PRIVATE REFRESHED BAD_BUTTON ADMINS_ONLY ANONYMOUS BOT_ADDED BOT_TAKEN_OUT NO_BOT
    NO_HUMAN LEFT_GAME TAKEN_BACK TIMER_SET SETTINGS_SAVED RECORD_SENT RECORD_AGAIN RECORD_NOT_YET REOPENED
    ALREADY_OPEN TRY_AGAIN NOT_FOR_YOU NOT_A_MEMBER PLAYERS_ONLY NOT_PLAYING SEAT_GONE OFFERS_FULL
    AI AUTO EXPIRED MOVED REMINDED RETIRED UNWRITABLE WRITABLE UNCHANGED
    """,
)


class RefusedError(Exception):
    """A transition the table refuses; ``code`` is an :class:`Answer` or an engine error's code."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


class Player(StrEnum):
    """Who plays a seat now."""

    PERSON = "person"  # the person seated
    STAND_IN = "stand_in"  # the AI, after the person's automatic moves; one tap takes it back
    LEFT = "left"  # the AI, for the rest of the game: the person left
    BOT = "bot"  # an AI player seated in the lobby


@dataclass(frozen=True, slots=True)
class Seat:
    """A player at the table: ``user_id`` (negative for an AI player), ``name`` taken at join
    time, ``lang`` of their private messages (``None``: the group's), who plays it now, the AI's
    ``strategy`` when the AI does, and the ``auto_moves`` the turn timer made for it in a row."""

    __pydantic_config__: ClassVar[ConfigDict] = _STRICT

    user_id: int
    name: str
    lang: str | None = None
    player: Player = Player.PERSON
    strategy: str = "counting"
    auto_moves: int = 0

    @property
    def human(self) -> bool:
        """A person's seat, whoever plays it now."""
        return self.player is not Player.BOT

    @property
    def by_ai(self) -> bool:
        """The AI plays this seat now."""
        return self.player is not Player.PERSON

    @property
    def present(self) -> bool:
        """A person still at the table."""
        return self.player in (Player.PERSON, Player.STAND_IN)

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``user_id``, ``name`` and the fields not at their default."""
        return {
            item.name: getattr(self, item.name)
            for item in fields(self)
            if item.default != getattr(self, item.name) or item.name in ("user_id", "name")
        }


#: Fields :meth:`Table.to_json` leaves out while they hold these values.
_LEFT_OUT_AT = {
    "link_offers": (),
    "group_access": GroupAccess.WRITABLE,
    "unwritable_since": None,
    "retire_at": None,
    "showdown": None,
}


@dataclass(frozen=True)
class Table:
    """One game as the bot keeps it.

    - ``id``: 8 characters of ``A-Za-z0-9_-``, also in every callback of the game;
      ``chat_id``/``thread_id``: its group (and forum topic); ``creator``: who opened the lobby;
    - ``title``: the group's title (on private panels), ``lang``: the group's language;
    - ``seats`` in seat order; ``state``: the engine's once started; ``action_count``: engine
      actions applied (the moment versioned callbacks carry); ``version``: bumped by every commit;
    - ``deadline``: epoch seconds when the timer fires (what it does: ``deadline_kind``);
      ``turn_end``: when the current person's turn runs out; ``turn_timeout``: seconds per turn;
    - ``ai_delay``: the least pause (seconds) before an AI seat acts, ``ai_pause`` its range;
    - ``outbox_seq``: the last announcement queued; ``ended``: an :class:`Ending`;
    - ``link_offers``: user ids, oldest first, the lobby offered its join deep link to (they
      tapped Join but the bot cannot write to them privately; :func:`tgbot.game.lobby.offer_link`);
    - ``group_access`` (:class:`GroupAccess`); while ``unwritable``, ``unwritable_since`` (the
      first refusal) and ``retire_at`` (epoch seconds, Redis's clock);
    - ``showdown``: the outbox note of the last showdown or belief (``{"seq", "kind",
      "challenger" or "believer", "player", "claim", "revealed", "truthful", "loser" or "taker",
      "pile_taken"}``), kept until the next play, so the panels can say what happened.
    """

    __pydantic_config__: ClassVar[ConfigDict] = _STRICT

    id: str
    chat_id: int
    thread_id: int | None
    creator: int
    title: str = ""
    lang: str = "ru"
    status: Status = Status.LOBBY
    variant: str = "russian"
    seats: tuple[Seat, ...] = ()
    state: EngineState | None = None
    action_count: int = 0
    version: int = 0
    deadline: float | None = None
    created: float = 0.0
    seed: int | None = None
    outbox_seq: int = 0
    ended: Ending | None = None
    deadline_kind: DeadlineKind | None = None
    turn_end: float | None = None
    turn_timeout: float = 90.0
    ai_delay: float = 3.0
    ai_pause: tuple[float, float] = AI_PAUSE
    link_offers: tuple[int, ...] = ()
    group_access: GroupAccess = GroupAccess.WRITABLE
    unwritable_since: float | None = None
    retire_at: float | None = None
    showdown: dict[str, Any] | None = None

    @property
    def live(self) -> bool:
        """A lobby or a running game."""
        return self.status in (Status.LOBBY, Status.PLAYING)

    def seat_of(self, user_id: int) -> int | None:
        """The seat of ``user_id``, or ``None``."""
        return next((index for index, seat in enumerate(self.seats) if seat.user_id == user_id), None)

    def seat_language(self, seat: int) -> str:
        """The language of a seat's private messages: its own (``Seat.lang``), else the table's."""
        return self.seats[seat].lang or self.lang

    def language_for(self, user_id: int, own: str | None) -> str:
        """The language of a message about this table to ``user_id``: their seat's, else their own
        choice (``own``), else the table's."""
        seat = self.seat_of(user_id)
        return self.seat_language(seat) if seat is not None else pick_language(own, self.lang)

    def to_json(self) -> str:
        """Compact JSON: every field under its own name, the engine state as its own dict."""
        data: dict[str, Any] = {"schema": TABLE_SCHEMA}
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name not in _LEFT_OUT_AT or value != _LEFT_OUT_AT[item.name]:
                data[item.name] = value
        data["seats"] = [seat.to_dict() for seat in self.seats]
        data["state"] = self.state.to_dict() if self.state is not None else None
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> Table:
        """Inverse of :meth:`to_json`; ``ValueError`` on malformed input or another ``schema``."""
        data = json.loads(text)
        if (schema := data.pop("schema", None)) != TABLE_SCHEMA:
            raise ValueError(f"table schema {schema!r}: this code reads {TABLE_SCHEMA}")
        return _TABLE.validate_python(data)  # (pydantic's ValidationError is a ValueError)


_TABLE = TypeAdapter(Table)


@dataclass
class Change:
    """A transition's result: the new ``table``, record actions for the game's log, announcements
    for its outbox (dicts with ``seq`` and ``kind``), the deal at the start, and the tap's ``reply``."""

    table: Table
    log: list[dict[str, Any]] = field(default_factory=list)
    outbox: list[dict[str, Any]] = field(default_factory=list)
    deal: list[str] | None = None
    reply: str = Answer.OK


def announce(table: Table, kind: AnnouncementKind, **payload: Any) -> tuple[Table, dict[str, Any]]:
    """The table with its next outbox number taken, and the announcement ``kind`` under it."""
    seq = table.outbox_seq + 1
    return replace(table, outbox_seq=seq), {"seq": seq, "kind": kind, **payload}


def with_seat(seats: tuple[Seat, ...], index: int, **changes: Any) -> tuple[Seat, ...]:
    """``seats`` with seat ``index`` changed."""
    return (*seats[:index], replace(seats[index], **changes), *seats[index + 1 :])
