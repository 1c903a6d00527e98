"""The bot's side of a game: a :class:`Table` around the engine's state, and its transitions.

A table is a lobby first (players join and leave), then a running game (``core`` state), then
over. Every transition is a pure function ``(table, …) -> Change`` that the store commits as one
compare-and-set (see :mod:`tgbot.owner.store`); refused transitions raise :class:`RefusedError` with a
machine code that :mod:`tgbot.views.render` turns into text. The game rules themselves stay in ``core``.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass, field, replace
from enum import Enum, StrEnum
from typing import Any

import core
import core.ai
import core.auto
from core.record import action_to_dict
from core.rules import MAX_PLAYERS, MIN_PLAYERS

__all__ = [
    "Status", "Seat", "Table", "Change", "RefusedError", "Answer", "open_lobby", "join", "leave", "add_bot", "remove_bot", "set_variant",
    "offer_link", "link_offered_to", "join_by_link", "member_gone", "MAX_LINK_OFFERS",
    "start", "cancel", "kick", "rematch", "move_chat", "act", "take_back", "on_deadline", "set_lang", "set_seat_lang", "ai_pause", "event_to_dict", "AUTO_TO_AI", "REMIND_AT",
    "GroupAccess", "RetireReason", "group_unwritable", "group_writable", "group_gone", "next_timer", "UNWRITABLE_PROBE_EVERY",
]

#: Automatic moves in a row after which the AI takes the seat (RULES.md, table manners).
AUTO_TO_AI = 2
#: The reminder fires when this fraction of the turn time has passed (a quarter is left).
REMIND_AT = 0.75
#: Bounds of the human-like pause before an AI seat acts (seconds).
AI_PAUSE = (1.0, 3.0)
#: While a table's group takes no message, its timer wakes this often (seconds, from the first
#: refusal) so that the group is tried again even when nothing happens at the table (a finished
#: game whose result waits to be shown).
UNWRITABLE_PROBE_EVERY = 60.0
#: The version of :meth:`Table.to_json`'s format, stored as its ``schema`` field; a table
#: without it is version 1 (b5f3182's format). :func:`_upgrade` brings older ones up to it.
TABLE_SCHEMA = 2
#: The most join links a lobby keeps on offer at once (:attr:`Table.link_offers`): the oldest
#: offer is dropped past it, so a crowd of taps never grows the stored table without bound.
MAX_LINK_OFFERS = 32


class Status(str, Enum):
    """Life of a table: ``lobby`` → ``playing`` → ``over``; or ``cancelled`` (stopped or
    expired, no result)."""

    LOBBY = "lobby"
    PLAYING = "playing"
    OVER = "over"
    CANCELLED = "cancelled"


class GroupAccess(str, Enum):
    """Whether the bot may post in the table's group (forum topic), as Telegram last answered
    (:func:`tgbot.views.sync.group_refusal` reads its answers).

    - ``writable``: as usual;
    - ``unwritable``: the group refused a message with an answer that a change of rights undoes
      (a read-only group, the bot restricted, a closed topic: 400, usually without any update).
      The game goes on in private; its announcements wait in the outbox; the table is retired
      at ``retire_at`` unless a message goes through first;
    - ``gone``: the group will never take a message again (deleted, the bot removed, a deleted
      topic), or it stayed unwritable too long: the table was retired (:func:`group_gone`).
    """

    WRITABLE = "writable"
    UNWRITABLE = "unwritable"
    GONE = "gone"


class RetireReason(str, Enum):
    """Why a table whose group was lost ended (its ``ended``): no result, its people told
    privately."""

    #: the bot was removed from the group (an update said so, or a 403 "bot was kicked")
    BOT_REMOVED = "bot_removed"
    #: the group or its topic no longer exists (400 "chat not found", "message thread not found")
    CHAT_GONE = "chat_gone"
    #: the group took no message for the lobby timeout (``LOBBY_TIMEOUT``)
    UNWRITABLE = "unwritable"


class Answer(StrEnum):
    """What a tap or a transition came to: the code of the short answer the tapper sees
    (:func:`tgbot.views.render.answer` gives its text), a success or a refusal (:class:`RefusedError`).
    Engine refusals carry the code of :mod:`core.errors` (``not_your_turn``, …)."""

    OK = "ok"
    JOINED = "joined"
    ALREADY_JOINED = "already_joined"
    LEFT = "left"
    NOT_SEATED = "not_seated"
    VARIANT = "variant"
    STARTED = "started"
    CANCELLED = "cancelled"
    PLAYED = "played"
    CHALLENGED = "challenged"
    BELIEVED = "believed"
    STALE = "stale"
    NOT_IN_LOBBY = "not_in_lobby"
    LOBBY_FULL = "lobby_full"
    NOT_ALLOWED = "not_allowed"
    TOO_FEW = "too_few"
    GAME_OVER = "game_over"
    NOT_RUNNING = "not_running"
    NO_GAME = "no_game"
    LINK_NOT_YOURS = "link_not_yours"
    NOT_YOUR_TURN = "not_your_turn"
    PLAY_NOT_ALLOWED = "play_not_allowed"
    BELIEVE_NOT_ALLOWED = "believe_not_allowed"
    CHALLENGE_NOT_ALLOWED = "challenge_not_allowed"
    BAD_CARD_COUNT = "bad_card_count"
    CARDS_NOT_IN_HAND = "cards_not_in_hand"
    CLAIM_NOT_ALLOWED = "claim_not_allowed"
    OPEN_PRIVATE = "open_private"
    REFRESHED = "refreshed"
    BAD_BUTTON = "bad_button"
    ADMINS_ONLY = "admins_only"
    ANONYMOUS = "anonymous"
    BOT_ADDED = "bot_added"
    BOT_TAKEN_OUT = "bot_taken_out"
    NO_BOT = "no_bot"
    NO_HUMAN = "no_human"
    LEFT_GAME = "left_game"
    TAKEN_BACK = "taken_back"
    TIMER_SET = "timer_set"
    SETTINGS_SAVED = "settings_saved"
    RECORD_SENT = "record_sent"
    RECORD_AGAIN = "record_again"
    RECORD_NOT_YET = "record_not_yet"
    REOPENED = "reopened"
    ALREADY_OPEN = "already_open"
    TRY_AGAIN = "try_again"
    NOT_FOR_YOU = "not_for_you"
    # codes of transitions that answer no tap (their Change.reply is not shown)
    AI = "ai"
    AUTO = "auto"
    EXPIRED = "expired"
    MOVED = "moved"
    REMINDED = "reminded"
    RETIRED = "retired"
    UNWRITABLE = "unwritable"
    WRITABLE = "writable"


class RefusedError(Exception):
    """A transition the table refuses; ``code`` says why (an :class:`Answer`, or an engine
    error's code for an illegal action)."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


@dataclass(frozen=True, slots=True)
class Seat:
    """A player at the table.

    - ``user_id``: Telegram user id (for a bot seat, a negative id unique in the table);
    - ``name``: display name taken at join time;
    - ``lang``: language of this player's private messages (``None``: the group's);
    - ``bot``: the AI strategy of a bot player added in the lobby (``None`` for people);
    - ``ai``: the seat is currently played by the AI (a person who timed out twice or left);
    - ``left``: the person left the game (the AI keeps the seat for the rest of it);
    - ``auto``: automatic moves in a row made for this seat by the turn timer.
    """

    user_id: int
    name: str
    lang: str | None = None
    bot: str | None = None
    ai: bool = False
    left: bool = False
    auto: int = 0

    @property
    def human(self) -> bool:
        return self.bot is None

    @property
    def by_ai(self) -> bool:
        """The AI plays this seat now (a bot player, or a person's seat the AI holds)."""
        return self.bot is not None or self.ai

    @property
    def present(self) -> bool:
        """A person still at the table (not a bot, not left)."""
        return self.bot is None and not self.left

    def to_list(self) -> list:
        """Compact JSON form: ``[user_id, name]`` plus only the fields that are set."""
        out: list = [self.user_id, self.name]
        extra = {k: v for k, v in (("lang", self.lang), ("bot", self.bot), ("ai", self.ai), ("left", self.left), ("auto", self.auto)) if v}
        if extra:
            out.append(extra)
        return out

    @classmethod
    def from_list(cls, item: list) -> "Seat":
        extra = item[2] if len(item) > 2 else {}
        return cls(int(item[0]), item[1], **extra)


@dataclass(frozen=True)
class Table:
    """One game as the bot keeps it (stored as JSON in Redis, see :mod:`tgbot.owner.store`).

    - ``id``: game id (8 characters of ``A-Za-z0-9_-``), also in every callback of the game;
    - ``chat_id``/``thread_id``: the group (and forum topic) it lives in;
    - ``creator``: user id of who opened the lobby;
    - ``title``: the group's title (shown on private panels), ``lang``: the group's language;
    - ``seats``: players in seat order (join order);
    - ``state``: the engine state once started;
    - ``action_count``: engine actions applied so far (the "moment" carried by versioned callbacks);
    - ``version``: bumped by every commit (compare-and-set);
    - ``deadline``: epoch seconds when the table's timer fires, or ``None``; ``deadline_kind`` says
      what it does: ``lobby`` (expiry), ``remind`` (a quarter of the turn is left), ``turn`` (the
      automatic move), ``ai`` (an AI seat acts);
    - ``turn_end``: epoch seconds when the current human player's turn runs out (shown on the panel);
    - ``turn_timeout``: seconds a person has for a turn (the chat's setting when the game started);
    - ``ai_delay``: the least pause (seconds) before an AI seat acts (the group's message spacing);
    - ``ai_pause``: the range (seconds) of the human-like pause an AI seat takes before acting;
    - ``outbox_seq``: sequence number of the last announcement queued;
    - ``link_offers``: user ids, oldest first, a lobby offered its join deep link
      (``t.me/<bot>?start=j<id>``) to: each tapped Join in the group (which proved they are a
      member) while the bot could not write to them privately. The link seats only them
      (:func:`join_by_link`); leaving the group, joining or the game's start takes them off.
    - ``ended``: why a table ended (``finished``, ``stopped``, ``expired``, ``abandoned``, or a
      :class:`RetireReason`: ``bot_removed``, ``chat_gone``, ``unwritable``);
    - ``group_access``: whether its group takes the bot's messages (:class:`GroupAccess`);
      ``unwritable_since``: epoch seconds (Redis's clock) of the group's first refusal, and
      ``retire_at``: when the table is retired unless a message goes through first (both
      ``None`` unless the group is ``unwritable``).
    """

    id: str
    chat_id: int
    thread_id: int | None
    creator: int
    title: str = ""
    lang: str = "ru"
    status: Status = Status.LOBBY
    variant: str = "russian"
    seats: tuple[Seat, ...] = ()
    state: core.GameState | None = None
    action_count: int = 0
    version: int = 0
    deadline: float | None = None
    created: float = 0.0
    seed: int | None = None
    outbox_seq: int = 0
    ended: str | None = None
    deadline_kind: str | None = None
    turn_end: float | None = None
    turn_timeout: float = 90.0
    ai_delay: float = 3.0
    ai_pause: tuple[float, float] = AI_PAUSE
    link_offers: tuple[int, ...] = ()
    group_access: GroupAccess = GroupAccess.WRITABLE
    unwritable_since: float | None = None
    retire_at: float | None = None

    @property
    def live(self) -> bool:
        """A lobby or a running game."""
        return self.status in (Status.LOBBY, Status.PLAYING)

    def seat_of(self, user_id: int) -> int | None:
        """The seat of ``user_id``, or ``None``."""
        for i, s in enumerate(self.seats):
            if s.user_id == user_id:
                return i
        return None

    def to_json(self) -> str:
        """Compact JSON (names included; the engine state as its own compact dict)."""
        d: dict[str, Any] = {
            "schema": TABLE_SCHEMA,
            "id": self.id,
            "chat": self.chat_id,
            "thread": self.thread_id,
            "creator": self.creator,
            "title": self.title,
            "lang": self.lang,
            "status": self.status.value,
            "variant": self.variant,
            "seats": [s.to_list() for s in self.seats],
            "state": self.state.to_dict() if self.state is not None else None,
            "turn": self.action_count,
            "version": self.version,
            "deadline": self.deadline,
            "created": self.created,
            "seed": self.seed,
            "outbox_seq": self.outbox_seq,
            "ended": self.ended,
            "dk": self.deadline_kind,
            "te": self.turn_end,
            "tt": self.turn_timeout,
            "ad": self.ai_delay,
            "ap": list(self.ai_pause),
        }
        if self.link_offers:
            d["link_offers"] = list(self.link_offers)
        if self.group_access is not GroupAccess.WRITABLE:  # (absent: writable, as before)
            d.update(access=self.group_access.value, unwritable_since=self.unwritable_since, retire_at=self.retire_at)
        return json.dumps(d, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> "Table":
        """Inverse of :meth:`to_json`, also of an older version of it (see :func:`_upgrade`).
        Raises ``ValueError`` on malformed input or a ``schema`` newer than this code's."""
        d = _upgrade(json.loads(text))
        return cls(
            id=d["id"],
            chat_id=d["chat"],
            thread_id=d["thread"],
            creator=d["creator"],
            title=d.get("title", ""),
            lang=d.get("lang", "ru"),
            status=Status(d["status"]),
            variant=d["variant"],
            seats=tuple(Seat.from_list(item) for item in d["seats"]),
            state=core.GameState.from_dict(d["state"]) if d["state"] is not None else None,
            action_count=d["turn"],
            version=d["version"],
            deadline=d["deadline"],
            created=d["created"],
            seed=d["seed"],
            outbox_seq=d["outbox_seq"],
            ended=d["ended"],
            deadline_kind=d.get("dk"),
            turn_end=d.get("te"),
            turn_timeout=d.get("tt", 90.0),
            ai_delay=d.get("ad", 3.0),
            ai_pause=tuple(d.get("ap", AI_PAUSE)),  # type: ignore[arg-type]
            link_offers=tuple(int(user_id) for user_id in d.get("link_offers", ())),
            group_access=GroupAccess(d.get("access", GroupAccess.WRITABLE.value)),
            unwritable_since=d.get("unwritable_since"),
            retire_at=d.get("retire_at"),
        )


def _upgrade(d: dict[str, Any]) -> dict[str, Any]:
    """A stored table's dict (``{"schema": n, ...}``, no ``schema``: 1) in the current format
    (:data:`TABLE_SCHEMA`), one version step at a time. Raises ``ValueError`` on a ``schema``
    newer than this code's (stored by a later release)."""
    version = d.get("schema", 1)
    if not isinstance(version, int) or version > TABLE_SCHEMA:
        raise ValueError(f"table schema {version!r}: this code reads up to {TABLE_SCHEMA}")
    if version < 2:
        d = {**d, "schema": 2}  # 1 -> 2: the field itself is new; every other name is kept
    return d


@dataclass
class Change:
    """The result of a transition: the new ``table``, the record actions to append to the
    game's log, the announcements to queue in its outbox (dicts with ``seq`` and ``kind``), the
    deal when the game starts, and ``reply``, a machine code for the tap's answer."""

    table: Table
    log: list[dict] = field(default_factory=list)
    outbox: list[dict] = field(default_factory=list)
    deal: list[str] | None = None
    reply: str = Answer.OK


def _announce(table: Table, kind: str, **payload: Any) -> tuple[Table, dict]:
    seq = table.outbox_seq + 1
    return replace(table, outbox_seq=seq), {"seq": seq, "kind": kind, **payload}


# -- lobby ---------------------------------------------------------------------------------------


def open_lobby(
    gid: str, chat_id: int, thread_id: int | None, creator: int, title: str, now: float, timeout: float, variant: str = "russian", lang: str = "ru"
) -> Table:
    """A new lobby with no players; it expires ``timeout`` seconds after its last change."""
    return Table(gid, chat_id, thread_id, creator, title=title, lang=lang, variant=variant, deadline=now + timeout, deadline_kind="lobby", created=now)


def _lobby(table: Table) -> None:
    if table.status is not Status.LOBBY:
        raise RefusedError(Answer.NOT_IN_LOBBY)


def _touch(table: Table, now: float, timeout: float, **changes: Any) -> Table:
    return replace(table, deadline=now + timeout, deadline_kind="lobby", **changes)


def _managed(table: Table, user_id: int | None, is_admin: bool) -> None:
    """Refuse unless the table itself (``user_id`` None), a chat admin or the creator acts.
    Creator ``0`` (an anonymous admin opened the lobby) matches nobody: admins only."""
    if user_id is None or is_admin or (user_id and user_id == table.creator):
        return
    raise RefusedError(Answer.NOT_ALLOWED)


def join(table: Table, seat: Seat, now: float, timeout: float) -> Change:
    """Seat a player (idempotent: a seated player stays where they are). RefusedError when the
    lobby is closed or full (6 seats, RULES.md)."""
    _lobby(table)
    if table.seat_of(seat.user_id) is not None:
        return Change(table, reply=Answer.ALREADY_JOINED)
    if len(table.seats) >= MAX_PLAYERS:
        raise RefusedError(Answer.LOBBY_FULL)
    offers = tuple(user_id for user_id in table.link_offers if user_id != seat.user_id)
    return Change(_touch(table, now, timeout, seats=table.seats + (seat,), link_offers=offers), reply=Answer.JOINED)


def offer_link(table: Table, user_id: int) -> Change:
    """``user_id`` tapped Join in the group but the bot cannot write to them privately: the
    lobby offers them its join deep link, and records the offer (:attr:`Table.link_offers`,
    at most :data:`MAX_LINK_OFFERS`, the oldest dropped) so that the link seats them and no
    one else. ``reply`` ``open_private`` (the tap is answered with the link); an offer already
    on record, or to a seated player, changes nothing. RefusedError when the lobby is closed or
    full."""
    _lobby(table)
    if table.seat_of(user_id) is None and len(table.seats) >= MAX_PLAYERS:
        raise RefusedError(Answer.LOBBY_FULL)
    if user_id in table.link_offers or table.seat_of(user_id) is not None:
        return Change(table, reply=Answer.OPEN_PRIVATE)
    offers = (table.link_offers + (user_id,))[-MAX_LINK_OFFERS:]
    return Change(replace(table, link_offers=offers), reply=Answer.OPEN_PRIVATE)


def link_offered_to(table: Table, user_id: int) -> bool:
    """Whether the table's join deep link is ``user_id``'s to use: it was offered to them
    (:func:`offer_link`), or they are seated already."""
    return user_id in table.link_offers or table.seat_of(user_id) is not None


def join_by_link(table: Table, seat: Seat, now: float, timeout: float) -> Change:
    """``/start j<id>``: seat the person the lobby offered its link to (:func:`offer_link`);
    anyone else, the link being forwarded or guessed, is refused ``link_not_yours`` before
    anything of the lobby is shown. A seated player's link is idempotent (``already_joined``)."""
    if not link_offered_to(table, seat.user_id):
        raise RefusedError(Answer.LINK_NOT_YOURS)
    return join(table, seat, now, timeout)


def add_bot(
    table: Table, names: tuple[str, ...], now: float, timeout: float, strategy: str = "counting", *, user_id: int | None = None, is_admin: bool = False
) -> Change:
    """Seat an AI player in the lobby: a negative user id unique in the table and the first of
    ``names`` (catalog msgids) no bot of the table uses yet (creator or chat admin; ``user_id``
    None for the table itself). RefusedError when the lobby is full."""
    _lobby(table)
    _managed(table, user_id, is_admin)
    if len(table.seats) >= MAX_PLAYERS:
        raise RefusedError(Answer.LOBBY_FULL)
    used = {s.name for s in table.seats if s.bot}
    uid = min([s.user_id for s in table.seats if s.bot] + [0]) - 1
    name = next((n for n in names if n not in used), names[0] if names else "")
    return Change(_touch(table, now, timeout, seats=table.seats + (Seat(uid, name, bot=strategy),)), reply=Answer.BOT_ADDED)


def remove_bot(table: Table, now: float, timeout: float, *, user_id: int | None = None, is_admin: bool = False) -> Change:
    """Take the last bot out of the lobby (creator or chat admin; ``reply`` ``no_bot`` when
    there is none)."""
    _lobby(table)
    _managed(table, user_id, is_admin)
    bots = [i for i, s in enumerate(table.seats) if s.bot]
    if not bots:
        return Change(table, reply=Answer.NO_BOT)
    seats = table.seats[: bots[-1]] + table.seats[bots[-1] + 1 :]
    return Change(_touch(table, now, timeout, seats=seats), reply=Answer.BOT_TAKEN_OUT)


def leave(table: Table, user_id: int, now: float, timeout: float) -> Change:
    """A player leaves (idempotent). In the lobby they lose their seat; in a running game the AI
    takes the seat for the rest of it (``Seat.left``, ``Seat.ai``: the cards stay in play, RULES.md
    table manners); when no person is left at the table, the game ends without result
    (``cancelled``, ended ``abandoned``)."""
    seat = table.seat_of(user_id)
    if table.status is Status.PLAYING:
        if seat is None or not table.seats[seat].human:
            return Change(table, reply=Answer.NOT_SEATED)
        if table.seats[seat].left:
            return Change(table, reply=Answer.LEFT_GAME)
        seats = _with_seat(table.seats, seat, left=True, ai=True)
        new, note = _announce(replace(table, seats=seats), "left", seat=seat)
        if not any(s.present for s in seats):
            new, end = _announce(replace(new, status=Status.CANCELLED, ended="abandoned"), "cancelled", reason="abandoned")
            return Change(_schedule(new, now), outbox=[note, end], reply=Answer.LEFT_GAME)
        if table.state is not None and table.state.current == seat:
            new = _schedule(new, now)
        return Change(new, outbox=[note], reply=Answer.LEFT_GAME)
    _lobby(table)
    if seat is None:
        return Change(table, reply=Answer.NOT_SEATED)
    seats = tuple(s for s in table.seats if s.user_id != user_id)
    return Change(_touch(table, now, timeout, seats=seats), reply=Answer.LEFT)


def member_gone(table: Table, user_id: int, now: float, timeout: float) -> Change:
    """``user_id`` left the table's group or was removed from it: a lobby drops their seat and
    their link offer; in a running game the AI takes their seat (:func:`leave`). A table they
    have nothing at changes nothing (``reply`` ``not_seated``)."""
    if user_id in table.link_offers:
        table = replace(table, link_offers=tuple(other for other in table.link_offers if other != user_id))
    return leave(table, user_id, now, timeout)


def set_variant(table: Table, user_id: int, variant: str, is_admin: bool, now: float, timeout: float) -> Change:
    """Switch the lobby's variant (creator or chat admin)."""
    _lobby(table)
    _managed(table, user_id, is_admin)
    core.variant(variant)  # raises UnknownVariant
    return Change(_touch(table, now, timeout, variant=variant), reply=Answer.VARIANT)


def set_lang(table: Table, lang: str) -> Change:
    """Change the table's (group's) language while its lobby is open; a running game keeps the
    language it started with. ``reply`` is ``ok``, or ``stale`` when nothing changes."""
    if table.status is not Status.LOBBY or table.lang == lang:
        return Change(table, reply=Answer.STALE)
    return Change(replace(table, lang=lang))


def set_seat_lang(table: Table, user_id: int, lang: str | None) -> Change:
    """Set the private language of ``user_id``'s seat (``None``: follow the table's)."""
    seat = table.seat_of(user_id)
    if seat is None or table.seats[seat].lang == lang:
        return Change(table, reply=Answer.STALE)
    seats = table.seats[:seat] + (replace(table.seats[seat], lang=lang),) + table.seats[seat + 1 :]
    return Change(replace(table, seats=seats))


def start(
    table: Table,
    user_id: int | None,
    is_admin: bool,
    seed: int,
    now: float | None = None,
    turn_timeout: float | None = None,
    ai_delay: float | None = None,
    ai_pause: tuple[float, float] | None = None,
    shuffle: bool = False,
) -> Change:
    """Deal and start (creator or chat admin; ``user_id`` None means the table starts itself,
    as when the sixth player joins). Needs 3 to 6 seated players, at least one a person
    (``no_human``). With ``now`` (epoch seconds) the first turn's timer is set: ``turn_timeout``
    seconds for a person, a pause in ``ai_pause`` (seconds) but at least ``ai_delay`` for an AI seat; without
    it the table has no timer (tests). ``shuffle`` (the chat's seating setting) shuffles the seats
    with a generator drawn from ``seed``, so the stored seat order, the deal and the record agree."""
    _lobby(table)
    _managed(table, user_id, is_admin)
    if len(table.seats) < MIN_PLAYERS:
        raise RefusedError(Answer.TOO_FEW)
    if not any(s.human for s in table.seats):
        raise RefusedError(Answer.NO_HUMAN)
    seats = table.seats
    if shuffle:
        order = list(seats)
        random.Random(f"{seed}:seats").shuffle(order)
        seats = tuple(order)
    state = core.new_game(len(seats), table.variant, random.Random(seed))
    new = replace(
        table,
        seats=seats,
        status=Status.PLAYING,
        state=state,
        seed=seed,
        action_count=0,
        link_offers=(),
        turn_timeout=table.turn_timeout if turn_timeout is None else turn_timeout,
        ai_delay=table.ai_delay if ai_delay is None else ai_delay,
        ai_pause=table.ai_pause if ai_pause is None else ai_pause,
    )
    return Change(_schedule(new, now), deal=[h.to_str() for h in state.hands], reply=Answer.STARTED)


def cancel(table: Table, user_id: int | None, is_admin: bool, reason: str = "stopped") -> Change:
    """End a lobby or a running game without result (creator or chat admin; ``user_id`` None
    for the bot itself)."""
    if not table.live:
        raise RefusedError(Answer.NOT_RUNNING)
    _managed(table, user_id, is_admin)
    new, note = _announce(replace(table, status=Status.CANCELLED, ended=reason, deadline=None, deadline_kind=None, turn_end=None), "cancelled", reason=reason)
    # A game ended because the bot lost the group ("bot_removed") has no group to tell.
    tell = table.status is Status.PLAYING and reason != "bot_removed"
    return Change(new, outbox=[note] if tell else [], reply=Answer.CANCELLED)


def kick(table: Table, target: int, user_id: int | None, is_admin: bool, now: float, timeout: float) -> Change:
    """``/kick``: the creator or a chat admin takes ``target`` off the table, as if they had
    left (:func:`leave`: the AI plays their seat in a running game; a lobby just loses them).
    ``reply`` ``not_seated`` when ``target`` is not a person at the table."""
    if not table.live:
        raise RefusedError(Answer.NOT_RUNNING)
    _managed(table, user_id, is_admin)
    return leave(table, target, now, timeout)


def rematch(old: Table, gid: str, creator: int, now: float, timeout: float, reachable: set[int]) -> Table:
    """A new lobby in ``old``'s chat (topic), with its variant and language, some of the same
    players already seated in the same order: its bots, and those of its people in
    ``reachable`` (who asked for the rematch, when the bot may write to them privately; the
    others are invited and join themselves). ``old`` must be over."""
    if old.live:
        raise RefusedError(Answer.NOT_IN_LOBBY)
    seats = tuple(
        Seat(s.user_id, s.name, lang=s.lang, bot=s.bot) for s in old.seats if s.bot or s.user_id in reachable
    )[:MAX_PLAYERS]
    new = open_lobby(gid, old.chat_id, old.thread_id, creator, old.title, now, timeout, variant=old.variant, lang=old.lang)
    return replace(new, seats=seats)


def move_chat(table: Table, old_chat_id: int, new_chat_id: int) -> Change:
    """The group ``old_chat_id`` became the supergroup ``new_chat_id`` (Bot API: a basic group
    upgraded to a supergroup; ``migrate_to_chat_id``). Idempotent: a table already elsewhere is
    unchanged (``reply`` = ``stale``)."""
    if table.chat_id != old_chat_id:
        return Change(table, reply=Answer.STALE)
    return Change(replace(table, chat_id=new_chat_id), reply=Answer.MOVED)


# -- timers --------------------------------------------------------------------------------------


def ai_pause(table: Table) -> float:
    """Seconds an AI seat waits before acting at the table's current moment: a human-like pause
    in ``table.ai_pause`` drawn from the game's seed and turn (so every process agrees), never less than
    ``table.ai_delay`` (the group's message spacing, so the board keeps up)."""
    rng = random.Random(f"{table.seed}:{table.action_count}:pause")
    return max(rng.uniform(*table.ai_pause), table.ai_delay)


def _schedule(table: Table, now: float | None) -> Table:
    """The table with the timer of its current moment: for a person, the reminder (then the turn's
    end, ``turn_end``); for an AI seat, its pause; none when the game is not running or ``now`` is
    ``None``."""
    if now is None or table.status is not Status.PLAYING or table.state is None or table.state.current is None:
        return replace(table, deadline=None, deadline_kind=None, turn_end=None)
    if table.seats[table.state.current].by_ai:
        return replace(table, deadline=now + ai_pause(table), deadline_kind="ai", turn_end=None)
    end = now + table.turn_timeout
    return replace(table, deadline=now + table.turn_timeout * REMIND_AT, deadline_kind="remind", turn_end=end)


def on_deadline(table: Table, now: float) -> Change:
    """Fire the table's deadline if it is due at ``now`` (epoch seconds), by its kind:

    - a lobby expires (closed without result);
    - ``remind``: a private reminder to the player to act (an outbox note with ``to``, their user
      id), then the timer waits for the turn's end;
    - ``turn``: the automatic move of RULES.md for the current player (:func:`core.auto.automatic_move`),
      announced to the group; after :data:`AUTO_TO_AI` in a row the AI takes the seat;
    - ``ai``: the current AI seat acts (``core.ai`` ``counting``, its random choices drawn from the
      game's seed and turn, so every process computes the same move).

    Before any of these: a table whose group took no message until its ``retire_at`` is
    retired (:func:`group_gone`, :attr:`RetireReason.UNWRITABLE`), a finished one too.

    A deadline that is not due (or no longer exists: the player acted meanwhile) changes
    nothing (``reply`` = ``stale``).
    """
    if table.group_access is GroupAccess.UNWRITABLE and table.retire_at is not None and table.retire_at <= now:
        return group_gone(table, RetireReason.UNWRITABLE)
    if table.deadline is None or table.deadline > now or not table.live:
        return Change(table, reply=Answer.STALE)
    if table.status is Status.LOBBY:
        return Change(replace(table, status=Status.CANCELLED, ended="expired", deadline=None, deadline_kind=None), reply=Answer.EXPIRED)
    assert table.state is not None and table.state.current is not None
    seat = table.state.current
    player = table.seats[seat]
    kind = table.deadline_kind
    if kind == "remind" and not player.by_ai:
        end = table.turn_end if table.turn_end is not None else now
        new, note = _announce(replace(table, deadline=end, deadline_kind="turn"), "remind", seat=seat, to=player.user_id, end=end)
        return Change(new, outbox=[note], reply=Answer.REMINDED)
    view = core.view(table.state, seat)
    if player.by_ai:
        strategy = player.bot or "counting"
        action = core.ai.make_player(strategy, seat, random.Random(f"{table.seed}:{table.action_count}")).act(view)
        return _apply(table, seat, action, now, reply=Answer.AI)
    action = core.auto.automatic_move(view)
    auto = player.auto + 1
    table = replace(table, seats=_with_seat(table.seats, seat, auto=auto, ai=auto >= AUTO_TO_AI))
    table, note = _announce(table, "auto", seat=seat, ai=auto >= AUTO_TO_AI)
    change = _apply(table, seat, action, now, reply=Answer.AUTO)
    change.outbox.insert(0, note)
    return change


def next_timer(table: Table, now: float) -> float | None:
    """When the game's one timer fires next (epoch seconds on Redis's clock), or ``None``: the
    table's own deadline while it is live; while its group takes no message, also its
    retirement (``retire_at``) and the next try of the group (every
    :data:`UNWRITABLE_PROBE_EVERY` seconds from ``unwritable_since``: a firing that is no
    deadline changes nothing, and the view sync it requests tries the group again)."""
    moments = [table.deadline] if table.live and table.deadline is not None else []
    since = table.unwritable_since
    if table.group_access is GroupAccess.UNWRITABLE and table.retire_at is not None and since is not None:
        tries = max(0, math.floor((now - since) / UNWRITABLE_PROBE_EVERY)) + 1
        moments += [table.retire_at, since + tries * UNWRITABLE_PROBE_EVERY]
    return min(moments, default=None)


# -- the group's access ----------------------------------------------------------------------------


def group_unwritable(table: Table, now: float, grace: float) -> Change:
    """The group refused a message for now (:attr:`GroupAccess.UNWRITABLE`) at ``now`` (epoch
    seconds, Redis's clock): the table is retired ``grace`` seconds later (``LOBBY_TIMEOUT``)
    unless a message goes through first. ``reply`` ``unwritable``; ``stale`` when the group is
    known unwritable already, or gone."""
    if table.group_access is not GroupAccess.WRITABLE:
        return Change(table, reply=Answer.STALE)
    return Change(replace(table, group_access=GroupAccess.UNWRITABLE, unwritable_since=now, retire_at=now + grace), reply=Answer.UNWRITABLE)


def group_writable(table: Table) -> Change:
    """A message went through to the group that had refused them: the table is no longer to be
    retired. ``reply`` ``writable``; ``stale`` unless the group was unwritable."""
    if table.group_access is not GroupAccess.UNWRITABLE:
        return Change(table, reply=Answer.STALE)
    return Change(replace(table, group_access=GroupAccess.WRITABLE, unwritable_since=None, retire_at=None), reply=Answer.WRITABLE)


def group_gone(table: Table, reason: RetireReason) -> Change:
    """The table's group is lost for good (:attr:`GroupAccess.GONE`): the table is retired. A
    live one ends without result (``cancelled``, ``ended`` = ``reason``, no timer, no group note:
    there is no group to tell); an ended one keeps its end (a finished game still counts). The
    view sync then gives up on the group and tells the people privately. ``reply`` ``retired``;
    ``stale`` when already gone."""
    if table.group_access is GroupAccess.GONE:
        return Change(table, reply=Answer.STALE)
    new = replace(table, group_access=GroupAccess.GONE, retire_at=None)
    if table.live:
        new = replace(new, status=Status.CANCELLED, ended=reason.value, deadline=None, deadline_kind=None, turn_end=None)
    return Change(new, reply=Answer.RETIRED)


def take_back(table: Table, user_id: int, now: float) -> Change:
    """The player takes their seat back from the AI (one tap, idempotent; not after leaving)."""
    if table.status is not Status.PLAYING:
        raise RefusedError(Answer.GAME_OVER if table.status is Status.OVER else Answer.NOT_RUNNING)
    seat = table.seat_of(user_id)
    if seat is None or table.seats[seat].left or not table.seats[seat].human:
        raise RefusedError(Answer.NOT_SEATED)
    if not table.seats[seat].ai:
        return Change(table, reply=Answer.TAKEN_BACK)
    new = replace(table, seats=_with_seat(table.seats, seat, ai=False, auto=0))
    if table.state is not None and table.state.current == seat:
        new = _schedule(new, now)
    return Change(new, reply=Answer.TAKEN_BACK)


# -- play ----------------------------------------------------------------------------------------


def _with_seat(seats: tuple[Seat, ...], i: int, **changes: Any) -> tuple[Seat, ...]:
    return seats[:i] + (replace(seats[i], **changes),) + seats[i + 1 :]


def act(table: Table, user_id: int, action_count: int, action: core.Action, now: float | None = None) -> Change:
    """Apply a player's action through the engine. ``action_count`` is the moment the keyboard was
    drawn for: a different one is ``stale``. Engine refusals come back as their codes. A person
    acting resets their count of automatic moves; ``now`` (epoch seconds) sets the next timer
    (see :func:`start`)."""
    if table.status is not Status.PLAYING or table.state is None:
        raise RefusedError(Answer.GAME_OVER if table.status is Status.OVER else Answer.NOT_RUNNING)
    seat = table.seat_of(user_id)
    if seat is None or table.seats[seat].left:
        raise RefusedError(Answer.NOT_SEATED)
    if action_count != table.action_count:
        raise RefusedError(Answer.STALE)
    if table.seats[seat].auto:
        table = replace(table, seats=_with_seat(table.seats, seat, auto=0))
    return _apply(table, seat, action, now, reply=None)


def _apply(table: Table, seat: int, action: core.Action, now: float | None, reply: str | None) -> Change:
    """The one way an action reaches the engine (taps, automatic and AI moves)."""
    assert table.state is not None
    try:
        state, events = core.apply(table.state, seat, action)
    except core.IllegalActionError as e:
        raise RefusedError(e.code) from None
    if isinstance(action, core.Play) and action.claim is None:
        action = core.Play(action.cards, events[0].claim)
    new = replace(table, state=state, action_count=table.action_count + 1)
    notes = []
    for ev in events:
        if isinstance(ev, (core.ChallengeResolved, core.Believed, core.GameEnded)):
            new, note = _announce(new, type(ev).__name__, **event_to_dict(ev))
            notes.append(note)
    if state.result is not None:
        new = replace(new, status=Status.OVER, ended="finished")
    return Change(_schedule(new, now), log=[action_to_dict(seat, action)], outbox=notes, reply=reply or _reply_for(action))


def _reply_for(action: core.Action) -> str:
    if isinstance(action, core.Play):
        return "played"
    if isinstance(action, core.Challenge):
        return "challenged"
    return "believed"


def event_to_dict(ev: core.Event) -> dict:
    """A JSON-ready dict of an engine event (ranks as their names)."""
    out: dict[str, Any] = {}
    for name in ev.__dataclass_fields__:  # type: ignore[union-attr]
        value = getattr(ev, name)
        if isinstance(value, core.Rank):
            value = str(value)
        elif isinstance(value, tuple):
            value = [str(v) if isinstance(v, core.Rank) else v for v in value]
        out[name] = value
    return out
