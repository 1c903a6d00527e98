"""The words and figures every view shares: escaping (:func:`name`, :func:`esc` for Telegram's HTML
parse mode), names, numbers, durations, ranks; the cap to Telegram's text limit is
:mod:`tgbot.render.limits`'s (re-exported here)."""

from __future__ import annotations

import hashlib
import html
import unicodedata
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any, NotRequired, TypedDict

from babel.numbers import format_decimal
from telegram import InlineKeyboardMarkup

from core.cards import Hand, Rank
from tgbot.codec import Tap, encode
from tgbot.game.table import Table
from tgbot.i18n import LANGUAGES, N_, Np_, Translator, translator as translator_for
from tgbot.render.limits import (  # (re-exported: every view caps its texts)
    cap as cap,
    lines as lines,
    plain as plain,
    utf16_units as utf16_units,
)

#: Names are cut to this many characters on screen.
MAX_NAME = 32
#: Names of bot players (msgids, translated when shown), taken in this order in a lobby.
BOT_NAMES: tuple[str, ...] = (
    N_("Bot Vasya"),
    N_("Bot Masha"),
    N_("Bot Petya"),
    N_("Bot Olya"),
    N_("Bot Fedya"),
    N_("Bot Zina"),
)
#: Marks a person's seat that the AI plays for them, on the board and in the lobby (an AI
#: player's own name says what it is). Reserved: no person's name shows it (:func:`seat_names`).
AI_MARK = "🤖"
#: Button styles (https://core.telegram.org/bots/api#inlinekeyboardbutton, ``style``): green
#: for «Верю», red for «Не верю!», blue for the buttons that put cards on the pile.
BELIEVE, CHALLENGE, PLAY = "success", "danger", "primary"


class Button(TypedDict):
    """An inline keyboard button as the Bot API takes it
    (https://core.telegram.org/bots/api#inlinekeyboardbutton): ``text`` and ``callback_data`` or
    ``url``; ``style`` colours it. Plain JSON: a panel has up to 30 buttons, and PTB's objects
    cost more to build and serialise than the rest of its rendering (docs/scaling.md)."""

    text: str
    callback_data: NotRequired[str]
    url: NotRequired[str]
    style: NotRequired[str]


#: Rows of buttons, top to bottom.
Keyboard = list[list[Button]]


@dataclass(frozen=True)
class Rendered:
    """A message to show: HTML ``text`` and an optional ``keyboard``; ``digest`` identifies the
    content, to skip edits that would not change anything."""

    text: str
    keyboard: Keyboard | None = None

    @cached_property
    def digest(self) -> str:
        """16 hex digits over the text and every button's text, callback data, URL and style."""
        return hashlib.blake2b(repr((self.text, self.keyboard)).encode(), digest_size=8).hexdigest()

    @property
    def reply_markup(self) -> dict[str, Any] | None:
        """The keyboard as the Bot API's ``reply_markup`` JSON (``None``: no keyboard)."""
        return None if self.keyboard is None else {"inline_keyboard": self.keyboard}

    @property
    def markup(self) -> InlineKeyboardMarkup | None:
        """The keyboard as PTB's object, for replies through PTB's helpers."""
        return None if self.keyboard is None else InlineKeyboardMarkup.de_json({"inline_keyboard": self.keyboard}, None)


def button(text: str, tap: Tap, style: str | None = None) -> Button:
    """A callback button for ``tap``."""
    made = Button(text=text, callback_data=encode(tap))
    if style is not None:
        made["style"] = style
    return made


def link(text: str, url: str) -> Button:
    """A button that opens ``url``."""
    return Button(text=text, url=url)


def esc(text: str) -> str:
    """Escape a user-supplied string for HTML parse mode."""
    return html.escape(text, quote=False)


_INVISIBLE = {"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"}
#: Letters and symbols that draw nothing (Hangul fillers, Braille blank, …): white space here.
_BLANKS = {"\u115f", "\u1160", "\u3164", "\uffa0", "\u2800", "\u17b4", "\u17b5", "\u180e"}


