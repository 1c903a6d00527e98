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
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING
from functools import cached_property, lru_cache

from babel.numbers import format_decimal
from telegram import InlineKeyboardButton, InlineKeyboardMarkup
from telegram.constants import CallbackQueryLimit, MessageLimit

import core
from core.cards import RANKS, Hand, Rank

from tgbot.codec import Tap, encode, person
from tgbot.i18n import LANGUAGE_NAMES, LANGUAGES, N_, Np_, Translator, seat_language, translator
from tgbot.game.play import REMIND_AT
from tgbot.game.table import Answer, Player, RetireReason, Status, Table

if TYPE_CHECKING:
    from core.stats import SeatStats

    from tgbot.storage.stats import Totals
    from tgbot.storage.records import ChatSettings

__all__ = [
    "Rendered", "esc", "name", "title", "group_title", "unreachable", "removed_note", "retired_note", "lobby", "board", "panel", "announcement", "answer",
    "leave_confirm", "timer_menu", "MAX_NAME", "BOT_NAMES", "rules", "help_text", "language_menu", "language_set",
    "private_hint", "settings_menu", "stats_text", "top_text", "stop_confirm", "plain_names", "note", "deadline", "duration",
    "number", "ordinal", "place_text", "rank_due", "BELIEVE", "CHALLENGE", "PLAY",
]

#: Names are cut to this many characters on screen.
MAX_NAME = 32

#: Names of bot players (msgids, translated when shown), taken in this order in a lobby.
BOT_NAMES: tuple[str, ...] = (N_("Bot Vasya"), N_("Bot Masha"), N_("Bot Petya"), N_("Bot Olya"), N_("Bot Fedya"), N_("Bot Zina"))
#: Marks an AI-played seat on the board and in the lobby.
AI_MARK = "🤖"

#: Button styles (Bot API ``InlineKeyboardButton.style``): green for «Верю», red for «Не верю!»,
#: blue for the buttons that put cards on the pile.
BELIEVE, CHALLENGE, PLAY = "success", "danger", "primary"


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
            rows = [[(b.text, b.callback_data, b.url, b.style) for b in row] for row in self.markup.inline_keyboard]
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
    if not table.seats[seat].human:
        raw = tr.t(raw) if raw else fallback
    return "\u2068" + esc(clean_name(raw, fallback)) + "\u2069"


def number(tr: Translator, value: float, fmt: str | None = None) -> str:
    """``value`` written the way ``tr``'s language writes numbers (Babel's ``format_decimal``:
    «3,25» in Russian, French and Italian, "3.25" in English; thousands grouped)."""
    return format_decimal(value, format=fmt, locale=tr.lang)


