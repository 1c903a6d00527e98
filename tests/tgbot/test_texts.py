"""Player-facing texts that must explain themselves, in every language: the card buttons while
picking, the turn line of the other players' panels, the bluffs in the result, the showdown on
the panels, and the answer to /board once the game has ended."""

from __future__ import annotations

from dataclasses import replace

import pytest

import core
from core.cards import Hand
from core.stats import SeatStats
from tests.tgbot.helpers import ai_players, ai_step, started
from tgbot.game import play
from tgbot.game.table import AnnouncementKind, Player, Status, Table, with_seat
from tgbot.handlers.app import COMMANDS
from tgbot.i18n import LANGUAGES, translator
from tgbot.render.announcements import announcement
from tgbot.render.board import board, no_game, result_line
from tgbot.render.panel import panel
from tgbot.render.text import AI_MARK, Rendered, marked, name, place_text, rank_count, rank_due, rank_short


def _in(table: Table, lang: str) -> Table:
    """``table`` with the group and every seat in ``lang``."""
    return replace(table, lang=lang, seats=tuple(replace(seat, lang=lang) for seat in table.seats))


def _first(predicate, seed: int = 7, variant: str = "russian", steps: int = 400) -> tuple[Table, list[dict]]:
    """The first table of an AI-played game (and the notes of the action that made it) that
    satisfies ``predicate``."""
    table, _ = started(4, variant=variant)
    players, notes = ai_players(4, seed), []
    for _ in range(steps):
        if predicate(table, notes):
            return table, notes
        change = ai_step(table, players)
        table, notes = change.table, change.outbox
    raise AssertionError("no such table")


def _labels(rendered: Rendered) -> list[str]:
    return [button["text"] for row in rendered.keyboard or [] for button in row]


# -- 1. card buttons while picking --------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_partly_picked_rank_shows_a_dot_per_card_held_filled_when_picked(lang):
    """«✓Q 1/3» read as a fraction; now «Q ●○○»: one of the three Queens held is picked."""

    def three_of_a_rank(table: Table, _) -> bool:
        hand = table.state.hands[table.state.current]
        return table.state.phase is core.Phase.PLAYING and max(hand[rank] for rank in hand.distinct()) >= 3

    table, _ = _first(three_of_a_rank)
    table = _in(table, lang)
    seat = table.state.current
    hand = table.state.hands[seat]
    rank = next(rank for rank in hand.distinct() if hand[rank] >= 3)
    short = rank_short(translator(lang), rank)
    held = hand[rank]
    assert f"{short} ×{held}" in _labels(panel(table, seat))  # nothing picked: the count held
    one = _labels(panel(table, seat, Hand.from_ranks([rank]).to_str()))
    assert f"{short} ●" + "○" * (held - 1) in one
    assert not any("/" in label for label in one)
    two = _labels(panel(table, seat, Hand.from_ranks([rank, rank]).to_str()))
    assert f"{short} ●●" + "○" * (held - 2) in two
    single = next((other for other in hand.distinct() if hand[other] == 1), None)
    if single is not None:  # a rank held once is ticked
        assert f"✓ {rank_short(translator(lang), single)}" in _labels(
            panel(table, seat, Hand.from_ranks([single]).to_str())
        )


# -- 2. the turn line on the other players' panels ----------------------------------------------

#: The turn line of another player's panel: the rank to play, and the opening of a round (msgids).
TURN_LINES = ("{who} to play · claim: {ranks}", "{who} to open the round, with any claim")


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("variant", ["russian", "classic"])
def test_the_turn_line_names_the_player_and_the_rank_to_claim(lang, variant):
    """«Turn: X · Aces are due» was no one's English: the last line of the other players'
    panels names whose turn it is and the rank the rules make the next play claim (the round's
    in the Russian variant, the next in the sequence in the classic one), or that they open a
    round with any claim."""
    due, opens = TURN_LINES
    tr = translator(lang)
    table, _ = _first(lambda t, _: t.state.phase is core.Phase.PLAYING, variant=variant)
    table = _in(table, lang)
    current, other = table.state.current, (table.state.current + 1) % 4
    who = name(table, current, tr)
    ranks = rank_due(tr, core.view(table.state, current).required_claim)
    line = panel(table, other).text.split("\n")[-1]
    assert line == tr.t(due, who=who, ranks=ranks) and who in line and ranks in line
    if variant == "russian":
        opening, _ = _first(lambda t, _: t.state.plays > 0 and t.state.phase is core.Phase.OPENING)
        opening = _in(opening, lang)
        who = name(opening, opening.state.current, tr)
        line = panel(opening, (opening.state.current + 1) % 4).text.split("\n")[-1]
        assert line == tr.t(opens, who=who) and who in line


