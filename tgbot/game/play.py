"""Transitions of a running game: a player's action, the table's timer (reminder, automatic move,
an AI seat's turn) and taking a seat back from the AI. The engine (``core``) judges every action."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from typing import Any

import core
import core.ai
import core.auto
from core.record import action_to_dict
from tgbot.game.group import UNWRITABLE_PROBE_EVERY, group_gone
from tgbot.game.table import (
    AnnouncementKind,
    Answer,
    Change,
    DeadlineKind,
    Ending,
    GroupAccess,
    Player,
    RefusedError,
    Status,
    Table,
    announce,
    with_seat,
)

#: Automatic moves in a row after which the AI takes the seat (RULES.md, table manners).
AUTO_TO_AI = 2
#: The reminder fires when this fraction of the turn time has passed (a quarter is left).
REMIND_AT = 0.75
#: The engine events the group is told of, as outbox notes.
_ANNOUNCED = {
    core.ChallengeResolved: AnnouncementKind.CHALLENGE_RESOLVED,
    core.Believed: AnnouncementKind.BELIEVED,
    core.GameEnded: AnnouncementKind.GAME_ENDED,
}
#: The answer to a player's own action, by its type.
_REPLIES = {core.Play: Answer.PLAYED, core.Challenge: Answer.CHALLENGED, core.Believe: Answer.BELIEVED}
#: The events that turn a play over: their note stays on the table (``showdown``) for the panels.
_SHOWDOWNS = (core.ChallengeResolved, core.Believed)


def ai_pause(table: Table) -> float:
    """Seconds an AI seat waits before acting now: a pause in ``table.ai_pause`` drawn from the
    seed and the action count (every process agrees), at least ``table.ai_delay``."""
    generator = random.Random(f"{table.seed}:{table.action_count}:pause")
    return max(generator.uniform(*table.ai_pause), table.ai_delay)


def schedule(table: Table, now: float | None) -> Table:
    """The table with the timer of its current moment: for a person the reminder (then the turn's
    end, ``turn_end``), for an AI seat its pause; none when not running or ``now`` is ``None``."""
    if now is None or table.status is not Status.PLAYING or table.state is None or table.state.current is None:
        return replace(table, deadline=None, deadline_kind=None, turn_end=None)
    if table.seats[table.state.current].by_ai:
        return replace(table, deadline=now + ai_pause(table), deadline_kind=DeadlineKind.AI, turn_end=None)
    end = now + table.turn_timeout
    return replace(
        table, deadline=now + table.turn_timeout * REMIND_AT, deadline_kind=DeadlineKind.REMIND, turn_end=end
    )


def on_deadline(table: Table, now: float) -> Change:
    """Fire the table's timer if due at ``now``: a lobby expires, a reminder goes ``to`` the player,
    a turn's automatic move is made (the AI taking the seat after :data:`AUTO_TO_AI`), an AI seat
    acts; a group unwritable until ``retire_at`` retires the table first. Else ``unchanged``."""
    if table.group_access is GroupAccess.UNWRITABLE and table.retire_at is not None and table.retire_at <= now:
        return group_gone(table, Ending.UNWRITABLE)
    if table.deadline is None or table.deadline > now or not table.live:
        return Change(table, reply=Answer.UNCHANGED)
    if table.status is Status.LOBBY:
        expired = replace(table, status=Status.CANCELLED, ended=Ending.EXPIRED, deadline=None, deadline_kind=None)
        return Change(expired, reply=Answer.EXPIRED)
    assert table.state is not None and table.state.current is not None
    seat = table.state.current
    player = table.seats[seat]
    if table.deadline_kind == DeadlineKind.REMIND and not player.by_ai:
        end = table.turn_end if table.turn_end is not None else now
        reminded = replace(table, deadline=end, deadline_kind=DeadlineKind.TURN)
        new, note = announce(reminded, AnnouncementKind.REMINDER, seat=seat, to=player.user_id, end=end)
        return Change(new, outbox=[note], reply=Answer.REMINDED)
    if player.by_ai:
        generator = random.Random(f"{table.seed}:{table.action_count}")
        action = core.ai.make_player(player.strategy, seat, generator).act(core.view(table.state, seat))
        return _apply(table, seat, action, now, reply=Answer.AI)
    return _automatic_move(table, seat, now)


def _automatic_move(table: Table, seat: int, now: float) -> Change:
    """The turn ran out: the automatic move for ``seat``, announced; the AI takes the seat after
    :data:`AUTO_TO_AI` in a row."""
    assert table.state is not None
    action = core.auto.automatic_move(core.view(table.state, seat))
    auto_moves = table.seats[seat].auto_moves + 1
    player = Player.STAND_IN if auto_moves >= AUTO_TO_AI else Player.PERSON
    table = replace(table, seats=with_seat(table.seats, seat, auto_moves=auto_moves, player=player))
    table, note = announce(table, AnnouncementKind.AUTOMATIC_MOVE, seat=seat, ai=player is Player.STAND_IN)
    change = _apply(table, seat, action, now, reply=Answer.AUTO)
    change.outbox.insert(0, note)
    return change


def next_timer(table: Table, now: float) -> float | None:
    """When the game's one timer fires next (epoch seconds, Redis's clock), or ``None``: the
    table's deadline while live; while its group takes no message, also ``retire_at`` and the
    next try of the group (every :data:`UNWRITABLE_PROBE_EVERY` seconds from the first refusal)."""
    moments = [table.deadline] if table.live and table.deadline is not None else []
    since = table.unwritable_since
    if table.group_access is GroupAccess.UNWRITABLE and table.retire_at is not None and since is not None:
        tries = max(0, math.floor((now - since) / UNWRITABLE_PROBE_EVERY)) + 1
        moments += [table.retire_at, since + tries * UNWRITABLE_PROBE_EVERY]
    return min(moments, default=None)


def _running(table: Table) -> core.GameState:
    """The running game's state; refused ``game_over`` or ``not_running`` otherwise."""
    if table.status is not Status.PLAYING or table.state is None:
        raise RefusedError(Answer.GAME_OVER if table.status is Status.OVER else Answer.NOT_RUNNING)
    return table.state