@lru_cache(maxsize=4096)  # a pure function of two short strings, called for every name shown
def clean_name(raw: str | None, fallback: str) -> str:
    """A display name made safe: control, format and bidi characters removed, stacked
    combining marks thinned, white space folded, at most :data:`MAX_NAME` characters; the
    ``fallback`` when nothing visible is left. Not escaped (see :func:`name`)."""
    kept: list[str] = []
    marks = 0
    for char in unicodedata.normalize("NFC", raw or ""):
        category = unicodedata.category(char)
        if char.isspace() or char in _BLANKS:  # line breaks and tabs too: one line, spaces
            char, category = " ", "Zs"
        elif category in _INVISIBLE:
            continue
        marks = marks + 1 if category.startswith("M") else 0
        if marks > 2:
            continue
        kept.append(" " if category.startswith("Z") else char)
    text = " ".join("".join(kept).split())
    if not any(not unicodedata.category(char).startswith(("M", "Z")) for char in text):
        return fallback
    if len(text) > MAX_NAME:
        text = text[: MAX_NAME - 1].rstrip() + "…"
    return text


def isolated(raw: str | None, fallback: str = "—") -> str:
    """``raw`` cleaned, escaped and isolated (U+2068…U+2069), so right-to-left names do not
    reorder the sentence around them."""
    return "\u2068" + esc(clean_name(raw, fallback)) + "\u2069"


def name(table: Table, seat: int, translator: Translator | None = None) -> str:
    """Seat ``seat``'s name as every screen shows it (:func:`seat_names`), isolated. Names are
    never declined: every sentence puts them where the grammar needs no case ending.
    ``translator`` gives the fallback "Player n" and bots' names (default: the table's language)."""
    translator = translator or translator_for(table.lang)
    seats = tuple((seat.name, seat.human) for seat in table.seats)
    return "\u2068" + esc(seat_names(seats, translator.lang)[seat]) + "\u2069"


#: Letters that look alike in Latin, Greek and Cyrillic (after casefolding), folded together in
#: :func:`_name_key`: «Caшa» (with Latin c and a) looks like «Саша».
_LOOKALIKES = str.maketrans(
    "aceopxykmhbt"
    + "".join(
        map(chr, (0x3BF, 0x3B1, 0x3B5, 0x3C1, 0x3BA, 0x3C4, 0x3C7, 0x451))
    ),  # (+ Greek; code points: no Cyrillic literal)
    "".join(
        map(
            chr,
            (
                0x430,
                0x441,
                0x435,
                0x43E,
                0x440,
                0x445,
                0x443,
                0x43A,
                0x43C,
                0x43D,
                0x432,
                0x442,
                0x43E,
                0x430,
                0x435,
                0x440,
                0x43A,
                0x442,
                0x445,
                0x435,
            ),
        )
    ),
)


def _name_key(text: str) -> str:
    """What makes two names look the same: case, compatibility forms, look-alike letters and
    spacing aside."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().translate(_LOOKALIKES).split())


@lru_cache(maxsize=1)
def _ai_names() -> frozenset[str]:
    """The AI players' names in every language (:data:`BOT_NAMES`): no person is shown as one."""
    names = [translator_for(lang).t(bot) for lang in LANGUAGES for bot in BOT_NAMES]
    return frozenset(_name_key(text) for text in (*names, *BOT_NAMES))  # (the msgids too: «Bot Masha»)


@lru_cache(maxsize=4096)  # a pure function of a table's names, asked for every name shown
def seat_names(seats: tuple[tuple[str, bool], ...], lang: str) -> tuple[str, ...]:
    """Each seat's name (``seats``: (raw name, human) per seat) cleaned (:func:`clean_name`, not
    escaped) and told apart, the one rule of how seats are named on every screen. The AI's
    are reserved: an AI seat shows its own name (in ``lang``); a person's name loses the AI mark
    (:data:`AI_MARK`), and one that repeats an earlier seat's, any AI seat's of the game or any
    AI player's name in any language gets the first free number: «Саша», «Саша (2)»."""
    translator = translator_for(lang)
    shown = [""] * len(seats)
    for seat, (raw, human) in enumerate(seats):
        fallback = translator.t("Player {n}", n=seat + 1)
        if human:
            shown[seat] = clean_name((raw or "").replace(AI_MARK, " "), fallback)
        else:
            shown[seat] = clean_name(translator.t(raw) if raw else fallback, fallback)
    taken = {_name_key(shown[seat]) for seat, (_, human) in enumerate(seats) if not human}
    for seat, (_, human) in enumerate(seats):
        if not human:
            continue
        base, number = shown[seat], 1
        while _name_key(shown[seat]) in taken or (number == 1 and _name_key(base) in _ai_names()):
            number += 1
            shown[seat] = f"{base} ({number})"
        taken.add(_name_key(shown[seat]))
    return tuple(shown)