@pytest.mark.parametrize("lang", LANGUAGES)
def test_at_a_classic_opening_the_turn_line_offers_no_challenge(lang):
    """The English panels once read "Алиса’s turn: play Aces or say “I don’t believe you!”" when
    Алиса opened a Classic round: there was nothing to doubt (her keyboard rightly had no such
    button). The turn line of the other panels names the rank to play and nothing to doubt."""
    tr = translator(lang)
    table, _ = _first(lambda t, _: t.state.phase is core.Phase.OPENING, variant="classic")
    table = _in(table, lang)
    assert not core.view(table.state, table.state.current).can_challenge
    line = panel(table, (table.state.current + 1) % 4).text.split("\n")[-1]
    assert rank_due(tr, core.view(table.state, table.state.current).required_claim) in line
    assert tr.t("I doubt it!").strip("!¡ ") not in line


def test_the_private_command_menu_says_nothing_of_replying_to_someone():
    """/stats in the private chat's command menu once said "(reply: someone else's)": nobody
    else writes there. Its description differs from the group's in every language."""
    group, private = (dict(COMMANDS[kind])["stats"] for kind in ("group", "private"))
    for lang in LANGUAGES:
        tr = translator(lang)
        assert tr.t(private) != tr.t(group) and len(tr.t(private)) < len(tr.t(group)), lang


# -- 3. the bluffs in the result -----------------------------------------------------------------

#: A player's bluffs in the result, the caught ones among them (msgid).
BLUFFS = "bluffs: {made} (caught out: {caught})"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_result_says_how_many_of_each_players_bluffs_were_caught(lang):
    """«bluffs: 6, caught: 0» left open whose catches those were: now the caught ones are
    counted among the player's own bluffs."""
    table, notes = _first(lambda t, _: t.status is Status.OVER, steps=5000)
    table = _in(table, lang)
    ended = next(note for note in notes if note["kind"] == AnnouncementKind.GAME_ENDED)
    figures = [
        SeatStats(bluffs=6, bluffs_caught=2),
        SeatStats(bluffs=1),
        SeatStats(),
        SeatStats(bluffs=3, bluffs_caught=3),
    ]
    text = announcement(table, ended, figures)
    tr = translator(lang)
    six = tr.t(BLUFFS, made="6", caught="2")
    assert "6" in six and "2" in six and six.index("6") < six.index("2")  # made, then caught among them
    assert text.count(six) == 1 and text.count(tr.t(BLUFFS, made="3", caught="3")) == 1
    assert "caught: " not in text


# -- 5. the showdown on the panels ---------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_panel_after_a_showdown_says_what_happened_until_the_next_play(lang):
    """After «I doubt it!» the pile is empty and the round's claims gone: every panel (the
    challenger's, the player's, the others') now carries the group's announcement of the
    showdown in one line; the next play takes it off."""
    table, notes = _first(
        lambda t, notes: (
            t.status is Status.PLAYING and any(n["kind"] == AnnouncementKind.CHALLENGE_RESOLVED for n in notes)
        )
    )
    table = _in(table, lang)
    note = next(n for n in notes if n["kind"] == AnnouncementKind.CHALLENGE_RESOLVED)
    assert table.showdown == note
    said = announcement(table, note)
    assert said is not None and said.count("\n") == 3
    for seat in range(4):
        assert said.replace("\n", " ") in panel(table, seat).text.split("\n")
    assert Table.from_json(table.to_json()).showdown == note  # kept in Redis with the table
    players = ai_players(4, 7)
    after = ai_step(table, players).table  # the winner of the showdown opens the next round
    assert after.showdown is None
    assert all(said.replace("\n", " ") not in panel(after, seat).text for seat in range(4))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_at_a_final_check_the_timer_line_says_the_automatic_answer_is_to_believe(lang):
    """The panel once said only that an automatic move comes: at a final check that move is
    «I believe», which hands the win over. The timer line says so, and only it (no duplicate)."""
    table, _ = _first(lambda t, _: t.state.phase is core.Phase.FINAL_CHECK, steps=5000)
    table = replace(_in(table, lang), turn_end=2_000_000_000.0, turn_timeout=60.0)
    text = panel(table, table.state.current).text
    believe = translator(lang).t("I believe")
    timer = next(line for line in text.split("\n") if line.startswith("⏱"))
    assert believe in timer and text.count(believe) == 1


