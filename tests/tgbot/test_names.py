"""Names and text: hostile display names render safely, within Telegram's limits."""

from __future__ import annotations

import unicodedata
from dataclasses import replace

import pytest

import core
from tests.fakes.html import parse_html
from tests.tgbot.helpers import started
from tgbot.game.table import Seat
from tgbot.render.announcements import announcement
from tgbot.render.board import board
from tgbot.render.panel import panel
from tgbot.render.text import MAX_NAME, cap, clean_name, name

FALLBACK = "Игрок 9"


@pytest.mark.parametrize(
    "raw",
    [
        None,
        "",
        "   ",
        "\u200b\u200c\u200d",
        "\u200e\u200f\u202e",
        "\u3164",
        "\u3164\u3164",
        "\u2800",
        "\u115f\u1160",
        "\ufeff",
        "\n\t",
        "\u0301\u0301",
    ],
)
def test_invisible_names_fall_back(raw):
    assert clean_name(raw, FALLBACK) == FALLBACK


def test_long_name_is_cut():
    out = clean_name("Щ" * 500, FALLBACK)
    assert len(out) == MAX_NAME and out.endswith("…")


def test_combining_marks_are_thinned():
    zalgo = "Z" + "\u0301\u0316\u0317\u0318" * 20 + "a" + "\u0300" * 30
    out = clean_name(zalgo, FALLBACK)
    marks = [c for c in out if unicodedata.category(c).startswith("M")]
    base = [c for c in unicodedata.normalize("NFD", out) if not unicodedata.category(c).startswith("M")]
    assert base == ["Z", "a"] and len(marks) <= 4


def test_bidi_overrides_removed_and_name_isolated():
    out = clean_name("\u202eevil\u202c مرحبا", FALLBACK)
    assert "\u202e" not in out and "\u202c" not in out and "مرحبا" in out
    table, _ = started(3)
    table = replace(table, seats=(Seat(1, "مرحبا"),) + table.seats[1:])
    shown = name(table, 0)
    assert shown.startswith("\u2068") and shown.endswith("\u2069")


def test_white_space_folded():
    assert clean_name("  Анна\n\nМария\t ", FALLBACK) == "Анна Мария"


@pytest.mark.parametrize("raw", ["<b>x</b>", "&amp; &lt;", "a<i>", "</code>", "<a href='x'>y</a>", "&"])
def test_markup_names_are_escaped(raw):
    table, _ = started(3)
    table = replace(table, seats=(Seat(1, raw),) + table.seats[1:])
    for text in (board(table, "bot").text, panel(table, 0).text):
        plain, _ = parse_html(text)
        assert raw in plain


def test_fallback_is_numbered_by_seat():
    table, _ = started(3)
    table = replace(table, seats=(table.seats[0], Seat(2, "\u3164"), table.seats[2]))
    assert "Игрок 2" in name(table, 1)


def test_six_longest_names_fit_every_message():
    table, _ = started(6)
    long = "W\u0301" * 100
    table = replace(table, seats=tuple(Seat(i + 1, long + str(i), lang=None) for i in range(6)), title="T" * 255)
    texts = [board(table, "bot").text] + [panel(table, i).text for i in range(6)]
    for text in texts:
        plain, _ = parse_html(text)
        assert len(plain) <= 4096 and len(text) <= 4096


WORST_NAMES = ["😀" * 32, "&" * 32, "<" * 32, "&<>😀" * 8, "👨‍👩‍👧‍👦" * 5]


def _long_round(table, name):
    """Every seat named ``name`` (+ its number), one card left in each hand, every other card
    played in one round, one card per claim: the longest board and panels a round makes."""
    d = table.state.to_dict()
    cards = "".join(d["hands"])
    n = len(d["hands"])
    d["hands"] = [cards[i] for i in range(n)]
    d["pile"] = [[i % n, c, "5"] for i, c in enumerate(cards[n:])]
    d["plays"] = len(d["pile"])
    d["current"] = len(d["pile"]) % n
    seats = tuple(Seat(i + 1, name + str(i)) for i in range(n))
    return replace(table, seats=seats, state=core.GameState.from_dict(d), title=name * 8)


@pytest.mark.parametrize("worst", WORST_NAMES, ids=["emoji", "amp", "lt", "mixed", "zwj"])
def test_every_message_fits_telegram_as_telegram_counts(worst):
    from tests.fakes.html import parse_html, utf16_len

    table, _ = started(6)
    table = _long_round(table, worst)
    texts = {"board": board(table, "bot").text}
    texts |= {f"panel{i}": panel(table, i).text for i in range(6)}
    note = {"kind": "game_ended", "places": [1, 2, 3, 4, 5, 6], "winner": 0, "draw": False, "capped": True}
    texts["result"] = announcement(table, note)
    longest = 0
    for what, text in texts.items():
        plain, _ = parse_html(text)  # valid HTML, as Telegram parses it
        assert utf16_len(plain) <= 4096, what
        longest = max(longest, utf16_len(plain))
    assert longest > 500 and "…" in texts["board"]  # a long round (the board shows its last claims)


def test_cap_never_breaks_html():
    from tests.fakes.html import parse_html, utf16_len

    text = "<b>" + "&amp;😀&lt;" * 20 + "</b> <i>x&gt;</i>" + "é😀" * 30
    for limit in range(1, 120):
        capped = cap(text, limit)
        plain, _ = parse_html(capped)
        assert utf16_len(plain) <= limit
    assert cap(text, 10_000) == text
