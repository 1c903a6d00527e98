"""Catalogs: complete, placeholders kept, plurals right in every language, typography, language
resolution and the chat settings in Redis."""

from __future__ import annotations

import re
import string

import pytest
from babel.messages.pofile import read_po

from core.cards import RANKS, Rank
from tests.fakes.html import parse_html, utf16_len
from tgbot.game.rights import RIGHTS, Action, Rule
from tgbot.handlers.app import COMMANDS
from tgbot.i18n import LANGUAGES, LOCALES_DIR, new_seat_language, pick_language, translator
from tgbot.render.announcements import announcement
from tgbot.render.board import board
from tgbot.render.menus import help_text, language_menu, rules
from tgbot.render.panel import panel
from tgbot.render.text import plain, rank_count

COUNTS = (0, 1, 2, 5, 11, 21, 22, 25)


def _catalog(lang: str):
    with (LOCALES_DIR / lang / "LC_MESSAGES" / "cheat.po").open("rb") as f:
        return read_po(f, locale=lang)


def _fields(text: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}


def _strings(msg) -> tuple[str, ...]:
    return msg.string if isinstance(msg.string, tuple) else (msg.string,)


def test_the_four_languages_are_supported_and_russian_is_the_default():
    assert LANGUAGES == ("ru", "en", "fr", "it")
    assert pick_language(None) == "ru" and pick_language("de") == "ru" and pick_language("fr-CA") == "fr"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_catalog_is_complete_and_keeps_placeholders(lang):
    template = _catalog("ru")  # same msgids as the template (checked below)
    cat = _catalog(lang)
    with (LOCALES_DIR / "cheat.pot").open("rb") as f:
        pot = read_po(f)
    ids = {m.id for m in pot if m.id}
    assert {m.id for m in cat if m.id} == ids
    assert {m.id for m in template if m.id} == ids
    assert not cat.obsolete
    nplurals = cat.num_plurals
    for msg in cat:
        if not msg.id:
            continue
        assert not msg.fuzzy, msg.id
        strings = _strings(msg)
        assert all(s.strip() for s in strings), f"{lang}: empty translation of {msg.id!r}"
        if isinstance(msg.id, tuple):
            assert len(strings) == nplurals, msg.id
            want = _fields(msg.id[0]) | _fields(msg.id[1])
            for s in strings:
                assert _fields(s) == want, (lang, msg.id, s)
        else:
            assert _fields(strings[0]) == _fields(msg.id), (lang, msg.id, strings[0])
            # HTML stays well-formed (Telegram rejects a message whose tags do not parse)
            parse_html(strings[0].replace("{", "").replace("}", ""))


#: The game's name, the same in every language (the issue's word table).
GAME_NAME = "Верю — не верю"


@pytest.mark.parametrize("lang", ["en", "fr", "it"])
def test_no_cyrillic_outside_russian(lang):
    """Only the game's own name is written in Cyrillic in the other languages."""
    for msg in _catalog(lang):
        if msg.id:
            for s in _strings(msg):
                assert not re.search("[А-Яа-яЁё]", s.replace(GAME_NAME, "")), (lang, s)


def test_french_typography():
    for msg in _catalog("fr"):
        if not msg.id:
            continue
        for s in _strings(msg):
            assert not re.search(r" [:;!?»]|« ", s), s  # non-breaking spaces there
            assert '"' not in s and "'" not in s, s  # « » and ’ only


def test_english_and_italian_quotes():
    for lang, bad in (("en", "«»"), ("it", '“”"')):
        for msg in _catalog(lang):
            if msg.id:
                for s in _strings(msg):
                    assert not any(c in s for c in bad), (lang, s)


EXPECTED_CARDS = {
    "ru": ["0 карт", "1 карта", "2 карты", "5 карт", "11 карт", "21 карта", "22 карты", "25 карт"],
    "en": ["0 cards", "1 card", "2 cards", "5 cards", "11 cards", "21 cards", "22 cards", "25 cards"],
    "fr": ["0 carte", "1 carte", "2 cartes", "5 cartes", "11 cartes", "21 cartes", "22 cartes", "25 cartes"],
    "it": ["0 carte", "1 carta", "2 carte", "5 carte", "11 carte", "21 carte", "22 carte", "25 carte"],
}