def duration(tr: Translator, seconds: float, short: bool = False) -> str:
    """A span of time as people say it: «90 секунд», «3 минуты», «1 час» (``short``: the
    button forms «90 с», «3 мин», «1 час»). Whole minutes and hours are named as such."""
    s = max(0, round(seconds))
    if s and s % 3600 == 0:
        return tr.n("{n} hour", "{n} hours", s // 3600)
    if s >= 60 and s % 60 == 0 or s >= 600:
        m = round(s / 60)
        return tr.t("{n} min", n=m) if short else tr.n("{n} minute", "{n} minutes", m)
    return tr.t("{n} s", n=s) if short else tr.n("{n} second", "{n} seconds", s)


def deadline(tr: Translator, end: float, left: float) -> str:
    """A moment ``end`` (epoch seconds) as Telegram's date-time entity, relative ("in 2
    minutes", counted live and shown in each reader's own language by their client); the text
    inside, for clients that do not know the entity, is the duration ``left`` («примерно через
    90 секунд»), never a clock time. ``left`` is given, not measured, so that renders of one
    moment are equal."""
    fallback = _relative(tr, left)
    return f'<tg-time unix="{int(end)}" format="r">{esc(fallback)}</tg-time>'


def _relative(tr: Translator, seconds: float) -> str:
    """«примерно через 90 секунд», "in about 90 seconds": a time ahead, as a duration."""
    s = max(1, round(seconds))
    if s % 3600 == 0:
        return tr.n("in about {n} hour", "in about {n} hours", s // 3600)
    if s >= 60 and s % 60 == 0 or s >= 600:
        return tr.n("in about {n} minute", "in about {n} minutes", round(s / 60))
    return tr.n("in about {n} second", "in about {n} seconds", s)


#: Ordinal numbers for places 1 to 6 (msgids; each language writes its own: «1-е», "1st",
#: « 1re », «1º»). Babel knows ordinal plural categories but not these forms.
_ORDINALS = {1: N_("1st"), 2: N_("2nd"), 3: N_("3rd"), 4: N_("4th"), 5: N_("5th"), 6: N_("6th")}


def ordinal(tr: Translator, place: int) -> str:
    """«2-е», "2nd", « 2e », «2º» (places 1 to 6; beyond, the bare number)."""
    return tr.t(_ORDINALS[place]) if place in _ORDINALS else number(tr, place)


def place_text(tr: Translator, place: int) -> str:
    """«2-е место», "2nd place", « 2e place », «2º posto»."""
    return tr.t("{ordinal} place", ordinal=ordinal(tr, place))


def _marked(table: Table, seat: int) -> str:
    """The seat's name with the AI mark when the AI plays it."""
    return name(table, seat) + (" " + AI_MARK if table.seats[seat].by_ai else "")


def title(table: Table) -> str:
    """The game's group's title (:func:`group_title`)."""
    return group_title(table.title)


def group_title(raw: str) -> str:
    """A group's title, cleaned like a name, escaped and isolated («—» when empty)."""
    return "\u2068" + esc(clean_name(raw, "—")) + "\u2069"


def rank_count(tr: Translator, count: int, rank: Rank) -> str:
    """A count of one rank with the language's plural («2 дамы», "2 Queens", « 2 dames »,
    «2 donne»): the claim style in every language."""
    one, many = _RANK_PLURALS[rank]
    return tr.n(one, many, count)


def rank_due(tr: Translator, rank: Rank) -> str:
    """The rank as the cards to put down, in the form a language uses after "put down"
    (Russian accusative plural, animate for Т, В, Д, К: «кладите тузов», «кладите семёрки»;
    "Sevens"; « des dames »; «donne»)."""
    return tr.t(_RANK_DUE[rank])


def rank_short(tr: Translator, rank: Rank) -> str:
    """A rank's short label for buttons and hands (A, 2 … 10, J, Q, K or the language's own)."""
    return tr.t(_RANK_SHORT[rank])


#: The rank as what is put down ("play Sevens"): see :func:`rank_due`.
_RANK_DUE = {
    Rank.ACE: N_("Aces"),
    Rank.TWO: N_("Twos"),
    Rank.THREE: N_("Threes"),
    Rank.FOUR: N_("Fours"),
    Rank.FIVE: N_("Fives"),
    Rank.SIX: N_("Sixes"),
    Rank.SEVEN: N_("Sevens"),
    Rank.EIGHT: N_("Eights"),
    Rank.NINE: N_("Nines"),
    Rank.TEN: N_("Tens"),
    Rank.JACK: N_("Jacks"),
    Rank.QUEEN: N_("Queens"),
    Rank.KING: N_("Kings"),
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


def variant_short(tr: Translator, variant: str) -> str:
    """The variant's name on a button of a row («Русский», «Классический»)."""
    return tr.t("Russian rules") if variant == "russian" else tr.t("Classic rules")


def _button(text: str, tap: Tap, style: str | None = None) -> InlineKeyboardButton:
    return InlineKeyboardButton(text, callback_data=encode(tap), style=style)


#: A token of the bot's HTML: a tag (group 1: "/" of a closing tag, group 2: its name), an
#: entity (&amp; &lt; &gt; &quot; &#NN;), or one character.
_HTML_TOKEN = re.compile(r"<(/?)([A-Za-z-]+)(?:\s[^>]*)?>|&(?:#[0-9]+|#x[0-9A-Fa-f]+|[A-Za-z]+);|.", re.S)


def _units(text: str) -> int:
    """Length in UTF-16 code units (Telegram's unit: an emoji outside the BMP counts 2)."""
    return len(text.encode("utf-16-le")) // 2


def _cap(text: str, limit: int = MessageLimit.MAX_TEXT_LENGTH) -> str:
    """Keep a message within Telegram's limit as Telegram counts it: the text left after the
    HTML is parsed (tags count nothing, an entity one character), in UTF-16 code units. A
    longer one is cut at a whole character or entity, ends with «…», and every tag still open
    there is closed, so the HTML stays valid."""
    if _units(text) <= limit:
        return text  # the usual case: the source is never shorter than what Telegram counts
    tokens = list(_HTML_TOKEN.finditer(text))
    sizes = [0 if m.group(2) is not None else (1 if m.group().startswith("&") and len(m.group()) > 1 else _units(m.group())) for m in tokens]
    if sum(sizes) <= limit:
        return text
    out: list[str] = []
    open_tags: list[str] = []
    used, budget = 0, limit - 1  # room for the ellipsis
    for m, size in zip(tokens, sizes):
        if m.group(2) is not None:
            tag = m.group(2).lower()
            if m.group(1):
                if tag in open_tags:
                    del open_tags[len(open_tags) - 1 - open_tags[::-1].index(tag)]
            else:
                open_tags.append(tag)
            out.append(m.group())
            continue
        if used + size > budget:
            break
        used += size
        out.append(m.group())
    out.append("…")
    out.extend(f"</{tag}>" for tag in reversed(open_tags))
    return "".join(out)


# -- lobby and board (group) -----------------------------------------------------------------------


def lobby(table: Table) -> Rendered:
    """The lobby message: players, variant, and the join/leave/start/cancel/variant buttons."""
    tr = translator(table.lang)
    lines = [
        "<b>" + tr.t("«I doubt it»: a new game, join in") + "</b>",
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
            [_button(tr.t("Switch to the Russian variant") if other == "russian" else tr.t("Switch to the classic variant"), Tap("variant", table.id, arg=other))],
            [_button(tr.t("Add a bot"), Tap("addbot", table.id))]
            + ([_button(tr.t("Remove a bot"), Tap("rmbot", table.id))] if any(not s.human for s in table.seats) else []),
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
            place = place_text(tr, pv.result.places[i]) + " · "
        lines.append(f"{marker}{i + 1}. {_marked(table, i)} — {place}" + tr.n("{n} card", "{n} cards", pv.hand_sizes[i]))
    lines.append("")
    lines.append(tr.t("Pile: {cards}", cards=tr.n("{n} card", "{n} cards", pv.pile_size)) + " · " + tr.t("plays: {plays}", plays=number(tr, pv.plays)))
    if pv.claims:
        claims = " · ".join(tr.t("{player} — {claim}", player=name(table, c.seat), claim=claim_text(tr, c.count, c.claim)) for c in pv.claims)
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
        return tr.t("{player} has played their last cards. {who}, do you believe it?", player=name(table, last.seat), who=who)
    if pv.phase is core.Phase.CAP_CHECK:
        return tr.t("That was the last play of the game. {who}, do you believe it?", who=who)
    due = pv.required_claim
    if pv.phase is core.Phase.OPENING:
        if due is None:
            return tr.t("{who} opens a new round and names the cards.", who=who)
        return tr.t("{who} opens a new round: {ranks} are due.", who=who, ranks=rank_due(tr, due))
    return tr.t("{who} to play {ranks} or to say «I doubt it!».", who=who, ranks=rank_due(tr, due))  # type: ignore[arg-type]



def result_line(table: Table, result: core.Result, tr: Translator) -> str:
    """The result in one line: the winner, or the players sharing first place."""
    if result.draw:
        leaders = ", ".join(name(table, i, tr) for i, p in enumerate(result.places) if p == 1)
        return tr.t("Draw! First place shared by {players}.", players=leaders)
    return tr.t("{winner} wins!", winner=name(table, result.winner, tr))  # type: ignore[arg-type]


def seat_translator(table: Table, seat: int) -> Translator:
    """The translator of seat ``seat``'s private messages: ``Seat.lang``, else the table's."""
    return translator(seat_language(table, seat))


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
    lines = [tr.t("Game in the group «{group}»", group=title(table))]
    lines.append(tr.t("Your cards ({count}): {hand}", count=v.hand.size, hand=hand_text(tr, v.hand)))
    sizes = " · ".join(f"{name(table, i, tr)} {pv.hand_sizes[i]}" for i in range(pv.players))
    lines.append(tr.t("Hands: {sizes}", sizes=sizes))
    lines.append(tr.t("Pile: {cards}", cards=tr.n("{n} card", "{n} cards", pv.pile_size)))
    if pv.claims:
        last = pv.claims[-1]
        lines.append(tr.t("Last claim: {player} — {claim}", player=name(table, last.seat, tr), claim=claim_text(tr, last.count, last.claim)))
    due = pv.required_claim
    rows: list[list[InlineKeyboardButton]] = []
    if table.status is not Status.PLAYING:
        if pv.result is not None:
            lines.append("")
            lines.append(result_line(table, pv.result, tr))
            lines.append(tr.t("Your result: {place}", place=place_text(tr, pv.result.places[seat])))
            # The final panel's only button: the game's record as a file.
            return Rendered(_cap("\n".join(lines)), InlineKeyboardMarkup([[_button(tr.t("Get the game's record"), Tap("rec", table.id))]]))
        lines.append(tr.t("The game was stopped. No result."))
        return Rendered(_cap("\n".join(lines)))
    lines.append("")
    me = table.seats[seat]
    if me.player is Player.LEFT:
        lines.append(tr.t("You left this game; the AI plays your seat."))
        return Rendered(_cap("\n".join(lines)))
    if me.by_ai:
        lines.append("<b>" + tr.t("The AI is playing for you.") + "</b>")
        rows.append([_button(tr.t("Take my seat back"), Tap("takeback", table.id))])
        if not v.my_turn:
            lines.append(_turn_line(table, pv, tr, due))
    elif not v.my_turn:
        lines.append(_turn_line(table, pv, tr, due))
    elif pv.answering:
        last = pv.claims[-1]
        if pv.phase is core.Phase.FINAL_CHECK:
            lines.append("<b>" + tr.t("{player} has played their last cards: {claim}. Do you believe it?", player=name(table, last.seat, tr), claim=claim_text(tr, last.count, last.claim)) + "</b>")
        else:
            lines.append("<b>" + tr.t("The last play of the game: {claim}. Do you believe it?", claim=claim_text(tr, last.count, last.claim)) + "</b>")
        rows.append([_button(tr.t("I believe"), Tap("believe", table.id, action_count=table.action_count), BELIEVE)])
        rows.append([_button(tr.t("I doubt it!"), Tap("challenge", table.id, action_count=table.action_count), CHALLENGE)])
    else:
        head = len(lines)  # the turn's heading: the deadline goes right under it, above the prompts
        rows += _play_rows(table, v, picks, tr, lines)
    if v.my_turn and not me.by_ai and table.turn_end is not None:
        timer = "⏱ " + tr.t("Automatic move {deadline} unless you move first.", deadline=deadline(tr, table.turn_end, table.turn_timeout))
        if pv.answering:
            lines.append(timer)
        else:
            lines.insert(head + 1, timer)
    rows.append([_button(tr.t("Refresh"), Tap("refresh", table.id))])
    return Rendered(_cap("\n".join(lines)), InlineKeyboardMarkup(rows))


def _turn_line(table: Table, pv: core.PublicView, tr: Translator, due: Rank | None) -> str:
    """Whose turn it is, on a panel that is not theirs, with the rank due when one is."""
    who = name(table, pv.current, tr)  # type: ignore[arg-type]
    if pv.answering:
        return tr.t("Turn: {who} (believe or not)", who=who)
    if due is None:
        return tr.t("Turn: {who} (opens the round and names the cards)", who=who)
    return tr.t("Turn: {who} · {ranks} are due", who=who, ranks=rank_due(tr, due))


#: Card buttons per row of the panel (see tests/tgbot/test_keyboards.py for the width budget).
PICKS_PER_ROW = 4
CLAIMS_PER_ROW = 5


def _play_rows(table: Table, v: core.PlayerView, picks: str, tr: Translator, lines: list[str]) -> list[list[InlineKeyboardButton]]:
    picked = Hand.from_str(picks) if picks else Hand()
    required = v.required_claim
    if v.phase is core.Phase.OPENING and required is None:
        lines.append("<b>" + tr.t("Your turn, and you open the round: pick 1 to 4 cards, then say what they are.") + "</b>")
    elif v.phase is core.Phase.OPENING:
        lines.append("<b>" + tr.t("Your turn, and you open the round: play 1 to 4 {ranks}.", ranks=rank_due(tr, required)) + "</b>")
    else:
        lines.append("<b>" + tr.t("Your turn: play 1 to 4 {ranks} or say «I doubt it!».", ranks=rank_due(tr, required)) + "</b>")  # type: ignore[arg-type]
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
        short = rank_short(tr, rank)
        if not chosen:
            label = short + (f" ×{held}" if held > 1 else "")
        else:
            label = f"✓{short} {chosen}/{held}" if held > 1 else f"✓ {short}"
        row.append(_button(label, Tap("pick", table.id, action_count=table.action_count, cards=nxt.to_str())))
        if len(row) == PICKS_PER_ROW:
            rows.append(row)
            row = []
    if row:
        rows.append(row)
    if picks:
        rows.append([_button(tr.t("Clear"), Tap("pick", table.id, action_count=table.action_count, cards=""))])
        if required is not None:
            label = tr.t("Play: {claim}", claim=claim_text(tr, picked.size, required))
            rows.append([_button(label, Tap("play", table.id, action_count=table.action_count, cards=picks, claim=required.char), PLAY)])
        else:
            lines.append(tr.t("What do you claim? Tap it to play:"))
            claim_row: list[InlineKeyboardButton] = []
            for rank in RANKS:
                claim_row.append(_button("▶ " + rank_short(tr, rank), Tap("play", table.id, action_count=table.action_count, cards=picks, claim=rank.char), PLAY))
                if len(claim_row) == CLAIMS_PER_ROW:
                    rows.append(claim_row)
                    claim_row = []
            if claim_row:
                rows.append(claim_row)
    if v.can_challenge:
        rows.append([_button(tr.t("I doubt it!"), Tap("challenge", table.id, action_count=table.action_count), CHALLENGE)])
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
            tr.t("{challenger}: «I doubt it!»", challenger=name(table, note["challenger"])),
            tr.t("Claim: {player} — {claim}. Turned over: {cards}.", player=name(table, note["player"]), claim=claim_text(tr, len(note["revealed"]), Rank.from_str(note["claim"])), cards=revealed),
            tr.t("No lie there!") if note["truthful"] else tr.t("A bluff!"),
            tr.t("{loser} takes the pile: {cards}.", loser=name(table, note["loser"]), cards=tr.n("{n} card", "{n} cards", note["pile_taken"])),
        ]
        return _cap("\n".join(lines))
    if kind == "Believed":
        revealed = revealed_text(tr, note["revealed"])
        lines = [
            tr.t("{believer}: «I believe»", believer=name(table, note["believer"])),
            tr.t("Claim: {player} — {claim}. Turned over: {cards}.", player=name(table, note["player"]), claim=claim_text(tr, len(note["revealed"]), Rank.from_str(note["claim"])), cards=revealed),
        ]
        if note["truthful"]:
            lines.append(tr.t("No lie there! The pile stays where it is."))
        else:
            lines.append(tr.t("A bluff! {taker} takes the pile: {cards}.", taker=name(table, note["taker"]), cards=tr.n("{n} card", "{n} cards", note["pile_taken"])))
        return _cap("\n".join(lines))
    if kind == "GameEnded":
        result = core.Result(tuple(note["places"]), note["winner"], note["draw"], note["capped"])
        lines = ["<b>" + tr.t("Game over.") + "</b>"]
        if result.capped:
            lines.append(tr.t("The limit of {cap} plays is reached.", cap=number(tr, core.PLAY_CAP)))
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
        text = "⏱ " + tr.t("{player} is out of time: an automatic move is made.", player=name(table, note["seat"]))
        if note.get("ai"):
            text += "\n" + tr.t("{player}: the AI plays this seat until its player comes back.", player=name(table, note["seat"]))
        return text
    if kind == "left":
        return tr.t("{player} leaves the game: the AI plays this seat to the end.", player=name(table, note["seat"]))
    if kind == "remind":
        seat_tr = seat_translator(table, note["seat"])
        left = table.turn_timeout * (1 - REMIND_AT)
        return "⏰ " + seat_tr.t("Your turn in the group «{group}»: automatic move {deadline} unless you move first.", group=title(table), deadline=deadline(seat_tr, note["end"], left))
    return None


# -- rules, help, language choice -----------------------------------------------------------------

#: /rules: the game in the bot's words (from RULES.md: both variants, no passing, the final
#: check, the cap, the timer, tips).
RULES = N_(
    "<b>«I doubt it»: the rules</b>\n"
    "3 to 6 players, one 52-card deck. Suits do not matter, only what the cards are: four Aces, four Twos and so on. "
    "All cards are dealt. The first to get rid of all their cards wins.\n\n"
    "<b>A turn.</b> Put 1 to 4 cards face down on the pile and say what they are. The number of cards is always true; "
    "what you say may be a lie. The next player either plays on, and so believes you, or says «I doubt it!». "
    "Passing is not allowed.\n"
    "<b>Russian variant</b> (the usual one): whoever opens a round says any cards they like; for the rest of the round "
    "everyone claims the same.\n"
    "<b>Classic variant</b>: what is claimed is set and goes up with every play of the game: Aces, Twos, Threes … Kings, "
    "then Aces again, after a showdown too.\n\n"
    "<b>«I doubt it!»</b> Only the last play is turned over. If it is true, whoever doubted takes the whole pile; "
    "if it is a bluff, whoever played it does. The one who was right opens the next round.\n\n"
    "<b>Last cards.</b> Playing your last cards does not win yet: the next player must say «I believe» or «I doubt it!». "
    "Believed: you win, even with a bluff (the believer then takes the pile). Doubted and true: you win. "
    "Doubted and a bluff: you take the pile and the game goes on.\n\n"
    "<b>End.</b> The others are placed by the cards left in their hands: fewer is better, equal counts share a place. "
    "After 300 plays the next player must believe or doubt, and the game ends: fewest cards wins, "
    "several with the fewest share first place.\n\n"
    "<b>Time.</b> Each turn has a time limit (set by the chat's admins). If it runs out, the bot makes a move for you: one card. "
    "After two such moves in a row the AI plays your seat until you tap «Take my seat back».\n\n"
    "<b>Tips.</b> Count the cards: there are only four of each. Play true cards when you can. "
    "Bluff with one card while the pile is small: getting caught costs little then. "
    "Be wary of a player who is about to run out of cards."
)

#: /help: how to use the bot, every command, the timer, automatic moves and AI seats.
HELP = N_(
    "<b>How to play with this bot</b>\n"
    "1. Open a private chat with me and press «Start» once: your cards and buttons come there.\n"
    "2. In a group, /start_game opens the lobby; press «Join». The creator or a chat admin presses «Start game» "
    "when 3 to 6 are in; with 6 the game starts by itself. «Add a bot» seats the AI.\n"
    "3. On your turn your private panel shows your cards: tap 1 to 4, say what they are if you open the round, play. "
    "Or tap «I doubt it!».\n"
    "4. The group sees the board, every showdown and the result.\n\n"
    "<b>Time.</b> Your panel shows how long you have. A quarter before the end I remind you; then an automatic move "
    "is made. After two in a row the AI plays for you: «Take my seat back» on your panel returns it.\n\n"
    "<b>In a group</b>\n"
    "/start_game: open a lobby\n"
    "/board: show the board again\n"
    "/add_bot: seat the AI in the lobby\n"
    "/leave: leave the game (the AI plays your seat to the end)\n"
    "/stats: your statistics (as a reply: someone else's)\n"
    "/top: the best players of the chat\n"
    "/notify_me: a private note when the next game opens\n"
    "<b>For the creator or admins</b>\n"
    "/stop_game: stop the game\n"
    "/kick (as a reply): the AI takes that player's seat\n"
    "/timer: the time for a turn\n"
    "/settings: variant, timer, language, seating\n"
    "/language: the group's language\n"
    "<b>In private chat</b>\n"
    "/language: your own language\n"
    "/forget_me: delete everything I store about you\n"
    "/rules: the rules · /help: this help"
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
    return Rendered(text, InlineKeyboardMarkup([[_button(tr.t("Yes, leave"), Tap("quit", table.id, arg=str(seat)))]]))


def timer_menu(lang: str | None, chat_id: int, current: float, choices: tuple[int, ...]) -> Rendered:
    """The turn-timer menu for chat admins: the current setting and one button per choice
    (seconds), plus «an hour» (the timer is never off)."""
    tr = translator(lang)
    text = tr.t("Time for a turn: {duration}. Choose:", duration=duration(tr, current))
    row = [_button(duration(tr, c, short=True), Tap("timer", str(chat_id), arg=str(c))) for c in choices]
    rows = [row[:TIMERS_PER_ROW], row[TIMERS_PER_ROW:], [_button(duration(tr, 3600, short=True), Tap("timer", str(chat_id), arg="long"))]]
    return Rendered(text, InlineKeyboardMarkup([r for r in rows if r]))


#: Timer buttons per row («✅ 10 мин» must fit a third of a row).
TIMERS_PER_ROW = 3


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
            tr.t("Time for a turn: {duration}", duration=duration(tr, seconds)),
            tr.t("Language: {language}", language=tr.t(LANGUAGE_NAMES[lang or "ru"])),
            tr.t("Seats: shuffled at the start") if cfg.shuffle else tr.t("Seats: in join order"),
            tr.t("Changes apply from the next game on."),
        ]
    )
    timer = [_button(_mark(duration(tr, c, short=True), c == seconds), Tap("settings", chat, arg=f"t{c}")) for c in choices]
    timer.append(_button(_mark(duration(tr, long, short=True), seconds == long), Tap("settings", chat, arg="tlong")))
    langs = [_button(_mark(translator(code).t(LANGUAGE_NAMES[code]), code == lang), Tap("settings", chat, arg=f"l{code}")) for code in LANGUAGES]
    rows = [
        [_button(_mark(variant_short(tr, v), v == variant), Tap("settings", chat, arg=f"v{v}")) for v in ("russian", "classic")],
        *(timer[i : i + TIMERS_PER_ROW] for i in range(0, len(timer), TIMERS_PER_ROW)),
        langs[:2],
        langs[2:],
        [
            _button(_mark(tr.t("Join order"), not cfg.shuffle), Tap("settings", chat, arg="sjoin")),
            _button(_mark(tr.t("Shuffle seats"), cfg.shuffle), Tap("settings", chat, arg="sshuffle")),
        ],
    ]
    return Rendered(text, InlineKeyboardMarkup(rows))


def stats_text(lang: str | None, who: str, totals: "Totals", places: dict[int, int]) -> str:
    """A player's figures over all counted games (/stats). ``who`` is a raw name."""
    tr = translator(lang)
    head = "<b>" + tr.t("Statistics: {player}", player="\u2068" + esc(clean_name(who, "—")) + "\u2069") + "</b>"
    if not totals.games:
        return head + "\n" + tr.t("No finished game yet.")
    def k(x: float) -> str:
        return number(tr, x)

    finishes = " · ".join(tr.n("{place}: {n} time", "{place}: {n} times", c, place=ordinal(tr, p)) for p, c in sorted(places.items()))
    lines = [
        head,
        tr.n("{n} game", "{n} games", totals.games) + " · " + tr.t("wins: {wins}", wins=k(totals.wins)) + " · " + tr.t("draws: {draws}", draws=k(totals.draws)),
        tr.t("Average place: {place}", place=number(tr, round(totals.mean_place, 2), "0.0#")),
        tr.t("Places: {places}", places=finishes),
        tr.t("Plays: {plays} · bluffs: {bluffs} (caught {caught}, got through {through})", plays=k(totals.plays), bluffs=k(totals.bluffs), caught=k(totals.bluffs_caught), through=k(totals.bluffs_through)),
        tr.t("«I doubt it!» said: {made} (right {right})", made=k(totals.challenges), right=k(totals.challenges_right)),
        tr.t("Piles taken: {piles}", piles=k(totals.piles_taken)),
    ]
    return _cap("\n".join(lines))


def top_text(lang: str | None, rows: list[tuple[int, str, int, int]], min_games: int) -> str:
    """The chat's leaderboard (/top): (user id, raw name, wins, games) rows, best first."""
    tr = translator(lang)
    lines = ["<b>" + tr.t("Best players of this chat") + "</b>"]
    for i, (_, who, wins, games) in enumerate(rows):
        lines.append(f"{i + 1}. \u2068{esc(clean_name(who, '—'))}\u2069 — " + tr.t("wins: {wins}", wins=number(tr, wins)) + " · " + tr.n("{n} game", "{n} games", games))
    if not rows:
        lines.append(tr.n("Nobody has played {n} game here yet.", "Nobody has played {n} games here yet.", min_games))
    return _cap("\n".join(lines))


def stop_confirm(table: Table, by: int = 0) -> Rendered:
    """The question «stop the running game?» with its confirming button, for ``by`` (the user
    who asked; ``0``: an anonymous admin, then any admin) only."""
    tr = translator(table.lang)
    return Rendered(tr.t("Stop the running game? It ends without result."), InlineKeyboardMarkup([[_button(tr.t("Yes, stop the game"), Tap("stopok", table.id, arg=person(by)))]]))


def plain_names(table: Table) -> list[str]:
    """The players' names as plain text (not escaped; bots' names translated): the record's
    ``players``."""
    tr = translator(table.lang)
    return [plain(name(table, i, tr)).strip("\u2068\u2069") for i in range(len(table.seats))]


#: Short private or group notes, by code (see :func:`note`).
_NOTES = {
    "notify_on": N_("I will tell you in private chat when the next game opens here."),
    "notify_on_private": N_("I will tell you here when the next game opens in «{group}»."),
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


def retired_note(table: Table, seat: int, grace: float) -> str:
    """Private note to a player (in their language): the game was retired because the bot lost
    its group (``table.ended``, a :class:`~tgbot.game.table.RetireReason`): removed from it, the group
    or its topic gone, or no message taken for ``grace`` seconds (``LOBBY_TIMEOUT``)."""
    if table.ended == RetireReason.UNWRITABLE:
        tr = seat_translator(table, seat)
        return tr.t("The game in «{group}» has ended without result: for {duration} I have not been allowed to post in the group.", group=title(table), duration=duration(tr, grace))
    if table.ended == RetireReason.CHAT_GONE:
        tr = seat_translator(table, seat)
        return tr.t("The game in «{group}» has ended without result: the group (or its topic) no longer exists.", group=title(table))
    return removed_note(table, seat)


# -- short answers to taps -------------------------------------------------------------------------

_ANSWERS = {
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
}


def answer(code: str, lang: str | None) -> str:
    """The short answer to a tap (at most 200 characters, answerCallbackQuery's limit)."""
    msgid = _ANSWERS.get(code, _ANSWERS[Answer.BAD_BUTTON])
    text = translator(lang).t(msgid) if msgid else ""
    return text[: CallbackQueryLimit.ANSWER_CALLBACK_QUERY_TEXT_LENGTH]
