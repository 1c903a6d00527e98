"""The bot's side of a game: a :class:`Table` around the engine's state, and its transitions.

A table is a lobby first (players join and leave), then a running game (``core`` state), then
over. Every transition is a pure function ``(table, …) -> Change`` that the store commits as one
compare-and-set (see :mod:`tgbot.store`); refused transitions raise :class:`Refused` with a
machine code that :mod:`tgbot.render` turns into text. The game rules themselves stay in ``core``.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

import core
from core.record import action_to_dict
from core.rules import MAX_PLAYERS, MIN_PLAYERS

__all__ = ["Status", "Seat", "Table", "Change", "Refused", "open_lobby", "join", "leave", "set_variant", "start", "cancel", "move_chat", "act", "expire", "set_lang", "set_seat_lang", "event_to_dict"]


class Status(str, Enum):
    """Life of a table: ``lobby`` → ``playing`` → ``over``; or ``cancelled`` (stopped or
    expired, no result)."""

    LOBBY = "lobby"
    PLAYING = "playing"
    OVER = "over"
    CANCELLED = "cancelled"


class Refused(Exception):
    """A transition the table refuses. ``code`` is a machine code (render gives the text):
    ``stale``, ``not_in_lobby``, ``lobby_full``, ``not_seated``, ``not_allowed``,
    ``too_few``, ``game_over``, ``not_running`` or an engine error code."""

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
    """One game as the bot keeps it (stored as JSON in Redis, see :mod:`tgbot.store`).

    - ``id``: game id (8 characters of ``A-Za-z0-9_-``), also in every callback of the game;
    - ``chat_id``/``thread_id``: the group (and forum topic) it lives in;
    - ``creator``: user id of who opened the lobby;
    - ``title``: the group's title (shown on private panels), ``lang``: the group's language;
    - ``seats``: players in seat order (join order);
    - ``state``: the engine state once started;
    - ``turn``: engine actions applied so far (the "moment" carried by versioned callbacks);
    - ``version``: bumped by every commit (compare-and-set);
    - ``deadline``: epoch seconds when the table's timer fires (lobby expiry), or ``None``;
    - ``outbox_seq``: sequence number of the last announcement queued;
    - ``ended``: why a table ended (``finished``, ``stopped``, ``expired``, ``bot_removed``).
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
    turn: int = 0
    version: int = 0
    deadline: float | None = None
    created: float = 0.0
    seed: int | None = None
    outbox_seq: int = 0
    ended: str | None = None

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
            "turn": self.turn,
            "version": self.version,
            "deadline": self.deadline,
            "created": self.created,
            "seed": self.seed,
            "outbox_seq": self.outbox_seq,
            "ended": self.ended,
        }
        return json.dumps(d, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> "Table":
        """Inverse of :meth:`to_json`. Raises ``ValueError`` on malformed input."""
        d = json.loads(text)
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
            turn=d["turn"],
            version=d["version"],
            deadline=d["deadline"],
            created=d["created"],
            seed=d["seed"],
            outbox_seq=d["outbox_seq"],
            ended=d["ended"],
        )


@dataclass
class Change:
    """The result of a transition: the new ``table``, the record actions to append to the
    game's log, the announcements to queue in its outbox (dicts with ``seq`` and ``kind``), the
    deal when the game starts, and ``reply``, a machine code for the tap's answer."""

    table: Table
    log: list[dict] = field(default_factory=list)
    outbox: list[dict] = field(default_factory=list)
    deal: list[str] | None = None
    reply: str = "ok"


def _announce(table: Table, kind: str, **payload: Any) -> tuple[Table, dict]:
    seq = table.outbox_seq + 1
    return replace(table, outbox_seq=seq), {"seq": seq, "kind": kind, **payload}


# -- lobby ---------------------------------------------------------------------------------------


def open_lobby(
    gid: str, chat_id: int, thread_id: int | None, creator: int, title: str, now: float, timeout: float, variant: str = "russian", lang: str = "ru"
) -> Table:
    """A new lobby with no players; it expires ``timeout`` seconds after its last change."""
    return Table(gid, chat_id, thread_id, creator, title=title, lang=lang, variant=variant, deadline=now + timeout, created=now)


def _lobby(table: Table) -> None:
    if table.status is not Status.LOBBY:
        raise Refused("not_in_lobby")


def _managed(table: Table, user_id: int | None, is_admin: bool) -> None:
    """Refuse unless the table itself (``user_id`` None), a chat admin or the creator acts.
    Creator ``0`` (an anonymous admin opened the lobby) matches nobody: admins only."""
    if user_id is None or is_admin or (user_id and user_id == table.creator):
        return
    raise Refused("not_allowed")


def join(table: Table, seat: Seat, now: float, timeout: float) -> Change:
    """Seat a player (idempotent: a seated player stays where they are). Refused when the
    lobby is closed or full (6 seats, RULES.md)."""
    _lobby(table)
    if table.seat_of(seat.user_id) is not None:
        return Change(table, reply="already_joined")
    if len(table.seats) >= MAX_PLAYERS:
        raise Refused("lobby_full")
    return Change(replace(table, seats=table.seats + (seat,), deadline=now + timeout), reply="joined")


