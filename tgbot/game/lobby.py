"""A table's transitions before and around its game (lobby, start, end without result): pure
``(table, …) -> Change``, committed by the store as one compare-and-set, or :class:`RefusedError`."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import core
from core.rules import MAX_PLAYERS, MIN_PLAYERS
from tgbot.game.play import schedule
from tgbot.game.rights import Action, allowed, refusal
from tgbot.game.table import (
    AnnouncementKind,
    Answer,
    Change,
    DeadlineKind,
    Ending,
    Player,
    RefusedError,
    Seat,
    Status,
    Table,
    announce,
    with_seat,
)

#: The most join links a lobby keeps on offer at once (the oldest dropped past it).
MAX_LINK_OFFERS = 32


def open_lobby(
    game_id: str,
    chat_id: int,
    thread_id: int | None,
    creator: int,
    title: str,
    now: float,
    timeout: float,
    variant: str = "russian",
    lang: str = "ru",
) -> Table:
    """A new lobby with no players; it expires ``timeout`` seconds after its last change."""
    table = Table(game_id, chat_id, thread_id, creator, title=title, lang=lang, variant=variant, created=now)
    return _touch(table, now, timeout)


def _in_lobby(table: Table) -> None:
    if table.status is not Status.LOBBY:
        raise RefusedError(Answer.NOT_IN_LOBBY)


def _touch(table: Table, now: float, timeout: float, **changes: Any) -> Table:
    """The lobby changed: it expires ``timeout`` seconds from ``now``."""
    return replace(table, deadline=now + timeout, deadline_kind=DeadlineKind.LOBBY, **changes)


def _managed(table: Table, user_id: int | None, is_admin: bool, action: Action = Action.MANAGE_LOBBY) -> None:
    """Refuse ``action`` (:data:`~tgbot.game.rights.RIGHTS`) unless ``user_id`` may."""
    if not allowed(action, table, user_id, is_admin):
        raise RefusedError(refusal(action))


def join(table: Table, seat: Seat, now: float, timeout: float) -> Change:
    """Seat a player (idempotent). Refused when the lobby is closed or full (RULES.md)."""
    _in_lobby(table)
    if table.seat_of(seat.user_id) is not None:
        return Change(table, reply=Answer.ALREADY_JOINED)
    if len(table.seats) >= MAX_PLAYERS:
        raise RefusedError(Answer.LOBBY_FULL)
    offers = tuple(user_id for user_id in table.link_offers if user_id != seat.user_id)
    return Change(_touch(table, now, timeout, seats=(*table.seats, seat), link_offers=offers), reply=Answer.JOINED)


def offer_link(table: Table, user_id: int, strangers: frozenset[int] = frozenset()) -> Change:
    """``user_id`` tapped Join but the bot cannot write to them privately: the lobby's join deep
    link is recorded as theirs (``reply`` ``open_private``); refused when closed or full. Past
    :data:`MAX_LINK_OFFERS` the oldest offer of ``strangers`` goes, the oldest of all only when
    none is a stranger's: whoever is not in ``strangers`` counts as one of the group's regulars,
    whom no stranger pushes out (a stranger is refused ``offers_full`` instead)."""
    _in_lobby(table)
    if table.seat_of(user_id) is None and len(table.seats) >= MAX_PLAYERS:
        raise RefusedError(Answer.LOBBY_FULL)
    if link_offered_to(table, user_id):
        return Change(table, reply=Answer.OPEN_PRIVATE)
    offers = (*table.link_offers, user_id)
    while len(offers) > MAX_LINK_OFFERS:
        dropped = next((other for other in offers if other in strangers), offers[0])
        if dropped == user_id:
            raise RefusedError(Answer.OFFERS_FULL)
        offers = tuple(other for other in offers if other != dropped)
    return Change(replace(table, link_offers=offers), reply=Answer.OPEN_PRIVATE)


def link_offered_to(table: Table, user_id: int) -> bool:
    """Whether the join deep link is ``user_id``'s to use: offered to them, or they are seated."""
    return user_id in table.link_offers or table.seat_of(user_id) is not None


def indexed_people(table: Table) -> set[int]:
    """Whom the users' games index lists a table for: its people, and those its lobby offered
    a join link to (a bare /start finds it: :func:`waits_for`)."""
    return {seat.user_id for seat in table.seats if seat.human} | set(table.link_offers)


def waits_for(table: Table, user_id: int) -> bool:
    """Whether the open lobby offered ``user_id`` its join link and has not seated them yet."""
    return table.status is Status.LOBBY and user_id in table.link_offers and table.seat_of(user_id) is None


