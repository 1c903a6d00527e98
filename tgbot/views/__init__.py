"""What Telegram shows of a game, and the sync that brings Telegram up to date after each commit.

- :mod:`~tgbot.views.text`: escaping, names, numbers, durations, ranks, the cap to Telegram's limit;
- :mod:`~tgbot.views.board`: the group's lobby and board; :mod:`~tgbot.views.panel`: a player's
  private panel and its keyboard; :mod:`~tgbot.views.announcements`: showdowns, beliefs, results,
  notes; :mod:`~tgbot.views.menus`: /rules, /help, language, timer, settings, confirmations,
  /stats, /top; :mod:`~tgbot.views.answers`: the short answers to taps;
- :mod:`~tgbot.views.sync` (panels lane) with :mod:`~tgbot.views.group_lane`,
  :mod:`~tgbot.views.messages` (Telegram calls) and :mod:`~tgbot.views.bookkeeping` (what
  Telegram shows, by game).

The names other packages use are imported here.
"""

from tgbot.views.announcements import AnnouncementKind, announcement, note, retired_note, unreachable
from tgbot.views.answers import answer, answer_tap
from tgbot.views.board import board, lobby, no_game
from tgbot.views.menus import (
    help_text,
    language_menu,
    language_set,
    leave_confirm,
    private_hint,
    rules,
    settings_menu,
    stats_text,
    stop_confirm,
    timer_menu,
    top_text,
)
from tgbot.views.panel import panel
from tgbot.views.sync import Syncer
from tgbot.views.text import (
    BELIEVE,
    BOT_NAMES,
    CHALLENGE,
    MAX_NAME,
    PLAY,
    Rendered,
    button,
    cap,
    clean_name,
    group_title,
    name,
    plain,
    plain_names,
    rank_count,
    seat_translator,
    title,
)

__all__ = [
    "BELIEVE", "BOT_NAMES", "CHALLENGE", "MAX_NAME", "PLAY", "AnnouncementKind", "Rendered", "Syncer", "announcement", "answer",
    "answer_tap", "board", "button", "cap", "clean_name", "group_title", "help_text", "language_menu", "language_set",
    "leave_confirm", "lobby", "name", "no_game", "note", "panel", "plain", "plain_names", "private_hint", "rank_count", "retired_note",
    "rules", "seat_translator", "settings_menu", "stats_text", "stop_confirm", "timer_menu", "title", "top_text", "unreachable",
]  # fmt: skip