#: (one, few/many, many/other) word per rank and language, at 1, 2 and 5 (and so 21, 22, 25).
RANK_WORDS = {
    "ru": {
        Rank.ACE: ("туз", "туза", "тузов"),
        Rank.TWO: ("двойка", "двойки", "двоек"),
        Rank.SEVEN: ("семёрка", "семёрки", "семёрок"),
        Rank.TEN: ("десятка", "десятки", "десяток"),
        Rank.JACK: ("валет", "валета", "валетов"),
        Rank.QUEEN: ("дама", "дамы", "дам"),
        Rank.KING: ("король", "короля", "королей"),
    },
    "en": {
        Rank.ACE: ("Ace", "Aces", "Aces"),
        Rank.SIX: ("Six", "Sixes", "Sixes"),
        Rank.QUEEN: ("Queen", "Queens", "Queens"),
    },
    "fr": {
        Rank.ACE: ("as", "as", "as"),
        Rank.TWO: ("deux", "deux", "deux"),
        Rank.JACK: ("valet", "valets", "valets"),
        Rank.QUEEN: ("dame", "dames", "dames"),
        Rank.KING: ("roi", "rois", "rois"),
    },
    "it": {
        Rank.ACE: ("asso", "assi", "assi"),
        Rank.JACK: ("fante", "fanti", "fanti"),
        Rank.QUEEN: ("donna", "donne", "donne"),
        Rank.KING: ("re", "re", "re"),
    },
}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_card_plurals(lang):
    tr = translator(lang)
    assert [tr.n("{n} card", "{n} cards", k) for k in COUNTS] == EXPECTED_CARDS[lang]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_rank_plurals(lang):
    tr = translator(lang)
    for rank, (one, few, many) in RANK_WORDS[lang].items():
        got = [rank_count(tr, k, rank) for k in COUNTS]
        zero = many if lang in ("ru", "en", "it") else one
        eleven = many
        want = [
            f"0 {zero}",
            f"1 {one}",
            f"2 {few}",
            f"5 {many}",
            f"11 {eleven}",
            f"21 {one if lang == 'ru' else many}",
            f"22 {few}",
            f"25 {many}",
        ]
        assert got == want, (lang, rank)
    # every rank has its own plural in every language, distinct from the msgid where it must be
    for rank in RANKS:
        for k in COUNTS:
            text = rank_count(tr, k, rank)
            assert text.startswith(f"{k} ") and len(text) > len(f"{k} ")
            if lang != "en":
                assert not re.search(r"\b(Ace|Two|Three|Four|Five|Seven|Eight|Nine|Jack|Queen|King)s?\b", text)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_rules_and_help_fit_one_message_and_differ(lang):
    rules_, help_ = rules(lang), help_text(lang)
    for text in (rules_, help_):
        plain, _ = parse_html(text)
        assert 0 < utf16_len(plain) <= 4096
    assert len(help_) < len(rules_)
    assert "300" in rules_ and "/start_game" in help_ and "/language" in help_
    if lang != "en":
        assert rules_ != rules("en") and help_ != help_text("en")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_command_descriptions_are_translated(lang):
    tr = translator(lang)
    for kind in ("group", "private"):
        for cmd, desc in COMMANDS[kind]:
            text = tr.t(desc)
            assert 1 <= len(text) <= 256
            if lang != "en":
                assert text != desc, (lang, cmd)
    assert any(cmd == "language" for cmd, _ in COMMANDS["group"]) and any(
        cmd == "language" for cmd, _ in COMMANDS["private"]
    )


def test_language_menu_buttons_are_autonyms_and_encoded():
    menu = language_menu("ru", group=True)
    labels = [b.text for row in menu.markup.inline_keyboard for b in row]
    assert labels == ["Русский", "English", "Français", "Italiano"]
    data = [b.callback_data for row in menu.markup.inline_keyboard for b in row]
    assert data == ["g:0:ru", "g:0:en", "g:0:fr", "g:0:it"]


def test_private_language_order():
    # own choice > group's explicit language (follow the table: None) > Telegram's > default (None)
    assert new_seat_language("it", "fr", "en") == "it"
    assert new_seat_language(None, "fr", "en") is None
    assert new_seat_language(None, None, "en-GB") == "en"
    assert new_seat_language(None, None, "de") is None
    assert new_seat_language("xx", None, "fr") == "fr"


async def test_chat_settings_and_user_language(store):
    assert (await store.records.chat_settings(-5)).lang is None
    assert (await store.records.set_chat_settings(-5, lang="fr")).lang == "fr"
    assert await store.redis.hget(store.keys.chat_settings(-5), "language") == "fr"
    assert (await store.records.set_chat_settings(-5, lang=None)).lang is None
    assert await store.records.user_lang(7) is None
    await store.records.set_user_lang(7, "it")
    assert await store.records.user_lang(7) == "it"
    assert await store.redis.hget(store.keys.user(7), "language") == "it"