def take_back(table: Table, user_id: int, now: float) -> Change:
    """The player takes their seat back from the AI (one tap, idempotent; not after leaving)."""
    state = _running(table)
    seat = table.seat_of(user_id)
    if seat is None or table.seats[seat].player is Player.BOT:
        raise RefusedError(Answer.NOT_SEATED)
    if table.seats[seat].player is Player.LEFT:
        raise RefusedError(Answer.SEAT_GONE)
    if table.seats[seat].player is Player.PERSON:
        return Change(table, reply=Answer.TAKEN_BACK)
    new = replace(table, seats=with_seat(table.seats, seat, player=Player.PERSON, auto_moves=0))
    return Change(schedule(new, now) if state.current == seat else new, reply=Answer.TAKEN_BACK)


def act(table: Table, user_id: int, action_count: int, action: core.Action, now: float | None = None) -> Change:
    """A player's action, judged by the engine (its refusals come back as their codes). An
    ``action_count`` other than the table's is ``stale``; acting resets the automatic moves."""
    _running(table)
    seat = table.seat_of(user_id)
    if seat is None:
        raise RefusedError(Answer.NOT_SEATED)
    if table.seats[seat].player is Player.LEFT:
        raise RefusedError(Answer.SEAT_GONE)
    if action_count != table.action_count:
        raise RefusedError(Answer.STALE)
    if table.seats[seat].auto_moves:
        table = replace(table, seats=with_seat(table.seats, seat, auto_moves=0))
    return _apply(table, seat, action, now, reply=None)


def _apply(table: Table, seat: int, action: core.Action, now: float | None, reply: str | None) -> Change:
    """The one way an action reaches the engine (taps, automatic and AI moves)."""
    assert table.state is not None
    try:
        state, events = core.apply(table.state, seat, action)
    except core.IllegalActionError as error:
        raise RefusedError(error.code) from None
    if isinstance(action, core.Play) and action.claim is None:  # the classic claim, filled in
        action = core.Play(action.cards, events[0].claim)  # type: ignore[union-attr]
    new = replace(table, state=state, action_count=table.action_count + 1)
    if isinstance(action, core.Play):
        new = replace(new, showdown=None)  # the round goes on: the last showdown is old news
    notes = []
    for event in events:
        if type(event) in _ANNOUNCED:
            new, note = announce(new, _ANNOUNCED[type(event)], **event_to_dict(event))
            notes.append(note)
            if type(event) in _SHOWDOWNS:
                new = replace(new, showdown=note)
    if state.result is not None:
        new = replace(new, status=Status.OVER, ended=Ending.FINISHED)
    return Change(
        schedule(new, now), log=[action_to_dict(seat, action)], outbox=notes, reply=reply or _REPLIES[type(action)]
    )


def event_to_dict(event: core.Event) -> dict[str, Any]:
    """A JSON-ready dict of an engine event (ranks as their names)."""
    out: dict[str, Any] = {}
    for name in event.__dataclass_fields__:
        value = getattr(event, name)
        if isinstance(value, core.Rank):
            value = str(value)
        elif isinstance(value, tuple):
            value = [str(item) if isinstance(item, core.Rank) else item for item in value]
        out[name] = value
    return out
