"""New messages of a game: the outbox's announcements (showdowns, beliefs, automatic moves, the
result, the turn reminder) and the short notes to a group or a player."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from babel.lists import format_list

import core
from core.cards import Rank
from tgbot.game.play import REMIND_AT
from tgbot.game.table import AnnouncementKind, Ending, Table
from tgbot.i18n import N_, Translator, translator as translator_for
from tgbot.render.board import result_line
from tgbot.render.text import (
    Rendered,
    deadline,
    duration,
    esc,
    lines,
    name,
    number,
    rank_count,
    revealed_text,
    seat_translator,
    title,
)

if TYPE_CHECKING:
    from core.stats import SeatStats


Note = dict[str, Any]


def _claim_line(table: Table, note: Note, translator: Translator) -> str:
    claim = rank_count(translator, len(note["revealed"]), Rank.from_str(note["claim"]))
    cards = revealed_text(translator, note["revealed"])
    return translator.t(
        "Claim: {player} — {claim}. Turned over: {cards}.",
        player=name(table, note["player"], translator),
        claim=claim,
        cards=cards,
    )


def _challenge_resolved(table: Table, note: Note, translator: Translator, figures: list[SeatStats] | None) -> str:
    pile = translator.n("{n} card", "{n} cards", note["pile_taken"])
    return lines(
        translator.t("{challenger}: «I doubt it!»", challenger=name(table, note["challenger"], translator)),
        _claim_line(table, note, translator),
        translator.t("No lie there!") if note["truthful"] else translator.t("A bluff!"),
        translator.t("{loser} takes the pile: {cards}.", loser=name(table, note["loser"], translator), cards=pile),
    )


def _believed(table: Table, note: Note, translator: Translator, figures: list[SeatStats] | None) -> str:
    if note["truthful"]:
        outcome = translator.t("No lie there! The pile stays where it is.")
    else:
        pile = translator.n("{n} card", "{n} cards", note["pile_taken"])
        outcome = translator.t(
            "A bluff! {taker} takes the pile: {cards}.", taker=name(table, note["taker"], translator), cards=pile
        )
    believer = translator.t("{believer}: «I believe»", believer=name(table, note["believer"], translator))
    return lines(believer, _claim_line(table, note, translator), outcome)


def _game_ended(table: Table, note: Note, translator: Translator, figures: list[SeatStats] | None) -> str:
    result = core.Result(tuple(note["places"]), note["winner"], note["draw"], note["capped"])
    rows = ["<b>" + translator.t("Game over.") + "</b>"]
    if result.capped:
        rows.append(translator.t("The limit of {cap} plays is reached.", cap=number(translator, core.PLAY_CAP)))
    rows.append(result_line(table, result, translator))
    sizes = table.state.hand_sizes if table.state is not None else None
    for seat in sorted(range(len(result.places)), key=lambda seat: (result.places[seat], seat)):
        extra = "" if sizes is None else " — " + translator.n("{n} card", "{n} cards", sizes[seat])
        if figures is not None and seat < len(figures):
            made, caught = number(translator, figures[seat].bluffs), number(translator, figures[seat].bluffs_caught)
            extra += " · " + translator.t("bluffs: {made} (caught out: {caught})", made=made, caught=caught)
        rows.append(translator.t("{place}. {player}", place=result.places[seat], player=name(table, seat)) + extra)
    return lines(*rows)


def _cancelled(table: Table, note: Note, translator: Translator, figures: list[SeatStats] | None) -> str:
    if note.get("reason") == Ending.ABANDONED:
        return translator.t("Every player has left. The game ends without result.")
    return translator.t("The game was stopped. No result.")


def _automatic_move(table: Table, note: Note, translator: Translator, figures: list[SeatStats] | None) -> str:
    player = name(table, note["seat"])
    text = "⏱ " + translator.t("{player} is out of time: an automatic move is made.", player=player)
    if note.get("ai"):
        text += "\n" + translator.t("{player}: the AI plays this seat until its player comes back.", player=player)
    return text


def _left(table: Table, note: Note, translator: Translator, figures: list[SeatStats] | None) -> str:
    return translator.t(
        "{player} leaves the game: the AI plays this seat to the end.", player=name(table, note["seat"])
    )


def _reminder(table: Table, note: Note, translator: Translator, figures: list[SeatStats] | None) -> str:
    """The private reminder, in the player's own language."""
    own = seat_translator(table, note["seat"])
    moment = deadline(own, note["end"], table.turn_timeout * (1 - REMIND_AT))
    return "⏰ " + own.t(
        "Your turn in the group «{group}»: automatic move {deadline} unless you move first.",
        group=title(table),
        deadline=moment,
    )


