"""The short answers to taps (https://core.telegram.org/bots/api#answercallbackquery), keyed
by :class:`tgbot.game.table.Answer`."""

from __future__ import annotations

from telegram.constants import CallbackQueryLimit

from tgbot.game.table import Answer
from tgbot.i18n import N_, translator as translator_for

_ANSWERS: dict[str, str] = {
    Answer.OK: "",
    Answer.JOINED: N_("You joined the game."),
    Answer.ALREADY_JOINED: N_("You are already in."),
    Answer.LEFT: N_("You left the lobby."),
    Answer.NOT_SEATED: N_("You are not a player of this game."),
    Answer.VARIANT: N_("Variant changed."),
    Answer.STARTED: N_("The game has started!"),
    Answer.CANCELLED: N_("Stopped."),
    Answer.PLAYED: N_("Played."),
    Answer.CHALLENGED: N_("«I doubt it!»"),
    Answer.BELIEVED: N_("«I believe»"),
    Answer.STALE: N_("This keyboard is out of date."),
    Answer.NOT_IN_LOBBY: N_("The lobby is closed."),
    Answer.LOBBY_FULL: N_("The table is full (6 players)."),
    Answer.NOT_ALLOWED: N_("Only the creator or a chat admin can do that."),
    Answer.TOO_FEW: N_("At least 3 players are needed."),
    Answer.GAME_OVER: N_("The game is over."),
    Answer.NOT_RUNNING: N_("This game is not running."),
    Answer.NO_GAME: N_("This game no longer exists."),
    Answer.LINK_NOT_YOURS: N_("This link is not for you. To play, tap «Join» under the lobby in your group."),
    Answer.NOT_YOUR_TURN: N_("It is not your turn."),
    Answer.PLAY_NOT_ALLOWED: N_("You can't play now: believe or doubt."),
    Answer.BELIEVE_NOT_ALLOWED: N_("There is nothing to believe now."),
    Answer.CHALLENGE_NOT_ALLOWED: N_("There is nothing to doubt yet."),
    Answer.BAD_CARD_COUNT: N_("Pick 1 to 4 cards."),
    Answer.CARDS_NOT_IN_HAND: N_("You don't have these cards."),
    Answer.CLAIM_NOT_ALLOWED: N_("That claim is not allowed now."),
    Answer.OPEN_PRIVATE: N_("Start the bot in private chat first: it will seat you."),
    Answer.REFRESHED: N_("Updated."),
    Answer.BAD_BUTTON: N_("This button is not valid any more."),
    Answer.ADMINS_ONLY: N_("Only a chat admin can do that."),
    Answer.ANONYMOUS: N_("Anonymous admins can't take a seat: write as yourself to play."),
    Answer.BOT_ADDED: N_("A bot joined the table."),
    Answer.BOT_TAKEN_OUT: N_("A bot left the table."),
    Answer.NO_BOT: N_("There is no bot to remove."),
    Answer.NO_HUMAN: N_("At least one person must play."),
    Answer.LEFT_GAME: N_("You left the game. The AI plays your seat."),
    Answer.TAKEN_BACK: N_("Your seat is yours again."),
    Answer.TIMER_SET: N_("Turn timer saved for the next games."),
    Answer.SETTINGS_SAVED: N_("Saved for the next games."),
    Answer.RECORD_SENT: N_("The record is in your private chat."),
    Answer.RECORD_AGAIN: N_("The record was already sent to your private chat."),
    Answer.RECORD_NOT_YET: N_("The record comes once the game is over."),
    Answer.REOPENED: N_("A new lobby is open."),
    Answer.ALREADY_OPEN: N_("A game is already open here."),
    Answer.TRY_AGAIN: N_("Something went wrong: please tap again."),
    Answer.NOT_FOR_YOU: N_("This button is not for you."),
    Answer.NOT_A_MEMBER: N_("Join the group first: only its members can take a seat."),
    Answer.PLAYERS_ONLY: N_("Only the last game's players or a chat admin can do that."),
    Answer.NOT_PLAYING: N_("That person isn't playing in this game."),
    Answer.SEAT_GONE: N_("You are no longer in this game: the AI has taken your seat."),
    Answer.OFFERS_FULL: N_(
        "Too many people are waiting for a link. Open a private chat with me, press «Start», then tap «Join» again."
    ),
}


def answer(code: str, lang: str | None) -> str:
    """The short answer to a tap with code ``code`` (an :class:`Answer` or an engine refusal's
    code; an unknown one reads as :attr:`Answer.BAD_BUTTON`), at most 200 characters."""
    msgid = _ANSWERS.get(code, _ANSWERS[Answer.BAD_BUTTON])
    text = translator_for(lang).t(msgid) if msgid else ""
    return text[: CallbackQueryLimit.ANSWER_CALLBACK_QUERY_TEXT_LENGTH]