def marked(table: Table, seat: int) -> str:
    """The seat's name, with the AI mark when the AI plays a person's seat for them."""
    stand_in = table.seats[seat].human and table.seats[seat].by_ai
    return name(table, seat) + (" " + AI_MARK if stand_in else "")


def pile_text(translator: Translator, size: int) -> str:
    """The pile's line: how many cards it holds, or that it is empty."""
    if not size:
        return translator.t("Pile: empty")
    return translator.t("Pile: {cards}", cards=translator.n("{n} card", "{n} cards", size))


def plain_names(table: Table) -> list[str]:
    """The players' names as plain text (bots' names translated): the record's ``players``."""
    translator = translator_for(table.lang)
    return [plain(name(table, seat, translator)).strip("\u2068\u2069") for seat in range(len(table.seats))]


def group_title(raw: str) -> str:
    """A group's title, cleaned like a name, escaped and isolated («—» when empty)."""
    return isolated(raw)


def title(table: Table) -> str:
    """The game's group's title (:func:`group_title`)."""
    return group_title(table.title)


def seat_translator(table: Table, seat: int) -> Translator:
    """The translator of seat ``seat``'s private messages (:meth:`Table.seat_language`)."""
    return translator_for(table.seat_language(seat))


def number(translator: Translator, value: float, fmt: str | None = None) -> str:
    """``value`` as the language writes numbers (Babel: «3,25» in Russian, "3.25" in English)."""
    return _number(value, fmt, translator.lang)


@lru_cache(maxsize=4096)  # Babel's formatting costs about as much as the rest of a board
def _number(value: float, fmt: str | None, lang: str) -> str:
    return format_decimal(value, format=fmt, locale=lang)