_RENDERERS: dict[AnnouncementKind, Callable[[Table, Note, Translator, list[SeatStats] | None], str]] = {
    AnnouncementKind.CHALLENGE_RESOLVED: _challenge_resolved,
    AnnouncementKind.BELIEVED: _believed,
    AnnouncementKind.GAME_ENDED: _game_ended,
    AnnouncementKind.CANCELLED: _cancelled,
    AnnouncementKind.AUTOMATIC_MOVE: _automatic_move,
    AnnouncementKind.LEFT: _left,
    AnnouncementKind.REMINDER: _reminder,
}


def announcement(table: Table, note: Note, figures: list[SeatStats] | None = None) -> str | None:
    """The text of an outbox note, or ``None`` for a kind this version does not know.
    ``figures`` (:func:`core.stats.game_stats`) add each player's bluffs to the result."""
    kind = AnnouncementKind.read(note.get("kind"))
    if kind is None:
        return None
    return _RENDERERS[kind](table, note, translator_for(table.lang), figures)


def showdown_line(table: Table, note: Note, translator: Translator) -> str:
    """The showdown or belief of ``note`` (an outbox note, :attr:`Table.showdown`) in one line, as
    the group's announcement tells it, in ``translator``'s language: «Вера: «Не верю!» Заявка:
    Борис — 2 дамы. На деле: 1 дама, 1 семёрка. Блеф! Борис забирает стопку — 7 карт.»"""
    kind = AnnouncementKind.read(note.get("kind"))
    assert kind in (AnnouncementKind.CHALLENGE_RESOLVED, AnnouncementKind.BELIEVED), kind
    return _RENDERERS[kind](table, note, translator, None).replace("\n", " ")


#: Short private or group notes, by code (see :func:`note`).
_NOTES = {
    "notify_on": N_("I will tell you in private chat when the next game opens here."),
    "notify_on_private": N_("I will tell you here when the next game opens in «{group}»."),
    "lobby_open": N_("A new game is open in «{group}»: join it there."),
    "forgotten": N_("Everything I stored about you has been deleted."),
    "forget_private": N_("Send /forget_me to me in private chat."),
    "kick_reply": N_("Reply with /kick to a message of the player to take off the table."),
    "no_record": N_("The record of this game is no longer available."),
    "as_channel": N_("To open a game, write as yourself, not as a channel."),
}


def note(code: str, lang: str | None, **params: str) -> str:
    """A short note by code (:data:`_NOTES`) in ``lang``."""
    return translator_for(lang).t(_NOTES[code], **params)


def board_moved(table: Table) -> Rendered:
    """An old board Telegram no longer deletes (48 hours), edited into a pointer to the new one."""
    return Rendered("⬇️ " + translator_for(table.lang).t("This board is out of date: the current one is below."))


def panel_moved(table: Table, seat: int) -> Rendered:
    """An old panel Telegram no longer deletes, edited into a pointer (the player's language)."""
    return Rendered(
        "⬇️ " + seat_translator(table, seat).t("Old cards: your current ones are in the newest message below.")
    )


def reminder_over(table: Table, seat: int) -> Rendered:
    """A turn reminder whose turn passed, when Telegram no longer deletes it."""
    return Rendered("⏰ " + seat_translator(table, seat).t("This turn in «{group}» is over.", group=title(table)))


def links_waiting(lang: str | None, tables: list[Table]) -> str:
    """Private note to a bare /start from someone several open lobbies offered their link."""
    translator = translator_for(lang)
    groups = format_list([translator.t("«{group}»", group=title(table)) for table in tables], locale=translator.lang)
    return translator.t(
        "Games in {groups} are waiting for you: tap «Join» again in the group you want to play in.", groups=groups
    )


def unreachable(table: Table, seat: int, bot_username: str) -> str:
    """Group note (posted once): a player's private chat cannot be reached."""
    translator = translator_for(table.lang)
    bot = esc(bot_username or "bot")
    return translator.t(
        "{player} can't get their cards: they should open @{bot} and press Start.", player=name(table, seat), bot=bot
    )


def retired_note(table: Table, seat: int, grace: float) -> str:
    """Private note to a player (in their language): the game was retired because the bot lost
    its group (``table.ended``: removed, the group or topic gone, or no message taken for
    ``grace`` seconds, ``LOBBY_TIMEOUT``)."""
    translator = seat_translator(table, seat)
    if table.ended == Ending.UNWRITABLE:
        return translator.t(
            "The game in «{group}» has ended without result: for {duration} I have not been allowed to post in the group.",
            group=title(table),
            duration=duration(translator, grace),
        )
    if table.ended == Ending.CHAT_GONE:
        return translator.t(
            "The game in «{group}» has ended without result: the group (or its topic) no longer exists.",
            group=title(table),
        )
    return translator.t(
        "The game in «{group}» has ended: the bot was removed from the group or may not write there. No result.",
        group=title(table),
    )
