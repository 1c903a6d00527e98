"""Menus and replies to commands: /rules and /help, the language, timer and settings menus,
the confirmations of /leave and /stop_game, /stats and /top."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tgbot.codec import Op, Tap, person
from tgbot.game.rights import RIGHTS, Action, Rule
from tgbot.game.table import Table
from tgbot.i18n import LANGUAGE_NAMES, LANGUAGES, N_, translator as translator_for
from tgbot.render.text import (
    Button,
    Rendered,
    button,
    cap,
    duration,
    isolated,
    lines,
    name,
    number,
    ordinal,
    variant_name,
    variant_short,
)

if TYPE_CHECKING:
    from tgbot.storage.records import ChatSettings
    from tgbot.storage.stats import Totals

#: Timer buttons per row («✅ 10 мин» must fit a third of a row).
TIMERS_PER_ROW = 3

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

#: /help's opening: how to play, step by step, and what the timer does.
HELP_INTRO = N_(
    "<b>How to play with this bot</b>\n"
    "1. Open a private chat with me and press «Start» once: that is where your cards and buttons will appear.\n"
    "2. In a group, send /start_game and tap «Join». A game has 3 to 6 seats, and AI players count. "
    "The lobby's creator or a chat admin taps «Start game»; once all 6 seats are taken, the game starts by itself.\n"
    "3. On your turn, pick 1 to 4 cards on your private panel and play them (when you open a round in the Russian "
    "variant, claim a rank too). Or tap «I doubt it!». When someone plays their last cards, the next player answers "
    "«I believe» or «I doubt it!».\n"
    "4. The group sees the board, every showdown and the result. Then the last game's players or a chat admin can "
    "tap «Play again» for a new lobby.\n\n"
    "<b>Time.</b> Your panel shows how long you have left. With a quarter of the time left I remind you; then I move "
    "for you: one card, or «I believe» when someone is going out, which hands them the win. After two such moves in "
    "a row the AI takes over until you tap «Take my seat back»."
)

#: /help's headings: who may use the group commands below them, by the rule of
#: :data:`~tgbot.game.rights.RIGHTS` that the handlers check (in /help's order).
HELP_HEADINGS: dict[Rule, str] = {
    Rule.ANYONE: N_("In a group, for everyone"),
    Rule.MANAGER: N_("For the lobby's creator or chat admins"),
    Rule.ADMIN: N_("For chat admins only"),
}

#: /help's group lines, each with the action whose right it states (``None``: the handler
#: checks none, anyone in the group may send it; /leave acts on the sender's own seat only).
HELP_GROUP_LINES: tuple[tuple[Action | None, str], ...] = (
    (Action.OPEN_LOBBY, N_("/start_game: open a lobby")),
    (None, N_("/board: show the board again")),
    (None, N_("/leave: leave the game (the AI plays for you to the end)")),
    (None, N_("/stats: your statistics (as a reply: someone else's)")),
    (None, N_("/top: the best players in this chat")),
    (None, N_("/notify_me: a private message when the next game opens")),
    (Action.MANAGE_LOBBY, N_("the lobby's buttons: «Start game», «Close lobby», rules, AI players")),
    (Action.MANAGE_LOBBY, N_("/add_bot: add an AI player to the lobby")),
    (Action.STOP_GAME, N_("/stop_game: stop the game")),
    (Action.KICK, N_("/kick (as a reply): the AI takes that player's seat")),
    (Action.TIMER, N_("/timer: the turn timer")),
    (Action.SETTINGS, N_("/settings: rules, turn timer, language, seating")),
    (Action.GROUP_LANGUAGE, N_("/language: the group's language")),
)

#: /help's last section: the private chat's commands.
HELP_PRIVATE = (
    N_("In private chat"),
    N_("/language: your own language"),
    N_("/forget_me: delete everything I store about you"),
    N_("/rules: the rules · /help: this help"),
)


def help_rule(action: Action | None) -> Rule:
    """The rule under whose /help heading a group line with ``action`` stands."""
    return Rule.ANYONE if action is None else RIGHTS[action]


def help_text(lang: str | None) -> str:
    """The /help text in ``lang`` (one message): the group commands under the heading of who
    may use them (:data:`~tgbot.game.rights.RIGHTS`), then the private ones."""
    t = translator_for(lang).t
    parts = [t(HELP_INTRO), ""]
    for rule, heading in HELP_HEADINGS.items():
        commands = [t(line) for action, line in HELP_GROUP_LINES if help_rule(action) is rule]
        if commands:
            parts += ["<b>" + t(heading) + "</b>", *commands]
    heading, *private = HELP_PRIVATE
    parts += ["<b>" + t(heading) + "</b>", *(t(line) for line in private)]
    return cap("\n".join(parts))


def rules(lang: str | None) -> str:
    """The /rules text in ``lang`` (one message)."""
    return cap(translator_for(lang).t(RULES))


def _language_buttons(op: Op, target: str, current: str | None = None, prefix: str = "") -> list[Button]:
    """One button per language, each labelled in its own language (``current`` ticked)."""
    return [
        button(_tick(translator_for(code).t(LANGUAGE_NAMES[code]), code == current), Tap(op, target, arg=prefix + code))
        for code in LANGUAGES
    ]


def language_menu(lang: str | None, group: bool) -> Rendered:
    """The /language message: a prompt in ``lang`` and a button per language."""
    translator = translator_for(lang)
    text = (
        translator.t("Choose the group's language (chat admins):")
        if group
        else translator.t("Choose the language of your private messages:")
    )
    buttons = _language_buttons(Op.LANG, "0")
    return Rendered(text, [buttons[:2], buttons[2:]])


def language_set(lang: str, group: bool) -> str:
    """The confirmation after a /language choice, in the chosen language."""
    translator = translator_for(lang)
    language = translator.t(LANGUAGE_NAMES[lang])
    if group:
        return translator.t("The group's language is now {language}.", language=language)
    return translator.t("Your private messages are now in {language}.", language=language)


def private_hint(lang: str | None, sent: bool, reachable: bool = False) -> str:
    """The short group reply to /rules or /help outside a running game: sent, not sent for
    now (Telegram failed, the private chat works: ``reachable``), or the bot may not write."""
    translator = translator_for(lang)
    if sent:
        return translator.t("I sent it to you in private chat.")
    if reachable:
        return translator.t("I couldn't send it to you in private chat just now: ask again in a minute.")
    return translator.t("I can't write to you privately: open a chat with me, press «Start» and ask again.")


def leave_confirm(table: Table, seat: int) -> Rendered:
    """The question «leave the running game?» with its confirming button."""
    translator = translator_for(table.lang)
    text = translator.t("{player}, leave the game? The AI will play your seat until the end.", player=name(table, seat))
    return Rendered(text, [[button(translator.t("Yes, leave"), Tap(Op.QUIT, table.id, arg=str(seat)))]])


def stop_confirm(table: Table, by: int = 0) -> Rendered:
    """The question «stop the running game?» with its confirming button, for ``by`` (the user
    who asked; ``0``: an anonymous admin, then any admin) only."""
    translator = translator_for(table.lang)
    confirm = button(translator.t("Yes, stop the game"), Tap(Op.STOPOK, table.id, arg=person(by)))
    return Rendered(translator.t("Stop the running game? It ends without result."), [[confirm]])


def timer_menu(lang: str | None, chat_id: int, current: float, choices: tuple[int, ...]) -> Rendered:
    """The turn-timer menu for chat admins: the current setting and one button per choice
    (seconds), plus «an hour» (the timer is never off)."""
    translator = translator_for(lang)
    text = translator.t("Time for a turn: {duration}. Choose:", duration=duration(translator, current))
    row = [
        button(duration(translator, seconds, short=True), Tap(Op.TIMER, str(chat_id), arg=str(seconds)))
        for seconds in choices
    ]
    hour = [button(duration(translator, 3600, short=True), Tap(Op.TIMER, str(chat_id), arg="long"))]
    return Rendered(text, [row for row in (row[:TIMERS_PER_ROW], row[TIMERS_PER_ROW:], hour) if row])


def _tick(text: str, on: bool) -> str:
    return ("✅ " + text) if on else text


def settings_menu(
    lang: str | None, chat_id: int, settings: ChatSettings, turn: float, choices: tuple[int, ...], long: int
) -> Rendered:
    """The /settings message (edited in place): the chat's variant, turn timer, language and
    seating, each a row of buttons with the current choice ticked; applies from the next game."""
    translator = translator_for(lang)
    chat = str(chat_id)
    variant = settings.variant or "russian"
    seconds = int(turn)
    text = lines(
        "<b>" + translator.t("Settings of this chat (admins)") + "</b>",
        translator.t("Rules: {variant}", variant=variant_name(translator, variant)),
        translator.t("Time for a turn: {duration}", duration=duration(translator, seconds)),
        translator.t("Language: {language}", language=translator.t(LANGUAGE_NAMES[lang or "ru"])),
        translator.t("Seats: shuffled at the start") if settings.shuffle else translator.t("Seats: in join order"),
        translator.t("Changes apply from the next game on."),
    )
    timer = [
        button(
            _tick(duration(translator, choice, short=True), choice == seconds), Tap(Op.SETTINGS, chat, arg=f"t{choice}")
        )
        for choice in choices
    ]
    timer.append(
        button(_tick(duration(translator, long, short=True), seconds == long), Tap(Op.SETTINGS, chat, arg="tlong"))
    )
    languages = _language_buttons(Op.SETTINGS, chat, lang, "l")
    variants = [
        button(_tick(variant_short(translator, kind), kind == variant), Tap(Op.SETTINGS, chat, arg=f"v{kind}"))
        for kind in ("russian", "classic")
    ]
    seating = [
        button(_tick(translator.t("Join order"), not settings.shuffle), Tap(Op.SETTINGS, chat, arg="sjoin")),
        button(_tick(translator.t("Shuffle seats"), settings.shuffle), Tap(Op.SETTINGS, chat, arg="sshuffle")),
    ]
    timers = [timer[i : i + TIMERS_PER_ROW] for i in range(0, len(timer), TIMERS_PER_ROW)]
    # one variant a row: the labels say «rules», so they do not read as the languages below
    return Rendered(text, [variants[:1], variants[1:], *timers, languages[:2], languages[2:], seating])


def stats_text(lang: str | None, who: str, totals: Totals, places: dict[int, int]) -> str:
    """A player's figures over all counted games (/stats). ``who`` is a raw name."""
    translator = translator_for(lang)
    head = "<b>" + translator.t("Statistics: {player}", player=isolated(who)) + "</b>"
    if not totals.games:
        return head + "\n" + translator.t("No finished game yet.")

    def figure(value: float) -> str:
        return number(translator, value)

    finishes = " · ".join(
        translator.n("{place}: {n} time", "{place}: {n} times", count, place=ordinal(translator, place))
        for place, count in sorted(places.items())
    )
    games = translator.n("{n} game", "{n} games", totals.games)
    return lines(
        head,
        games
        + " · "
        + translator.t("wins: {wins}", wins=figure(totals.wins))
        + " · "
        + translator.t("draws: {draws}", draws=figure(totals.draws)),
        translator.t("Average place: {place}", place=number(translator, round(totals.mean_place, 2), "0.0#")),
        translator.t("Places: {places}", places=finishes),
        translator.t(
            "Plays: {plays} · bluffs: {bluffs} (caught {caught}, got through {through})",
            plays=figure(totals.plays),
            bluffs=figure(totals.bluffs),
            caught=figure(totals.bluffs_caught),
            through=figure(totals.bluffs_through),
        ),
        translator.t(
            "«I doubt it!» said: {made} (right {right})",
            made=figure(totals.challenges),
            right=figure(totals.challenges_right),
        ),
        translator.t("Piles taken: {piles}", piles=figure(totals.piles_taken)),
    )


def top_text(lang: str | None, rows: list[tuple[int, str, int, int]], min_games: int) -> str:
    """The chat's leaderboard (/top): (user id, raw name, wins, games) rows, best first."""
    translator = translator_for(lang)
    board = ["<b>" + translator.t("Best players of this chat") + "</b>"]
    for place, (_, who, wins, games) in enumerate(rows, start=1):
        figures = (
            translator.t("wins: {wins}", wins=number(translator, wins))
            + " · "
            + translator.n("{n} game", "{n} games", games)
        )
        board.append(f"{place}. {isolated(who)} — {figures}")
    if not rows:
        board.append(
            translator.n("Nobody has played {n} game here yet.", "Nobody has played {n} games here yet.", min_games)
        )
    return lines(*board)
