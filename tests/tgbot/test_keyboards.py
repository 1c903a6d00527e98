"""Every keyboard the bot can show, in every language: labels fit a phone, buttons are coloured
where a player decides.

No published source gives how many characters Telegram shows on an inline button, so the budget
is derived from an assumed phone:

- screen 360 pt wide (the narrowest common phones; 375–390 pt ones have room to spare), the
  inline keyboard spans it minus about 8 pt of margin each side: 344 pt;
- labels in the system font (Roboto / SF Pro) at 15–16 pt, medium weight: an average glyph of
  mixed Latin and Cyrillic text is about 0.58 em, 9–9.5 pt;
- so about 36 characters fit across one row (``ROW``);
- a row of ``k`` buttons splits the width equally, and each button keeps about one character of
  padding each side: a label may take ``ROW // k - 2`` characters (34, 16, 10, 7, 5 for 1 to 5
  buttons). A wide character (emoji such as ✅ ▶ 🤖) counts as two.

A label longer than that is cut with «…» by the app, which is what the test forbids.
"""

from __future__ import annotations

import unicodedata
from dataclasses import replace
from types import SimpleNamespace

import pytest

import core
from core.cards import Hand
from tests.tgbot.helpers import ai_players, ai_step, lobby, started
from tgbot.codec import Tap
from tgbot.game.lobby import add_bot
from tgbot.game.table import Player, Status
from tgbot.i18n import LANGUAGES
from tgbot.render.board import board
from tgbot.render.menus import language_menu, leave_confirm, settings_menu, stop_confirm, timer_menu
from tgbot.render.panel import panel
from tgbot.render.text import BELIEVE, BOT_NAMES, CHALLENGE, PLAY, Rendered, button

#: Characters across one row of inline buttons on the assumed phone (see the module's text).
ROW = 36
#: Characters of padding a button keeps around its label.
PADDING = 2
TIMER_CHOICES = (30, 60, 90, 180, 300, 600)


def budget(buttons_in_row: int) -> int:
    return ROW // buttons_in_row - PADDING


def width(label: str) -> int:
    """Display width: wide and emoji characters 2, combining and format characters 0."""
    w = 0
    for ch in label:
        if unicodedata.category(ch) in ("Mn", "Me", "Cf") or ch == "\ufe0f":
            continue
        w += 2 if unicodedata.east_asian_width(ch) in ("W", "F") or ch in "▶⏱⏰" else 1
    return w


def test_budget_per_row():
    assert [budget(k) for k in range(1, 6)] == [34, 16, 10, 7, 5]
    assert width("✅ 10 мин") == 9 and width("▶ 10") == 5 and width("Не верю!") == 8


def _tables(lang: str, variant: str):
    """Tables in every state a keyboard depends on: lobbies, a running game stepped through by
    AI players (every panel of every seat, with picks), an AI-held seat, a left seat, the end."""
    t = replace(lobby(2), lang=lang, variant=variant)
    yield t
    yield add_bot(t, BOT_NAMES, 1001.0, 900.0).table
    game, _ = started(4, variant=variant)
    game = replace(game, lang=lang, seats=tuple(replace(s, lang=lang) for s in game.seats))
    players = ai_players(4, 7)
    for _ in range(400):
        yield game
        if game.state.result is not None:
            break
        game = ai_step(game, players).table
    yield game
    yield replace(game, seats=tuple(replace(s, player=Player.STAND_IN) for s in game.seats))


def _markups(lang: str):
    for variant in ("russian", "classic"):
        for table in _tables(lang, variant):
            yield board(table, "cheat_bot").markup
            if table.state is None:
                continue
            for seat in range(len(table.seats)):
                yield panel(table, seat).markup
            v = core.view(table.state, table.state.current) if table.state.current is not None else None
            if v is not None and v.my_turn:
                # the current player's panel with each rank picked (all held), and with 4 cards picked
                for rank in v.hand.distinct():
                    yield panel(table, v.seat, Hand.from_ranks([rank] * min(4, v.hand[rank])).to_str()).markup
                some = list(v.hand)[:4]
                yield panel(table, v.seat, Hand.from_ranks(some).to_str()).markup
            yield leave_confirm(table, 0).markup
            yield stop_confirm(table).markup
    for current in (30, 90, 600, 3600):
        yield timer_menu(lang, -100, current, TIMER_CHOICES).markup
        for shuffle in (False, True):
            for variant in ("russian", "classic"):
                cfg = SimpleNamespace(
                    variant=variant, lang=lang, shuffle=shuffle
                )  # what settings_menu reads of a ChatSettings
                yield settings_menu(lang, -100, cfg, current, TIMER_CHOICES, 3600).markup
    for group in (True, False):
        yield language_menu(lang, group).markup


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_button_label_fits_its_row(lang):
    too_long: set[str] = set()
    seen = 0
    for markup in _markups(lang):
        if markup is None:
            continue
        for row in markup.inline_keyboard:
            for b in row:
                seen += 1
                if width(b.text) > budget(len(row)):
                    too_long.add(f"{b.text!r} ({width(b.text)} > {budget(len(row))}, {len(row)} in the row)")
    assert seen > 1000
    assert not too_long, sorted(too_long)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("variant", ["russian", "classic"])
def test_decision_buttons_are_coloured(lang, variant):
    """«Верю» green, «Не верю!» red, the buttons that play cards blue; nothing else coloured."""
    styles: dict[str, set[str]] = {}
    for table in _tables(lang, variant):
        if table.state is None or table.state.current is None or table.status is not Status.PLAYING:
            continue
        v = core.view(table.state, table.state.current)
        picks = Hand.from_ranks(list(v.hand)[:1]).to_str()
        for markup in (panel(table, v.seat).markup, panel(table, v.seat, picks).markup):
            for row in markup.inline_keyboard:
                for b in row:
                    styles.setdefault(b.callback_data.split(":")[0], set()).add(b.style)
    assert styles["b"] == {BELIEVE} == {"success"}
    assert styles["c"] == {CHALLENGE} == {"danger"}
    assert styles["p"] == {PLAY} == {"primary"}
    assert styles["k"] == {None} and styles["r"] == {None}
    # the colour reaches the Bot API call
    rendered = Rendered("x", [[button("x", Tap("believe", "G1", action_count=1), BELIEVE)]])
    assert rendered.reply_markup["inline_keyboard"][0][0]["style"] == "success"