def test_a_belief_at_the_final_check_stays_on_the_final_panels():
    table, _ = _first(lambda t, _: t.state.phase is core.Phase.FINAL_CHECK, steps=5000)
    current = table.state.current
    over = play.act(table, table.seats[current].user_id, table.action_count, core.Believe()).table
    assert over.status is Status.OVER and over.showdown["kind"] == AnnouncementKind.BELIEVED
    said = announcement(over, over.showdown).replace("\n", " ")
    assert said in panel(over, 0).text


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_final_board_lists_the_seats_by_place_without_seat_numbers(lang):
    """The final board once read «1. Алиса — 2-е место»: a seat number beside a place. Once the
    game has a result, its rows go by place and carry no number."""
    over, _ = _first(lambda t, _: t.status is Status.OVER, seed=1, steps=5000)  # places 4, 1, 3, 2
    over = _in(over, lang)
    places = over.state.result.places
    rows = board(over, "bot").text.split("\n")
    seat_rows = [
        next(i for i, row in enumerate(rows) if row.startswith(marked(over, seat) + " — ")) for seat in range(4)
    ]
    by_place = sorted(range(4), key=lambda seat: (places[seat], seat))
    assert sorted(seat_rows) == [seat_rows[seat] for seat in by_place]
    for seat in range(4):
        assert place_text(translator(lang), places[seat]) in rows[seat_rows[seat]]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_boards_round_list_keeps_the_last_claims(lang):
    """A Classic round's list on the board once grew to 13 claims: it shows the last few, after
    «…» when some are cut."""
    table, _ = _first(lambda t, _: len(core.public_view(t.state).claims) > 5, variant="classic", steps=2000)
    table, tr = _in(table, lang), translator(lang)
    claims = [
        tr.t("{player} — {claim}", player=name(table, c.seat), claim=rank_count(tr, c.count, c.claim))
        for c in core.public_view(table.state).claims
    ]
    line = next(row for row in board(table, "bot").text.split("\n") if claims[-1] in row)
    assert "…" in line and claims[0] not in line and all(claim in line for claim in claims[-4:])
    assert line.count(" · ") == 4  # «…» and four claims


@pytest.mark.parametrize("lang", LANGUAGES)
def test_an_empty_pile_says_it_is_empty(lang):
    """«В стопке: 0 карт» read oddly on every board after a showdown: an empty pile says so."""
    table, _ = _first(lambda t, _: t.state.pile_size == 0 and t.state.plays > 0, steps=2000)
    table, empty = _in(table, lang), translator(lang).t("Pile: empty")
    assert empty in board(table, "bot").text and empty in panel(table, 0).text


def test_the_ai_mark_is_for_people_the_ai_plays_for():
    """«Бот Вася 🤖» said twice that a bot plays: the mark stands only beside a person whose seat
    the AI plays for them; an AI player's name is enough."""
    table, _ = started(4)
    seats = with_seat(table.seats, 1, player=Player.BOT, name="Bot Vasya")
    table = replace(table, seats=with_seat(seats, 2, player=Player.STAND_IN))
    text = board(table, "bot").text
    assert text.count(AI_MARK) == 1 and name(table, 2) + " " + AI_MARK in text


# -- 4. /board once the game has ended -------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGUAGES)
def test_without_a_game_the_group_hears_how_the_last_one_ended(lang):
    over, _ = _first(lambda t, _: t.status is Status.OVER, steps=5000)
    tr = translator(lang)
    result = result_line(over, over.state.result, tr)
    again = tr.t("/start_game opens a new one.")
    assert "/start_game" in again
    assert no_game(lang, over) == tr.t("The last game here is over. {result}", result=result) + "\n" + again
    assert result in no_game(lang, over)
    stopped_game = replace(started()[0], status=Status.CANCELLED, ended="stopped")
    assert no_game(lang, stopped_game).split("\n") == [tr.t("The last game here ended without result."), again]
    nothing = translator(lang).t("There is no game here. /start_game opens one.")
    assert no_game(lang, None) == nothing
    assert no_game(lang, replace(started()[0], status=Status.CANCELLED, state=None)) == nothing  # a lobby never started


async def test_the_store_knows_a_chats_last_game_once_it_has_ended(store):
    table, _ = started(4, gid="L1")
    await store.create(table)
    assert await store.chat_last_game(table.chat_id, None) is None  # running: no last game yet
    players = ai_players(4, 7)
    while (await store.load("L1")).status is Status.PLAYING:
        await store.transact("L1", lambda current: ai_step(current, players))
    assert await store.chat_game(table.chat_id, None) is None
    last = await store.chat_last_game(table.chat_id, None)
    assert last is not None and last.id == "L1" and last.status is Status.OVER
    assert await store.chat_last_game(table.chat_id, 5) is None  # another topic
    assert await store.redis.ttl(store.keys.chat_last(table.chat_id, None)) > 0  # it expires with the game
