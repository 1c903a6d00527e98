"""Rendering: texts and inline keyboards from tables and engine views, through the catalogs.

Every text here comes from :mod:`tgbot.i18n`; every user-supplied string (names, titles) goes
through :func:`name` / :func:`esc` for Telegram's HTML parse mode. Rendering reads
:class:`core.PlayerView` / :class:`core.PublicView` only, so hidden cards never reach a
message they do not belong in. Limits (Bot API): message text at most 4096 characters,
callback answers at most 200, callback data at most 64 bytes (checked by :mod:`tgbot.codec`).
"""

from __future__ import annotations

import hashlib
import html
import re
import time
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING
from functools import cached_property, lru_cache

from telegram import InlineKeyboardButton, InlineKeyboardMarkup
from telegram.constants import CallbackQueryLimit, MessageLimit

import core
from core.cards import RANKS, Hand, Rank

from .codec import Tap, encode
from .i18n import LANGUAGE_NAMES, LANGUAGES, N_, Np_, Translator, translator
from .model import Status, Table

if TYPE_CHECKING:
    from core.stats import SeatStats

    from .stats import Totals
    from .store import ChatSettings

__all__ = [
    "Rendered", "esc", "name", "title", "unreachable", "removed_note", "lobby", "board", "panel", "announcement", "answer",
    "leave_confirm", "timer_menu", "clock", "MAX_NAME", "BOT_NAMES", "rules", "help_text", "language_menu", "language_set",
    "private_hint", "settings_menu", "stats_text", "top_text", "stop_confirm", "plain_names", "note",
]

#: Names are cut to this many characters on screen.
MAX_NAME = 32

#: Names of bot players (msgids, translated when shown), taken in this order in a lobby.
BOT_NAMES: tuple[str, ...] = (N_("Bot Vasya"), N_("Bot Masha"), N_("Bot Petya"), N_("Bot Olya"), N_("Bot Fedya"), N_("Bot Zina"))
#: Marks an AI-played seat on the board and in the lobby.
AI_MARK = "🤖"


@dataclass(frozen=True)
class Rendered:
    """A message to show: HTML ``text`` and an optional keyboard; ``digest`` identifies the
    content, to skip edits that would not change anything."""

    text: str
    markup: InlineKeyboardMarkup | None = None

    @cached_property
    def digest(self) -> str:
        """16 hex digits over the text and every button's text, callback data and URL (the
        only button kinds this bot draws); computed once, without PTB's ``to_dict``."""
        rows = None
        if self.markup is not None:
            rows = [[(b.text, b.callback_data, b.url) for b in row] for row in self.markup.inline_keyboard]
        return hashlib.blake2b(repr((self.text, rows)).encode(), digest_size=8).hexdigest()