def leave(table: Table, user_id: int, now: float, timeout: float) -> Change:
    """Take a player out of the lobby (idempotent)."""
    _lobby(table)
    if table.seat_of(user_id) is None:
        return Change(table, reply="not_seated")
    seats = tuple(s for s in table.seats if s.user_id != user_id)
    return Change(replace(table, seats=seats, deadline=now + timeout), reply="left")


def set_variant(table: Table, user_id: int, variant: str, is_admin: bool, now: float, timeout: float) -> Change:
    """Switch the lobby's variant (creator or chat admin)."""
    _lobby(table)
    _managed(table, user_id, is_admin)
    core.variant(variant)  # raises UnknownVariant
    return Change(replace(table, variant=variant, deadline=now + timeout), reply="variant")


def set_lang(table: Table, lang: str) -> Change:
    """Change the table's (group's) language while its lobby is open; a running game keeps the
    language it started with. ``reply`` is ``ok``, or ``stale`` when nothing changes."""
    if table.status is not Status.LOBBY or table.lang == lang:
        return Change(table, reply="stale")
    return Change(replace(table, lang=lang))


def set_seat_lang(table: Table, user_id: int, lang: str | None) -> Change:
    """Set the private language of ``user_id``'s seat (``None``: follow the table's)."""
    seat = table.seat_of(user_id)
    if seat is None or table.seats[seat].lang == lang:
        return Change(table, reply="stale")
    seats = table.seats[:seat] + (replace(table.seats[seat], lang=lang),) + table.seats[seat + 1 :]
    return Change(replace(table, seats=seats))


def start(table: Table, user_id: int | None, is_admin: bool, seed: int) -> Change:
    """Deal and start (creator or chat admin; ``user_id`` None means the table starts itself,
    as when the sixth player joins). Needs 3 to 6 seated players."""
    _lobby(table)
    _managed(table, user_id, is_admin)
    if len(table.seats) < MIN_PLAYERS:
        raise Refused("too_few")
    state = core.new_game(len(table.seats), table.variant, random.Random(seed))
    new = replace(table, status=Status.PLAYING, state=state, seed=seed, deadline=None, turn=0)
    return Change(new, deal=[h.to_str() for h in state.hands], reply="started")


def cancel(table: Table, user_id: int | None, is_admin: bool, reason: str = "stopped") -> Change:
    """End a lobby or a running game without result (creator or chat admin; ``user_id`` None
    for the bot itself)."""
    if not table.live:
        raise Refused("not_running")
    _managed(table, user_id, is_admin)
    new, note = _announce(replace(table, status=Status.CANCELLED, ended=reason, deadline=None), "cancelled", reason=reason)
    # A game ended because the bot lost the group ("bot_removed") has no group to tell.
    tell = table.status is Status.PLAYING and reason != "bot_removed"
    return Change(new, outbox=[note] if tell else [], reply="cancelled")


def move_chat(table: Table, old_chat_id: int, new_chat_id: int) -> Change:
    """The group ``old_chat_id`` became the supergroup ``new_chat_id`` (Bot API: a basic group
    upgraded to a supergroup; ``migrate_to_chat_id``). Idempotent: a table already elsewhere is
    unchanged (``reply`` = ``stale``)."""
    if table.chat_id != old_chat_id:
        return Change(table, reply="stale")
    return Change(replace(table, chat_id=new_chat_id), reply="moved")


def expire(table: Table, now: float) -> Change:
    """Fire the table's deadline if it is due: an untouched lobby closes. A deadline that is not
    due (or no longer exists) changes nothing (``reply`` = ``stale``)."""
    if table.deadline is None or table.deadline > now or table.status is not Status.LOBBY:
        return Change(table, reply="stale")
    return Change(replace(table, status=Status.CANCELLED, ended="expired", deadline=None), reply="expired")


# -- play ----------------------------------------------------------------------------------------


def act(table: Table, user_id: int, turn: int, action: core.Action) -> Change:
    """Apply a player's action through the engine. ``turn`` is the moment the keyboard was
    drawn for: a different one is ``stale``. Engine refusals come back as their codes."""
    if table.status is not Status.PLAYING or table.state is None:
        raise Refused("game_over" if table.status is Status.OVER else "not_running")
    seat = table.seat_of(user_id)
    if seat is None:
        raise Refused("not_seated")
    if turn != table.turn:
        raise Refused("stale")
    try:
        state, events = core.apply(table.state, seat, action)
    except core.IllegalAction as e:
        raise Refused(e.code) from None
    if isinstance(action, core.Play) and action.claim is None:
        action = core.Play(action.cards, events[0].claim)
    new = replace(table, state=state, turn=table.turn + 1)
    notes = []
    for ev in events:
        if isinstance(ev, (core.ChallengeResolved, core.Believed, core.GameEnded)):
            new, note = _announce(new, type(ev).__name__, **event_to_dict(ev))
            notes.append(note)
    if state.result is not None:
        new = replace(new, status=Status.OVER, ended="finished")
    return Change(new, log=[action_to_dict(seat, action)], outbox=notes, reply=_reply_for(action))


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