# -- table and seat languages ----------------------------------------------------------------------

from tests.tgbot.helpers import lobby, started  # noqa: E402
from tgbot.game.lobby import set_lang, set_seat_lang  # noqa: E402
from tgbot.game.table import Table  # noqa: E402


def test_set_lang_changes_a_lobby_only():
    t = lobby(2)
    assert set_lang(t, "fr").table.lang == "fr"
    assert set_lang(t, "ru").reply == "unchanged"  # nothing changes
    game, _ = started()
    assert set_lang(game, "fr").table is game


def test_set_seat_lang_and_panels_in_each_seats_language():
    game, _ = started()
    game = set_seat_lang(game, game.seats[1].user_id, "it").table
    game = set_seat_lang(game, game.seats[2].user_id, "en").table
    assert [s.lang for s in game.seats] == [None, "it", "en", None]
    assert Table.from_json(game.to_json()).seats == game.seats
    assert set_seat_lang(game, 999, "fr").table is game
    ru, it, en = (panel(game, i).text for i in range(3))
    assert "Ваши карты" in ru and "Le tue carte" in it and "Your cards" in en
    assert "Карта" not in en and not re.search(
        "[А-Яа-яЁё]",
        plain(it)
        .replace(game.seats[0].name, "")
        .replace(game.seats[1].name, "")
        .replace(game.seats[2].name, "")
        .replace(game.seats[3].name, "")
        .replace("Клуб", ""),
    )
    # the board stays in the table's language
    assert translator("ru").t("Pile: empty") in board(game, "bot").text


def test_claims_use_rank_plurals_in_board_and_announcements():
    from tests.tgbot.helpers import ai_players, ai_step

    game, _ = started()
    players = ai_players(4, 3)
    texts = []
    for _ in range(60):
        ch = ai_step(game, players)
        game = ch.table
        texts += [announcement(game, note) or "" for note in ch.outbox]
        texts.append(board(game, "bot").text)
        if game.state.result is not None:
            break
    joined = "\n".join(texts)
    assert "×" not in joined.replace("A×", "")  # the old «2 × дама» style is gone
    assert re.search(
        r"\d (туз|туза|тузов|дама|дамы|дам|король|короля|королей|валет|валета|валетов|\w+ка|\w+ки|\w+ок)\b", joined
    )


#: The action whose right each group command's handler checks (handlers/admin.py, lobby.py,
#: language.py, game/lobby.py ``_managed``; ``None``: none, anyone may send it).
COMMAND_ACTIONS: dict[str, Action | None] = {
    "start_game": Action.OPEN_LOBBY,
    "board": None,
    "leave": None,  # acts on the sender's own seat only
    "stats": None,
    "top": None,
    "notify_me": None,
    "add_bot": Action.MANAGE_LOBBY,
    "stop_game": Action.STOP_GAME,
    "kick": Action.KICK,
    "timer": Action.TIMER,
    "settings": Action.SETTINGS,
    "language": Action.GROUP_LANGUAGE,
}


def _help_sections() -> list[set[str]]:
    """/help's sections as the table of rights makes them: the group commands by rule (anyone,
    the lobby's creator or admins, admins only), then the private chat's commands."""
    rule_of = {
        command: Rule.ANYONE if action is None else RIGHTS[action] for command, action in COMMAND_ACTIONS.items()
    }
    group = [{command for command, rule in rule_of.items() if rule is each} for each in Rule]
    return [section for section in group if section] + [{"language", "forget_me", "rules", "help"}]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_help_lists_each_command_under_who_may_use_it(lang):
    """/help once listed /add_bot for everyone and /timer for the creator: each command now sits
    under the heading of the rule the table of rights gives its handler's action."""
    sections: list[set[str]] = []
    for line in help_text(lang).split("\n")[1:]:
        if re.fullmatch(r"<b>[^<]+</b>", line):
            sections.append(set())
        elif sections:
            sections[-1] |= set(re.findall(r"(?:^|· )/(\w+)", line))
    assert [section for section in sections if section] == _help_sections()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_rules_and_help_name_the_buttons_as_they_are_labelled(lang):
    """/help names «Верю» (it once did not) and every button it mentions by its real label."""
    tr = translator(lang)
    rules_, help_ = rules(lang), help_text(lang)
    for label in ("I believe", "I doubt it!", "Take my seat back"):
        assert tr.t(label) in rules_ and tr.t(label) in help_, (lang, label)
    for label in ("Join", "Start", "Cancel", "Play again"):
        assert tr.t(label) in help_, (lang, label)