def duration(translator: Translator, seconds: float, short: bool = False) -> str:
    """A span of time as people say it: «90 секунд», «3 минуты», «1 час» (``short``: the
    button forms «90 с», «3 мин», «1 час»). Whole minutes and hours are named as such."""
    whole = max(0, round(seconds))
    if whole and whole % 3600 == 0:
        return translator.n("{n} hour", "{n} hours", whole // 3600)
    if (whole >= 60 and whole % 60 == 0) or whole >= 600:
        minutes = round(whole / 60)
        return translator.t("{n} min", n=minutes) if short else translator.n("{n} minute", "{n} minutes", minutes)
    return translator.t("{n} s", n=whole) if short else translator.n("{n} second", "{n} seconds", whole)


def deadline(translator: Translator, end: float, left: float) -> str:
    """A moment ``end`` (epoch seconds) as Telegram's date-time entity, counted live by each
    client; inside, for clients without it, the duration ``left`` (given, so renders are equal)."""
    whole = max(1, round(left))
    if whole % 3600 == 0:
        fallback = translator.n("in about {n} hour", "in about {n} hours", whole // 3600)
    elif (whole >= 60 and whole % 60 == 0) or whole >= 600:
        fallback = translator.n("in about {n} minute", "in about {n} minutes", round(whole / 60))
    else:
        fallback = translator.n("in about {n} second", "in about {n} seconds", whole)
    return f'<tg-time unix="{int(end)}" format="r">{esc(fallback)}</tg-time>'


#: Ordinal numbers for places 1 to 6 (msgids: «1-е», "1st", « 1re », «1º»).
_ORDINALS = {1: N_("1st"), 2: N_("2nd"), 3: N_("3rd"), 4: N_("4th"), 5: N_("5th"), 6: N_("6th")}


def ordinal(translator: Translator, place: int) -> str:
    """«2-е», "2nd", « 2e », «2º» (places 1 to 6; beyond, the bare number)."""
    return translator.t(_ORDINALS[place]) if place in _ORDINALS else number(translator, place)


def place_text(translator: Translator, place: int) -> str:
    """«2-е место», "2nd place", « 2e place », «2º posto»."""
    return translator.t("{ordinal} place", ordinal=ordinal(translator, place))


def rank_count(translator: Translator, count: int, rank: Rank) -> str:
    """A count of one rank with the language's plural («2 дамы», "2 Queens"): how claims read."""
    singular, plural = _RANK_PLURALS[rank]
    return translator.n(singular, plural, count)


def rank_due(translator: Translator, rank: Rank) -> str:
    """The rank as the cards to put down («кладите тузов», "Sevens", « des dames »)."""
    return translator.t(_RANK_DUE[rank])


def rank_short(translator: Translator, rank: Rank) -> str:
    """A rank's short label for buttons and hands (A, 2 … 10, J, Q, K or the language's own)."""
    return translator.t(_RANK_SHORT[rank])


_RANK_DUE = {
    Rank.ACE: N_("Aces"), Rank.TWO: N_("Twos"), Rank.THREE: N_("Threes"), Rank.FOUR: N_("Fours"),
    Rank.FIVE: N_("Fives"), Rank.SIX: N_("Sixes"), Rank.SEVEN: N_("Sevens"), Rank.EIGHT: N_("Eights"),
    Rank.NINE: N_("Nines"), Rank.TEN: N_("Tens"), Rank.JACK: N_("Jacks"), Rank.QUEEN: N_("Queens"),
    Rank.KING: N_("Kings"),
}  # fmt: skip
_RANK_PLURALS = {
    Rank.ACE: Np_("{n} Ace", "{n} Aces"), Rank.TWO: Np_("{n} Two", "{n} Twos"),
    Rank.THREE: Np_("{n} Three", "{n} Threes"), Rank.FOUR: Np_("{n} Four", "{n} Fours"),
    Rank.FIVE: Np_("{n} Five", "{n} Fives"), Rank.SIX: Np_("{n} Six", "{n} Sixes"),
    Rank.SEVEN: Np_("{n} Seven", "{n} Sevens"), Rank.EIGHT: Np_("{n} Eight", "{n} Eights"),
    Rank.NINE: Np_("{n} Nine", "{n} Nines"), Rank.TEN: Np_("{n} Ten", "{n} Tens"),
    Rank.JACK: Np_("{n} Jack", "{n} Jacks"), Rank.QUEEN: Np_("{n} Queen", "{n} Queens"),
    Rank.KING: Np_("{n} King", "{n} Kings"),
}  # fmt: skip
_RANK_SHORT = {
    Rank.ACE: N_("A"), Rank.TWO: N_("2"), Rank.THREE: N_("3"), Rank.FOUR: N_("4"), Rank.FIVE: N_("5"),
    Rank.SIX: N_("6"), Rank.SEVEN: N_("7"), Rank.EIGHT: N_("8"), Rank.NINE: N_("9"), Rank.TEN: N_("10"),
    Rank.JACK: N_("J"), Rank.QUEEN: N_("Q"), Rank.KING: N_("K"),
}  # fmt: skip


def revealed_text(translator: Translator, ranks: list[str]) -> str:
    """The cards turned over, grouped by rank in rank order («1 дама, 1 семёрка»)."""
    hand = Hand.from_str("".join(Rank.from_str(rank).char for rank in ranks))
    return ", ".join(rank_count(translator, hand[rank], rank) for rank in hand.distinct())


def hand_text(translator: Translator, hand: Hand) -> str:
    """«A×2 · 7 · Q×3»: ranks with counts (suits never matter)."""
    if not hand:
        return translator.t("no cards")
    return " · ".join(
        rank_short(translator, rank) + (f"×{hand[rank]}" if hand[rank] > 1 else "") for rank in hand.distinct()
    )


def variant_name(translator: Translator, variant: str) -> str:
    """«Русский вариант», "Classic variant"."""
    return translator.t("Russian variant") if variant == "russian" else translator.t("Classic variant")


def variant_short(translator: Translator, variant: str) -> str:
    """The variant's name on a button of a row («По-русски», «Классика»)."""
    return translator.t("Russian rules") if variant == "russian" else translator.t("Classic rules")