def plain(text: str) -> str:
    """The text Telegram shows for our HTML ``text`` (tags dropped, entities decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", "", text))


def esc(text: str) -> str:
    """Escape a user-supplied string for HTML parse mode."""
    return html.escape(text, quote=False)


_INVISIBLE = {"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"}
#: Letters and symbols that draw nothing (Hangul fillers, Braille blank, …), a favourite of
#: "invisible" names; treated as white space.
_BLANKS = {"\u115f", "\u1160", "\u3164", "\uffa0", "\u2800", "\u17b4", "\u17b5", "\u180e"}


@lru_cache(maxsize=4096)  # a pure function of two short strings, called for every name shown
def clean_name(raw: str | None, fallback: str) -> str:
    """A display name made safe: control, format and bidi characters removed, stacked
    combining marks thinned, white space folded, at most :data:`MAX_NAME` characters; the
    ``fallback`` when nothing visible is left. Not escaped (see :func:`name`)."""
    out: list[str] = []
    marks = 0
    for ch in unicodedata.normalize("NFC", raw or ""):
        cat = unicodedata.category(ch)
        if ch.isspace() or ch in _BLANKS:  # line breaks and tabs too: one line, spaces
            ch, cat = " ", "Zs"
        elif cat in _INVISIBLE:
            continue
        if cat.startswith("M"):
            marks += 1
            if marks > 2:
                continue
        else:
            marks = 0
        out.append(" " if cat.startswith("Z") else ch)
    text = " ".join("".join(out).split())
    if not any(not unicodedata.category(c).startswith(("M", "Z")) for c in text):
        return fallback
    if len(text) > MAX_NAME:
        text = text[: MAX_NAME - 1].rstrip() + "…"
    return text


def name(table: Table, seat: int, tr: Translator | None = None) -> str:
    """Seat ``seat``'s name, escaped and isolated (U+2068…U+2069) so right-to-left names do
    not reorder the sentence around them. Names are never declined or cut by a translation:
    every sentence puts them where the grammar needs no case ending. ``tr`` gives the fallback
    "Player n" (default: the table's language)."""
    tr = tr or translator(table.lang)
    fallback = tr.t("Player {n}", n=seat + 1)
    raw = table.seats[seat].name
    if table.seats[seat].bot:
        raw = tr.t(raw) if raw else fallback
    return "\u2068" + esc(clean_name(raw, fallback)) + "\u2069"


def clock(epoch: float) -> str:
    """``HH:MM:SS`` in UTC of an epoch time (deadlines on panels; edits are not live)."""
    return time.strftime("%H:%M:%S", time.gmtime(epoch))


def _marked(table: Table, seat: int) -> str:
    """The seat's name with the AI mark when the AI plays it."""
    return name(table, seat) + (" " + AI_MARK if table.seats[seat].by_ai else "")


def title(table: Table) -> str:
    """The group's title, cleaned like a name, escaped and isolated («—» when empty)."""
    return "\u2068" + esc(clean_name(table.title, "—")) + "\u2069"


def rank_name(tr: Translator, rank: Rank) -> str:
    """A rank's full name, singular («дама», "Queen", « dame », «donna»)."""
    return tr.t(_RANK_NAMES[rank])


def rank_count(tr: Translator, count: int, rank: Rank) -> str:
    """A count of one rank with the language's plural («2 дамы», "2 Queens", « 2 dames »,
    «2 donne»): the claim style in every language."""
    one, many = _RANK_PLURALS[rank]
    return tr.n(one, many, count)


def rank_short(tr: Translator, rank: Rank) -> str:
    """A rank's short label for buttons and hands (A, 2 … 10, J, Q, K or the language's own)."""
    return tr.t(_RANK_SHORT[rank])


_RANK_NAMES = {
    Rank.ACE: N_("ace"),
    Rank.TWO: N_("two"),
    Rank.THREE: N_("three"),
    Rank.FOUR: N_("four"),
    Rank.FIVE: N_("five"),
    Rank.SIX: N_("six"),
    Rank.SEVEN: N_("seven"),
    Rank.EIGHT: N_("eight"),
    Rank.NINE: N_("nine"),
    Rank.TEN: N_("ten"),
    Rank.JACK: N_("jack"),
    Rank.QUEEN: N_("queen"),
    Rank.KING: N_("king"),
}
_RANK_PLURALS = {
    Rank.ACE: Np_("{n} Ace", "{n} Aces"),
    Rank.TWO: Np_("{n} Two", "{n} Twos"),
    Rank.THREE: Np_("{n} Three", "{n} Threes"),
    Rank.FOUR: Np_("{n} Four", "{n} Fours"),
    Rank.FIVE: Np_("{n} Five", "{n} Fives"),
    Rank.SIX: Np_("{n} Six", "{n} Sixes"),
    Rank.SEVEN: Np_("{n} Seven", "{n} Sevens"),
    Rank.EIGHT: Np_("{n} Eight", "{n} Eights"),
    Rank.NINE: Np_("{n} Nine", "{n} Nines"),
    Rank.TEN: Np_("{n} Ten", "{n} Tens"),
    Rank.JACK: Np_("{n} Jack", "{n} Jacks"),
    Rank.QUEEN: Np_("{n} Queen", "{n} Queens"),
    Rank.KING: Np_("{n} King", "{n} Kings"),
}
_RANK_SHORT = {
    Rank.ACE: N_("A"),
    Rank.TWO: N_("2"),
    Rank.THREE: N_("3"),
    Rank.FOUR: N_("4"),
    Rank.FIVE: N_("5"),
    Rank.SIX: N_("6"),
    Rank.SEVEN: N_("7"),
    Rank.EIGHT: N_("8"),
    Rank.NINE: N_("9"),
    Rank.TEN: N_("10"),
    Rank.JACK: N_("J"),
    Rank.QUEEN: N_("Q"),
    Rank.KING: N_("K"),
}


def claim_text(tr: Translator, count: int, rank: Rank) -> str:
    """«2 дамы»: the count and the claimed rank (see :func:`rank_count`)."""
    return rank_count(tr, count, rank)


def revealed_text(tr: Translator, ranks: list[str]) -> str:
    """The cards turned over, grouped by rank in rank order («1 дама, 1 семёрка»)."""
    hand = Hand.from_str("".join(Rank.from_str(r).char for r in ranks))
    return ", ".join(rank_count(tr, hand[r], r) for r in hand.distinct())


def hand_text(tr: Translator, hand: Hand) -> str:
    """«A×2 · 7 · Q×3»: ranks with counts (suits never matter)."""
    if not hand:
        return tr.t("no cards")
    parts = []
    for rank in hand.distinct():
        c = hand[rank]
        parts.append(rank_short(tr, rank) + (f"×{c}" if c > 1 else ""))
    return " · ".join(parts)


def variant_name(tr: Translator, variant: str) -> str:
    return tr.t("Russian variant") if variant == "russian" else tr.t("Classic variant")


def _button(text: str, tap: Tap) -> InlineKeyboardButton:
    return InlineKeyboardButton(text, callback_data=encode(tap))


def _cap(text: str) -> str:
    """Keep a message within Telegram's 4096 characters."""
    limit = MessageLimit.MAX_TEXT_LENGTH
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- lobby and board (group) -----------------------------------------------------------------------


def lobby(table: Table) -> Rendered:
    """The lobby message: players, variant, and the join/leave/start/cancel/variant buttons."""
    tr = translator(table.lang)
    lines = [
        "<b>" + tr.t("«I doubt it» — new game") + "</b>",
        tr.t("Variant: {variant}", variant=variant_name(tr, table.variant)),
        tr.t("Players ({count}/6):", count=len(table.seats)),
    ]
    lines += [f"{i + 1}. {_marked(table, i)}" for i in range(len(table.seats))] or ["—"]
    missing = core.MIN_PLAYERS - len(table.seats)
    if missing > 0:
        lines.append(tr.n("Waiting for at least {n} more player.", "Waiting for at least {n} more players.", missing))
    else:
        lines.append(tr.t("The creator or an admin can start the game."))
    other = "classic" if table.variant == "russian" else "russian"
    markup = InlineKeyboardMarkup(
        [
            [_button(tr.t("Join"), Tap("join", table.id)), _button(tr.t("Leave"), Tap("leave", table.id))],
            [_button(tr.t("Start"), Tap("start", table.id)), _button(tr.t("Cancel"), Tap("cancel", table.id))],
            [_button(tr.t("Switch to: {variant}", variant=variant_name(tr, other)), Tap("variant", table.id, arg=other))],
            [_button(tr.t("Add a bot"), Tap("addbot", table.id))]
            + ([_button(tr.t("Remove a bot"), Tap("rmbot", table.id))] if any(s.bot for s in table.seats) else []),
        ]
    )
    return Rendered(_cap("\n".join(lines)), markup)


def board(table: Table, bot_username: str) -> Rendered:
    """The group's board: the lobby while it is open, then the table (seat order with hand
    sizes, whose turn, pile, the round's claims), then the final result."""
    if table.status is Status.LOBBY:
        return lobby(table)
    tr = translator(table.lang)
    if table.state is None:  # cancelled before the start
        text = tr.t("The lobby was closed.") if table.ended == "stopped" else tr.t("The lobby expired: nobody started the game.")
        return Rendered(text)
    pv = core.public_view(table.state)
    lines = ["<b>" + tr.t("«I doubt it»") + "</b> · " + variant_name(tr, pv.variant)]
    for i in range(pv.players):
        marker = "▶ " if pv.current == i else ""
        place = ""
        if pv.result is not None:
            place = tr.t("place {place}", place=pv.result.places[i]) + " · "
        lines.append(f"{marker}{i + 1}. {_marked(table, i)} — {place}" + tr.n("{n} card", "{n} cards", pv.hand_sizes[i]))
    lines.append("")
    lines.append(tr.t("Pile: {cards}", cards=tr.n("{n} card", "{n} cards", pv.pile_size)) + " · " + tr.t("plays: {plays}", plays=pv.plays))
    if pv.claims:
        claims = " · ".join(tr.t("{player}: {claim}", player=name(table, c.seat), claim=claim_text(tr, c.count, c.claim)) for c in pv.claims)
        lines.append(tr.t("This round: {claims}", claims=claims))
    lines.append("")
    lines.append(_status_line(table, pv, tr))
    markup = None
    if table.status is Status.PLAYING and bot_username:
        markup = InlineKeyboardMarkup([[InlineKeyboardButton(tr.t("My cards (private chat)"), url=f"https://t.me/{bot_username}")]])
    elif table.status is Status.OVER:
        markup = InlineKeyboardMarkup([[_button(tr.t("Play again"), Tap("again", table.id))]])
    return Rendered(_cap("\n".join(lines)), markup)


def _status_line(table: Table, pv: core.PublicView, tr: Translator) -> str:
    if table.status is Status.CANCELLED:
        return tr.t("The game was stopped. No result.")
    if pv.result is not None:
        return result_line(table, pv.result, tr)
    who = name(table, pv.current)  # type: ignore[arg-type]
    if pv.phase is core.Phase.FINAL_CHECK:
        last = pv.claims[-1]
        return tr.t("{player} played their last cards. {who}: believe or not?", player=name(table, last.seat), who=who)
    if pv.phase is core.Phase.CAP_CHECK:
        return tr.t("That was the last play of the game. {who}: believe or not?", who=who)
    if pv.phase is core.Phase.OPENING:
        return tr.t("{who} opens a new round.", who=who)
    return tr.t("{who} to play or to say «I doubt it!».", who=who)


def result_line(table: Table, result: core.Result, tr: Translator) -> str:
    """The result in one line: the winner, or the players sharing first place."""
    if result.draw:
        leaders = ", ".join(name(table, i, tr) for i, p in enumerate(result.places) if p == 1)
        return tr.t("Draw! First place shared by {players}.", players=leaders)
    return tr.t("{winner} wins!", winner=name(table, result.winner, tr))  # type: ignore[arg-type]


def seat_translator(table: Table, seat: int) -> Translator:
    """The translator of seat ``seat``'s private messages: ``Seat.lang``, else the table's."""
    return translator(table.seats[seat].lang or table.lang)


# -- private panel ---------------------------------------------------------------------------------


def panel(table: Table, seat: int, picks: str = "") -> Rendered:
    """A player's private panel: the group, their hand, whose turn, and on their turn the
    claim they answer with pile and hand sizes, and the keyboard of their legal choices.
    ``picks`` are the cards selected so far (compact hand string). In the seat's own language
    (``Seat.lang``, else the table's)."""
    tr = seat_translator(table, seat)
    assert table.state is not None
    v = core.view(table.state, seat)
    pv = v.public
    lines = [tr.t("Game in «{group}»", group=title(table))]
    lines.append(tr.t("Your cards ({count}): {hand}", count=v.hand.size, hand=hand_text(tr, v.hand)))
    sizes = " · ".join(f"{name(table, i, tr)} {pv.hand_sizes[i]}" for i in range(pv.players))
    lines.append(tr.t("Hands: {sizes}", sizes=sizes))
    lines.append(tr.t("Pile: {cards}", cards=tr.n("{n} card", "{n} cards", pv.pile_size)))
    if pv.claims:
        last = pv.claims[-1]
        lines.append(tr.t("Last claim: {player} — {claim}", player=name(table, last.seat, tr), claim=claim_text(tr, last.count, last.claim)))
    rows: list[list[InlineKeyboardButton]] = []
    if table.status is not Status.PLAYING:
        if pv.result is not None:
            lines.append("")
            lines.append(result_line(table, pv.result, tr))
            lines.append(tr.t("Your place: {place}", place=pv.result.places[seat]))
            # The final panel's only button: the game's record as a file.
            return Rendered(_cap("\n".join(lines)), InlineKeyboardMarkup([[_button(tr.t("Get the game's record"), Tap("rec", table.id))]]))
        lines.append(tr.t("The game was stopped. No result."))
        return Rendered(_cap("\n".join(lines)))
    lines.append("")
    me = table.seats[seat]
    if me.left:
        lines.append(tr.t("You left this game; the AI plays your seat."))
        return Rendered(_cap("\n".join(lines)))
    if me.ai:
        lines.append("<b>" + tr.t("The AI is playing for you.") + "</b>")
        rows.append([_button(tr.t("Take my seat back"), Tap("takeback", table.id))])
        if not v.my_turn:
            lines.append(tr.t("Turn: {who}", who=name(table, pv.current, tr)))  # type: ignore[arg-type]
    elif not v.my_turn:
        lines.append(tr.t("Turn: {who}", who=name(table, pv.current, tr)))  # type: ignore[arg-type]
    elif pv.answering:
        last = pv.claims[-1]
        if pv.phase is core.Phase.FINAL_CHECK:
            lines.append("<b>" + tr.t("{player} played their last cards: {claim}. Believe or not?", player=name(table, last.seat, tr), claim=claim_text(tr, last.count, last.claim)) + "</b>")
        else:
            lines.append("<b>" + tr.t("Last play of the game: {claim}. Believe or not?", claim=claim_text(tr, last.count, last.claim)) + "</b>")
        rows.append([_button(tr.t("I believe"), Tap("believe", table.id, turn=table.turn)), _button(tr.t("I doubt it!"), Tap("challenge", table.id, turn=table.turn))])
    else:
        rows += _play_rows(table, v, picks, tr, lines)
    if v.my_turn and not me.ai and table.turn_end is not None:
        lines.append("⏱ " + tr.t("Move by {time} UTC, or an automatic move is made.", time=clock(table.turn_end)))
    rows.append([_button(tr.t("Refresh"), Tap("refresh", table.id))])
    return Rendered(_cap("\n".join(lines)), InlineKeyboardMarkup(rows))


def _play_rows(table: Table, v: core.PlayerView, picks: str, tr: Translator, lines: list[str]) -> list[list[InlineKeyboardButton]]:
    picked = Hand.from_str(picks) if picks else Hand()
    required = v.required_claim
    if v.phase is core.Phase.OPENING:
        lines.append("<b>" + tr.t("Your turn: open the round. Pick 1 to 4 cards, then name a rank.") + "</b>")
    else:
        lines.append("<b>" + tr.t("Your turn: play 1 to 4 cards as {rank}, or say «I doubt it!».", rank=rank_name(tr, required)) + "</b>")  # type: ignore[arg-type]
    if picks:
        lines.append(tr.t("Picked: {cards}", cards=hand_text(tr, picked)))
    rows: list[list[InlineKeyboardButton]] = []
    row: list[InlineKeyboardButton] = []
    for rank in v.hand.distinct():
        held, chosen = v.hand[rank], picked[rank]
        if chosen < held and picked.size < core.rules.MAX_PLAY_CARDS:
            nxt = picked + Hand.from_ranks([rank])
        else:
            nxt = picked - Hand.from_ranks([rank] * chosen)
        label = rank_short(tr, rank) + (f" ×{held}" if held > 1 else "")
        if chosen:
            label = f"✅ {label} ({chosen})"
        row.append(_button(label, Tap("pick", table.id, turn=table.turn, cards=nxt.to_str())))
        if len(row) == 5:
            rows.append(row)
            row = []
    if row:
        rows.append(row)
    if picks:
        rows.append([_button(tr.t("Clear"), Tap("pick", table.id, turn=table.turn, cards=""))])
        if required is not None:
            label = tr.t("Play: {claim}", claim=claim_text(tr, picked.size, required))
            rows.append([_button(label, Tap("play", table.id, turn=table.turn, cards=picks, claim=required.char))])
        else:
            lines.append(tr.t("Name the rank you claim:"))
            claim_row: list[InlineKeyboardButton] = []
            for rank in RANKS:
                claim_row.append(_button("▶ " + rank_short(tr, rank), Tap("play", table.id, turn=table.turn, cards=picks, claim=rank.char)))
                if len(claim_row) == 5:
                    rows.append(claim_row)
                    claim_row = []
            if claim_row:
                rows.append(claim_row)
    if v.can_challenge:
        rows.append([_button(tr.t("I doubt it!"), Tap("challenge", table.id, turn=table.turn))])
    return rows


# -- announcements (new group messages) ------------------------------------------------------------


def announcement(table: Table, note: dict, figures: "list[SeatStats] | None" = None) -> str | None:
    """The text of an outbox announcement (a showdown, a belief, the result), or ``None``.
    ``figures`` (:func:`core.stats.game_stats` of the game) add each player's bluffs made and
    caught to the result."""
    tr = translator(table.lang)
    kind = note["kind"]
    if kind == "ChallengeResolved":
        revealed = revealed_text(tr, note["revealed"])
        lines = [
            tr.t("{challenger} doesn't believe {player}!", challenger=name(table, note["challenger"]), player=name(table, note["player"])),
            tr.t("Claimed: {claim}. Revealed: {cards}.", claim=claim_text(tr, len(note["revealed"]), Rank.from_str(note["claim"])), cards=revealed),
            tr.t("It was true.") if note["truthful"] else tr.t("It was a bluff!"),
            tr.t("{loser} takes the pile: {cards}.", loser=name(table, note["loser"]), cards=tr.n("{n} card", "{n} cards", note["pile_taken"])),
        ]
        return "\n".join(lines)
    if kind == "Believed":
        revealed = revealed_text(tr, note["revealed"])
        lines = [
            tr.t("{believer} believes {player}.", believer=name(table, note["believer"]), player=name(table, note["player"])),
            tr.t("Claimed: {claim}. Revealed: {cards}.", claim=claim_text(tr, len(note["revealed"]), Rank.from_str(note["claim"])), cards=revealed),
        ]
        if note["truthful"]:
            lines.append(tr.t("It was true. The pile stays."))
        else:
            lines.append(tr.t("It was a bluff! {taker} takes the pile: {cards}.", taker=name(table, note["taker"]), cards=tr.n("{n} card", "{n} cards", note["pile_taken"])))
        return "\n".join(lines)
    if kind == "GameEnded":
        result = core.Result(tuple(note["places"]), note["winner"], note["draw"], note["capped"])
        lines = ["<b>" + tr.t("Game over.") + "</b>"]
        if result.capped:
            lines.append(tr.t("The play limit of {cap} plays was reached.", cap=core.PLAY_CAP))
        lines.append(result_line(table, result, tr))
        order = sorted(range(len(result.places)), key=lambda i: (result.places[i], i))
        sizes = table.state.hand_sizes if table.state is not None else None
        for i in order:
            extra = "" if sizes is None else " — " + tr.n("{n} card", "{n} cards", sizes[i])
            if figures is not None and i < len(figures):
                extra += " · " + tr.t("bluffs: {made}, caught: {caught}", made=figures[i].bluffs, caught=figures[i].bluffs_caught)
            lines.append(tr.t("{place}. {player}", place=result.places[i], player=name(table, i)) + extra)
        return _cap("\n".join(lines))
    if kind == "cancelled":
        if note.get("reason") == "abandoned":
            return tr.t("Every player has left. The game ends without result.")
        return tr.t("The game was stopped. No result.")
    if kind == "auto":
        text = tr.t("{player} did not move in time: an automatic move was made.", player=name(table, note["seat"]))
        if note.get("ai"):
            text += "\n" + tr.t("The AI plays for {player} until they take their seat back.", player=name(table, note["seat"]))
        return text
    if kind == "left":
        return tr.t("{player} left the game; the AI plays their seat.", player=name(table, note["seat"]))
    if kind == "remind":
        seat_lang = table.seats[note["seat"]].lang or table.lang
        return translator(seat_lang).t("⏰ Your turn in «{group}»: move by {time} UTC, or an automatic move is made.", group=title(table), time=clock(note["end"]))
    return None


# -- rules, help, language choice -----------------------------------------------------------------

#: /rules: the game in the bot's words (from RULES.md: both variants, the final check, the cap, tips).
RULES = N_(
    "<b>Rules of «I doubt it»</b>\n"
    "3 to 6 players share one 52-card deck; suits do not matter, only ranks. Get rid of all your cards to win.\n\n"
    "<b>A turn.</b> Put 1 to 4 cards face down on the pile and name their rank. The number of cards is always true; the rank may be a lie. "
    "The next player either plays on (and so believes you), or says «I doubt it!».\n"
    "<b>Russian variant</b> (default): whoever opens a round names any rank; everyone else in that round must claim the same rank.\n"
    "<b>Classic variant</b>: the rank is fixed and goes up with every play of the game: A, 2, 3 … K, then A again, even after a challenge.\n\n"
    "<b>«I doubt it!»</b> Only the last play is turned over. If it was true, the doubter takes the whole pile; if it was a bluff, the player who made it does. "
    "The winner of the showdown opens the next round.\n\n"
    "<b>Going out.</b> Playing your last cards does not win yet: the next player must believe or doubt. "
    "Believed, or doubted but true: you win. Doubted and a bluff: you take the pile and play goes on. "
    "If a believed last play was a bluff, the believer takes the pile.\n\n"
    "<b>End.</b> The others are ranked by the cards they hold, fewer is better, equal counts share a place. "
    "After 300 plays the next player must believe or doubt, and the game ends: fewest cards wins, a tie for fewest is a draw.\n\n"
    "<b>With this bot.</b> /start_game in a group opens a lobby; press «Join». Your cards and buttons come here, in private chat. "
    "Pick cards, name the rank when you open a round, press «Play». The group sees hand sizes, the pile and the claims, never your cards.\n\n"
    "<b>Tips.</b> Count the cards: there are four of each rank. Play true cards when you can. Bluff small on a small pile. "
    "Distrust a player who is about to go out."
)

#: /help: how to use the bot (shorter than the rules).
HELP = N_(
    "<b>How to play with this bot</b>\n"
    "1. Open a private chat with me and press «Start» once: your cards and buttons come there.\n"
    "2. In a group, /start_game opens a lobby. Press «Join». The creator or a chat admin presses «Start» when 3 to 6 players are in; with 6 the game starts by itself.\n"
    "3. On your turn your private panel shows your hand: tap 1 to 4 cards, name the rank if you open the round, then play. "
    "Or tap «I doubt it!» to check the last play.\n"
    "4. The group sees the board, every showdown and the result.\n\n"
    "<b>Commands</b>\n"
    "/board: post the board again\n"
    "/stop_game: stop the game (creator or admin)\n"
    "/language: in a group, the group's language (admins); in private chat, your own\n"
    "/rules: the rules of the game"
)


def rules(lang: str | None) -> str:
    """The /rules text in ``lang`` (one message)."""
    return _cap(translator(lang).t(RULES))


def help_text(lang: str | None) -> str:
    """The /help text in ``lang`` (one message)."""
    return _cap(translator(lang).t(HELP))


def language_menu(lang: str | None, group: bool) -> Rendered:
    """The /language message: a prompt in ``lang`` and one button per language, each labelled
    with the language's own name; the callback carries the language code."""
    tr = translator(lang)
    text = tr.t("Choose the group's language (chat admins):") if group else tr.t("Choose the language of your private messages:")
    buttons = [_button(translator(code).t(LANGUAGE_NAMES[code]), Tap("lang", "0", arg=code)) for code in LANGUAGES]
    return Rendered(text, InlineKeyboardMarkup([buttons[:2], buttons[2:]]))


def language_set(lang: str, group: bool) -> str:
    """The confirmation after a /language choice, in the chosen language."""
    tr = translator(lang)
    language = tr.t(LANGUAGE_NAMES[lang])
    return tr.t("The group's language is now {language}.", language=language) if group else tr.t("Your private messages are now in {language}.", language=language)


def private_hint(lang: str | None, sent: bool) -> str:
    """The short group reply to /rules or /help outside a running game: sent privately, or
    the user must start the bot first."""
    tr = translator(lang)
    return tr.t("I sent it to you in private chat.") if sent else tr.t("I can't write to you privately: open a chat with me, press «Start» and ask again.")


def leave_confirm(table: Table, seat: int) -> Rendered:
    """The question «leave the running game?» with its confirming button."""
    tr = translator(table.lang)
    text = tr.t("{player}, leave the game? The AI will play your seat until the end.", player=name(table, seat))
    return Rendered(text, InlineKeyboardMarkup([[_button(tr.t("Yes, leave"), Tap("quit", table.id))]]))


def timer_menu(lang: str | None, chat_id: int, current: float, choices: tuple[int, ...]) -> Rendered:
    """The turn-timer menu for chat admins: the current setting and one button per choice
    (seconds), plus «an hour» (the timer is never off)."""
    tr = translator(lang)
    text = tr.t("Turn timer: {seconds} s. Choose:", seconds=int(current))
    row = [_button(tr.t("{seconds} s", seconds=c), Tap("timer", str(chat_id), arg=str(c))) for c in choices]
    rows = [row[:3], row[3:], [_button(tr.t("an hour"), Tap("timer", str(chat_id), arg="long"))]]
    return Rendered(text, InlineKeyboardMarkup([r for r in rows if r]))


def _mark(text: str, on: bool) -> str:
    return ("✅ " + text) if on else text


def settings_menu(lang: str | None, chat_id: int, cfg: "ChatSettings", turn: float, choices: tuple[int, ...], long: int) -> Rendered:
    """The /settings message (one message, edited in place): the chat's variant, turn timer,
    language and seating, each as a row of buttons with the current choice marked. Applies from
    the next game on."""
    tr = translator(lang)
    chat = str(chat_id)
    variant = cfg.variant or "russian"
    seconds = int(turn)
    text = "\n".join(
        [
            "<b>" + tr.t("Settings of this chat (admins)") + "</b>",
            tr.t("Variant: {variant}", variant=variant_name(tr, variant)),
            tr.t("Turn timer: {seconds} s", seconds=seconds),
            tr.t("Language: {language}", language=tr.t(LANGUAGE_NAMES[lang or "ru"])),
            tr.t("Seats: shuffled at the start") if cfg.shuffle else tr.t("Seats: in join order"),
            tr.t("Changes apply from the next game on."),
        ]
    )
    timer = [_button(_mark(tr.t("{seconds} s", seconds=c), c == seconds), Tap("settings", chat, arg=f"t{c}")) for c in choices]
    timer.append(_button(_mark(tr.t("an hour"), seconds == long), Tap("settings", chat, arg="tlong")))
    langs = [_button(_mark(translator(code).t(LANGUAGE_NAMES[code]), code == lang), Tap("settings", chat, arg=f"l{code}")) for code in LANGUAGES]
    rows = [
        [_button(_mark(variant_name(tr, v), v == variant), Tap("settings", chat, arg=f"v{v}")) for v in ("russian", "classic")],
        timer[:4],
        timer[4:],
        langs,
        [
            _button(_mark(tr.t("Join order"), not cfg.shuffle), Tap("settings", chat, arg="sjoin")),
            _button(_mark(tr.t("Shuffle seats"), cfg.shuffle), Tap("settings", chat, arg="sshuffle")),
        ],
    ]
    return Rendered(text, InlineKeyboardMarkup(rows))


def stats_text(lang: str | None, who: str, totals: "Totals", places: dict[int, int]) -> str:
    """A player's figures over all counted games (/stats). ``who`` is a raw name."""
    tr = translator(lang)
    head = "<b>" + tr.t("Statistics of {player}", player="\u2068" + esc(clean_name(who, "—")) + "\u2069") + "</b>"
    if not totals.games:
        return head + "\n" + tr.t("No finished game yet.")
    lines = [
        head,
        tr.n("{n} game", "{n} games", totals.games) + " · " + tr.t("wins: {wins}", wins=totals.wins) + " · " + tr.t("draws: {draws}", draws=totals.draws),
        tr.t("Mean place: {place}", place=f"{totals.mean_place:.2f}"),
        tr.t("Places: {places}", places=", ".join(f"{p}: {c}" for p, c in sorted(places.items()))),
        tr.t("Plays: {plays} · bluffs: {bluffs} (caught {caught}, got through {through})", plays=totals.plays, bluffs=totals.bluffs, caught=totals.bluffs_caught, through=totals.bluffs_through),
        tr.t("«I doubt it!» said: {made} (right {right})", made=totals.challenges, right=totals.challenges_right),
        tr.t("Piles taken: {piles}", piles=totals.piles_taken),
    ]
    return _cap("\n".join(lines))


def top_text(lang: str | None, rows: list[tuple[int, str, int, int]], min_games: int) -> str:
    """The chat's leaderboard (/top): (user id, raw name, wins, games) rows, best first."""
    tr = translator(lang)
    lines = ["<b>" + tr.t("Best players of this chat") + "</b>"]
    for i, (_, who, wins, games) in enumerate(rows):
        lines.append(f"{i + 1}. \u2068{esc(clean_name(who, '—'))}\u2069 — " + tr.t("wins: {wins}", wins=wins) + " · " + tr.n("{n} game", "{n} games", games))
    if not rows:
        lines.append(tr.n("Nobody has played {n} game here yet.", "Nobody has played {n} games here yet.", min_games))
    return _cap("\n".join(lines))


def stop_confirm(table: Table) -> Rendered:
    """The question «stop the running game?» with its confirming button."""
    tr = translator(table.lang)
    return Rendered(tr.t("Stop the running game? It ends without result."), InlineKeyboardMarkup([[_button(tr.t("Yes, stop the game"), Tap("stopok", table.id))]]))


def plain_names(table: Table) -> list[str]:
    """The players' names as plain text (not escaped; bots' names translated): the record's
    ``players``."""
    tr = translator(table.lang)
    return [plain(name(table, i, tr)).strip("\u2068\u2069") for i in range(len(table.seats))]


#: Short private or group notes, by code (see :func:`note`).
_NOTES = {
    "notify_on": N_("I will tell you in private chat when the next game opens here."),
    "lobby_open": N_("A new game is open in «{group}»: join it there."),
    "forgotten": N_("Everything I stored about you has been deleted."),
    "forget_private": N_("Send /forget_me to me in private chat."),
    "kick_reply": N_("Reply with /kick to a message of the player to take off the table."),
    "no_record": N_("The record of this game is no longer available."),
}


def note(code: str, lang: str | None, **params: str) -> str:
    """A short note by code (:data:`_NOTES`) in ``lang``."""
    return translator(lang).t(_NOTES[code], **params)


def unreachable(table: Table, seat: int, bot_username: str) -> str:
    """Group note (posted once): a player's private chat cannot be reached."""
    tr = translator(table.lang)
    return tr.t("{player} can't get their cards: they should open @{bot} and press Start.", player=name(table, seat), bot=esc(bot_username or "bot"))


def removed_note(table: Table, seat: int) -> str:
    """Private note to a player (in their language): the game ended because the bot lost its
    group."""
    tr = seat_translator(table, seat)
    return tr.t("The game in «{group}» has ended: the bot was removed from the group or may not write there. No result.", group=title(table))


# -- short answers to taps -------------------------------------------------------------------------

_ANSWERS = {
    "ok": "",
    "joined": N_("You joined the game."),
    "already_joined": N_("You are already in."),
    "left": N_("You left the lobby."),
    "not_seated": N_("You are not a player of this game."),
    "variant": N_("Variant changed."),
    "started": N_("The game has started!"),
    "cancelled": N_("Stopped."),
    "played": N_("Played."),
    "challenged": N_("«I doubt it!»"),
    "believed": N_("«I believe»"),
    "stale": N_("This keyboard is out of date."),
    "not_in_lobby": N_("The lobby is closed."),
    "lobby_full": N_("The table is full (6 players)."),
    "not_allowed": N_("Only the creator or a chat admin can do that."),
    "too_few": N_("At least 3 players are needed."),
    "game_over": N_("The game is over."),
    "not_running": N_("This game is not running."),
    "no_game": N_("This game no longer exists."),
    "not_your_turn": N_("It is not your turn."),
    "play_not_allowed": N_("You can't play now: believe or doubt."),
    "believe_not_allowed": N_("There is nothing to believe now."),
    "challenge_not_allowed": N_("There is nothing to doubt yet."),
    "bad_card_count": N_("Pick 1 to 4 cards."),
    "cards_not_in_hand": N_("You don't have these cards."),
    "claim_not_allowed": N_("That claim is not allowed now."),
    "open_private": N_("Start the bot in private chat first: it will seat you."),
    "refreshed": N_("Updated."),
    "bad_button": N_("This button is not valid any more."),
    "admins_only": N_("Only a chat admin can do that."),


    "anonymous": N_("Anonymous admins can't take a seat: write as yourself to play."),
    "bot_added": N_("A bot joined the table."),
    "bot_taken_out": N_("A bot left the table."),
    "no_bot": N_("There is no bot to remove."),
    "no_human": N_("At least one person must play."),
    "left_game": N_("You left the game. The AI plays your seat."),
    "taken_back": N_("Your seat is yours again."),
    "timer_set": N_("Turn timer saved for the next games."),
    "settings_saved": N_("Saved for the next games."),
    "record_sent": N_("The record is in your private chat."),
    "reopened": N_("A new lobby is open."),
    "already_open": N_("A game is already open here."),
    "try_again": N_("Something went wrong: please tap again."),
}


def answer(code: str, lang: str | None) -> str:
    """The short answer to a tap (at most 200 characters, answerCallbackQuery's limit)."""
    msgid = _ANSWERS.get(code, _ANSWERS["bad_button"])
    text = translator(lang).t(msgid) if msgid else ""
    return text[: CallbackQueryLimit.ANSWER_CALLBACK_QUERY_TEXT_LENGTH]