def join_by_link(table: Table, seat: Seat, now: float, timeout: float) -> Change:
    """``/start j<id>``: seat the person the link was offered to; anyone else: ``link_not_yours``."""
    if not link_offered_to(table, seat.user_id):
        raise RefusedError(Answer.LINK_NOT_YOURS)
    return join(table, seat, now, timeout)


def add_bot(
    table: Table,
    names: tuple[str, ...],
    now: float,
    timeout: float,
    strategy: str = "counting",
    *,
    user_id: int | None = None,
    is_admin: bool = False,
) -> Change:
    """Seat an AI player (creator or chat admin; ``user_id`` None: the table itself): a negative
    user id unique in the table, the first of ``names`` (msgids) no AI player uses yet."""
    _in_lobby(table)
    _managed(table, user_id, is_admin)
    if len(table.seats) >= MAX_PLAYERS:
        raise RefusedError(Answer.LOBBY_FULL)
    bots = [seat for seat in table.seats if not seat.human]
    bot_id = min([seat.user_id for seat in bots] + [0]) - 1
    name = next((name for name in names if name not in {seat.name for seat in bots}), names[0] if names else "")
    seats = (*table.seats, Seat(bot_id, name, player=Player.BOT, strategy=strategy))
    return Change(_touch(table, now, timeout, seats=seats), reply=Answer.BOT_ADDED)


def remove_bot(
    table: Table, now: float, timeout: float, *, user_id: int | None = None, is_admin: bool = False
) -> Change:
    """Take the last AI player out of the lobby (creator or chat admin; else ``no_bot``)."""
    _in_lobby(table)
    _managed(table, user_id, is_admin)
    bots = [index for index, seat in enumerate(table.seats) if not seat.human]
    if not bots:
        return Change(table, reply=Answer.NO_BOT)
    seats = table.seats[: bots[-1]] + table.seats[bots[-1] + 1 :]
    return Change(_touch(table, now, timeout, seats=seats), reply=Answer.BOT_TAKEN_OUT)


def leave(table: Table, user_id: int, now: float, timeout: float) -> Change:
    """A player leaves (idempotent): a lobby loses their seat; in a running game the AI plays it
    for the rest of the game, which ends (``abandoned``) when no person is left (RULES.md)."""
    seat = table.seat_of(user_id)
    if table.status is not Status.PLAYING:
        _in_lobby(table)
        if seat is None:
            return Change(table, reply=Answer.NOT_SEATED)
        seats = tuple(other for other in table.seats if other.user_id != user_id)
        return Change(_touch(table, now, timeout, seats=seats), reply=Answer.LEFT)
    if seat is None or not table.seats[seat].human:
        return Change(table, reply=Answer.NOT_SEATED)
    if table.seats[seat].player is Player.LEFT:
        return Change(table, reply=Answer.LEFT_GAME)
    seats = with_seat(table.seats, seat, player=Player.LEFT)
    new, note = announce(replace(table, seats=seats), AnnouncementKind.LEFT, seat=seat)
    if not any(other.present for other in seats):
        ended = replace(new, status=Status.CANCELLED, ended=Ending.ABANDONED)
        new, end = announce(ended, AnnouncementKind.CANCELLED, reason=Ending.ABANDONED)
        return Change(schedule(new, now), outbox=[note, end], reply=Answer.LEFT_GAME)
    if table.state is not None and table.state.current == seat:
        new = schedule(new, now)
    return Change(new, outbox=[note], reply=Answer.LEFT_GAME)


def member_gone(table: Table, user_id: int, now: float, timeout: float) -> Change:
    """``user_id`` left the group or was removed: their link offer goes, and they :func:`leave`."""
    if user_id in table.link_offers:
        table = replace(table, link_offers=tuple(other for other in table.link_offers if other != user_id))
    return leave(table, user_id, now, timeout)


def set_variant(table: Table, user_id: int, variant: str, is_admin: bool, now: float, timeout: float) -> Change:
    """Switch the lobby's variant (creator or chat admin); raises ``UnknownVariant``."""
    _in_lobby(table)
    _managed(table, user_id, is_admin)
    core.variant(variant)
    return Change(_touch(table, now, timeout, variant=variant), reply=Answer.VARIANT)


def set_lang(table: Table, lang: str) -> Change:
    """The group's language, while the lobby is open (``unchanged`` otherwise)."""
    if table.status is not Status.LOBBY or table.lang == lang:
        return Change(table, reply=Answer.UNCHANGED)
    return Change(replace(table, lang=lang))


