"""Who may do what at a table: one table of rights (:data:`RIGHTS`), checked by the transitions
and the handlers (what /help can state)."""

from __future__ import annotations

from enum import StrEnum

from tgbot.game.table import Answer, Table


class Rule(StrEnum):
    """Who holds a right (a chat admin holds every right but a seated person's)."""

    ANYONE = "anyone"
    SEATED = "seated"  # a person seated at the game
    MANAGER = "manager"  # the game's creator (or the table itself, acting on its own)
    PLAYER = "player"  # one of the game's people
    ADMIN = "admin"  # a chat admin only


class Action(StrEnum):
    """What someone may ask of the bot about a group's games."""

    OPEN_LOBBY = "open_lobby"
    JOIN = "join"
    PLAY = "play"  # pick, play, challenge, believe, leave, take the seat back, the record
    MANAGE_LOBBY = "manage_lobby"  # start, cancel, the variant, AI players
    STOP_GAME = "stop_game"
    KICK = "kick"
    PLAY_AGAIN = "play_again"
    TIMER = "timer"
    SETTINGS = "settings"
    GROUP_LANGUAGE = "group_language"


RIGHTS: dict[Action, Rule] = {
    Action.OPEN_LOBBY: Rule.ANYONE,
    Action.JOIN: Rule.ANYONE,
    Action.PLAY: Rule.SEATED,
    Action.MANAGE_LOBBY: Rule.MANAGER,
    Action.STOP_GAME: Rule.MANAGER,
    Action.KICK: Rule.MANAGER,
    Action.PLAY_AGAIN: Rule.PLAYER,
    Action.TIMER: Rule.ADMIN,
    Action.SETTINGS: Rule.ADMIN,
    Action.GROUP_LANGUAGE: Rule.ADMIN,
}


#: The answer refusing an action, naming the people its rule lets do it.
REFUSALS: dict[Rule, Answer] = {
    Rule.SEATED: Answer.NOT_SEATED,
    Rule.MANAGER: Answer.NOT_ALLOWED,
    Rule.PLAYER: Answer.PLAYERS_ONLY,
    Rule.ADMIN: Answer.ADMINS_ONLY,
}


def refusal(action: Action) -> Answer:
    """The answer to someone who may not do ``action``: who may, by its rule."""
    return REFUSALS[RIGHTS[action]]


def allowed(action: Action, table: Table | None, user_id: int | None, is_admin: bool) -> bool:
    """Whether ``user_id`` (``None``: the table itself; ``0``: an anonymous admin) may do
    ``action`` at ``table``; ``is_admin``: whether they are a chat admin."""
    rule = RIGHTS[action]
    if rule is Rule.ANYONE or (is_admin and rule is not Rule.SEATED):
        return True
    seat = table.seat_of(user_id) if table is not None and user_id else None
    if rule is Rule.SEATED:
        return seat is not None
    if rule is Rule.MANAGER:
        return user_id is None or bool(user_id and table is not None and user_id == table.creator)
    return rule is Rule.PLAYER and seat is not None and table is not None and table.seats[seat].human