def set_seat_lang(table: Table, user_id: int, lang: str | None) -> Change:
    """The private language of ``user_id``'s seat (``None``: the table's)."""
    seat = table.seat_of(user_id)
    if seat is None or table.seats[seat].lang == lang:
        return Change(table, reply=Answer.UNCHANGED)
    return Change(replace(table, seats=with_seat(table.seats, seat, lang=lang)))


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
    """Deal and start (creator or chat admin; ``user_id`` None: the table itself, at 6 seats).
    Needs 3 to 6 seats, one a person. With ``now`` (epoch seconds) the first turn's timer is set;
    ``shuffle`` shuffles the seats from ``seed``, so seat order, deal and record agree."""
    _in_lobby(table)
    _managed(table, user_id, is_admin)
    if len(table.seats) < MIN_PLAYERS:
        raise RefusedError(Answer.TOO_FEW)
    if not any(seat.human for seat in table.seats):
        raise RefusedError(Answer.NO_HUMAN)
    seats = list(table.seats)
    if shuffle:
        random.Random(f"{seed}:seats").shuffle(seats)
    state = core.new_game(len(seats), table.variant, random.Random(seed))
    new = replace(
        table,
        seats=tuple(seats),
        status=Status.PLAYING,
        state=state,
        seed=seed,
        action_count=0,
        link_offers=(),
        turn_timeout=table.turn_timeout if turn_timeout is None else turn_timeout,
        ai_delay=table.ai_delay if ai_delay is None else ai_delay,
        ai_pause=table.ai_pause if ai_pause is None else ai_pause,
    )
    return Change(schedule(new, now), deal=[hand.to_str() for hand in state.hands], reply=Answer.STARTED)


def cancel(table: Table, user_id: int | None, is_admin: bool, reason: Ending = Ending.STOPPED) -> Change:
    """End a lobby or a running game without result (creator or chat admin; ``user_id`` None:
    the bot itself). A running game's group is told, unless the bot was removed from it."""
    if not table.live:
        raise RefusedError(Answer.NOT_RUNNING)
    _managed(table, user_id, is_admin, Action.STOP_GAME)
    ended = replace(table, status=Status.CANCELLED, ended=reason, deadline=None, deadline_kind=None, turn_end=None)
    new, note = announce(ended, AnnouncementKind.CANCELLED, reason=reason)
    tell = table.status is Status.PLAYING and reason is not Ending.BOT_REMOVED
    return Change(new, outbox=[note] if tell else [], reply=Answer.CANCELLED)


def kick(table: Table, target: int, user_id: int | None, is_admin: bool, now: float, timeout: float) -> Change:
    """``/kick`` (creator or chat admin): ``target`` leaves as by :func:`leave`
    (``NOT_PLAYING`` when they have no seat of their own)."""
    if not table.live:
        raise RefusedError(Answer.NOT_RUNNING)
    _managed(table, user_id, is_admin, Action.KICK)
    change = leave(table, target, now, timeout)
    return replace(change, reply=Answer.NOT_PLAYING) if change.reply == Answer.NOT_SEATED else change


def rematch(
    old: Table, game_id: str, creator: int, now: float, timeout: float, reachable: set[int], presser_lang: str | None
) -> Table:
    """A new lobby in ended ``old``'s chat (topic), variant and language, seating in the same order
    its AI players and those of its people in ``reachable`` (the others are invited); the creator's
    seat takes ``presser_lang``, the language a new seat of theirs would store today."""
    if old.live:
        raise RefusedError(Answer.NOT_IN_LOBBY)
    seats = tuple(
        Seat(
            seat.user_id,
            seat.name,
            presser_lang if seat.human and seat.user_id == creator else seat.lang,
            Player.PERSON if seat.human else Player.BOT,
            seat.strategy,
        )
        for seat in old.seats
        if not seat.human or seat.user_id in reachable
    )
    new = open_lobby(
        game_id, old.chat_id, old.thread_id, creator, old.title, now, timeout, variant=old.variant, lang=old.lang
    )
    return replace(new, seats=seats[:MAX_PLAYERS])


def moved_to(table: Table, old_chat_id: int, new_chat_id: int) -> Change:
    """The group became the supergroup ``new_chat_id`` (``migrate_to_chat_id``); idempotent."""
    if table.chat_id != old_chat_id:
        return Change(table, reply=Answer.UNCHANGED)
    return Change(replace(table, chat_id=new_chat_id), reply=Answer.MOVED)
