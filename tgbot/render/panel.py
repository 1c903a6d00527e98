"""A player's private panel: their hand, whose turn, and on their turn the keyboard of exactly
the engine's legal actions (asked of :func:`core.view`: ``can_play``, ``can_challenge``,
``can_believe``), in the seat's own language."""

from __future__ import annotations

import core
from core.cards import RANKS, Hand
from tgbot.codec import Op, Tap
from tgbot.game.table import Player, Status, Table
from tgbot.i18n import Translator
from tgbot.render.announcements import showdown_line
from tgbot.render.board import result_line
from tgbot.render.text import (
    BELIEVE,
    CHALLENGE,
    PLAY,
    Button,
    Keyboard,
    Rendered,
    button,
    deadline,
    hand_text,
    lines,
    name,
    pile_text,
    place_text,
    rank_count,
    rank_due,
    rank_short,
    seat_translator,
    title,
)

#: Card buttons per row of the panel (see tests/tgbot/test_keyboards.py for the width budget).
PICKS_PER_ROW = 4
CLAIMS_PER_ROW = 5


def turn_now(table: Table, seat: int) -> bool:
    """Whether it is ``seat``'s turn to act with their own hands (not the AI's)."""
    assert table.state is not None
    return table.status is Status.PLAYING and table.state.current == seat and not table.seats[seat].by_ai


def panel_state(table: Table, seat: int) -> str:
    """What a panel shows of its player's own situation: their hand, the game's status, on
    their turn the turn, and who plays the seat. Other players' moves alone do not edit a panel
    (its refresh button brings those in), so a play costs at most two panels."""
    assert table.state is not None
    me = table.seats[seat]
    if me.player is Player.LEFT:
        return f"left|{table.status.value}"  # nothing of the seat's hand, not even when it changes
    turn = table.action_count if turn_now(table, seat) else "-"
    return f"{table.state.hands[seat].to_str()}|{table.status.value}|{turn}|{int(me.by_ai)}"


def panel(table: Table, seat: int, picks: str = "", kept: bool = False) -> Rendered:
    """Seat ``seat``'s panel; ``picks`` are the cards selected so far (a compact hand string).
    A person who no longer holds the seat sees neither its hand nor a button (:func:`gone_panel`);
    one ``kept`` beside a newer turn panel maybe sent offers no action, only «Refresh»."""
    translator = seat_translator(table, seat)
    assert table.state is not None
    if table.seats[seat].player is Player.LEFT:
        return gone_panel(table, translator)
    player_view = core.view(table.state, seat)
    public_view = player_view.public
    rows = _situation(table, player_view, translator)
    if table.status is not Status.PLAYING:
        return _final(table, seat, public_view, translator, rows)
    rows.append("")
    me = table.seats[seat]
    keyboard: Keyboard = []
    if me.by_ai:
        rows.append("<b>" + translator.t("The AI is playing for you.") + "</b>")
        keyboard.append([button(translator.t("Take my seat back"), Tap(Op.TAKEBACK, table.id))])
    if not player_view.my_turn:
        rows.append(_turn_line(table, public_view, translator))
    elif kept:  # its actions are on the newer panel only: one live turn panel
        rows.append(translator.t("Your buttons are in my newer message below. Can’t see it? Tap «Refresh»."))
    elif not me.by_ai:
        keyboard += _turn(table, player_view, picks, translator, rows)
    keyboard.append([button(translator.t("Refresh"), Tap(Op.REFRESH, table.id))])
    return Rendered(lines(*rows), keyboard)


def _situation(table: Table, player_view: core.PlayerView, translator: Translator) -> list[str]:
    """A panel's first lines: the group, the player's hand, every hand's size, the pile, the last
    claim and the showdown."""
    public_view = player_view.public
    sizes = " · ".join(f"{name(table, i, translator)} {public_view.hand_sizes[i]}" for i in range(public_view.players))
    rows = [
        translator.t("Game in the group «{group}»", group=title(table)),
        translator.t(
            "Your cards ({count}): {hand}", count=player_view.hand.size, hand=hand_text(translator, player_view.hand)
        )
        if player_view.hand.size
        else translator.t("You have no cards left."),
        translator.t("Hands: {sizes}", sizes=sizes),
        pile_text(translator, public_view.pile_size),
    ]
    if public_view.claims:
        last = public_view.claims[-1]
        player, claim = name(table, last.seat, translator), rank_count(translator, last.count, last.claim)
        rows.append(translator.t("Last claim: {player} — {claim}", player=player, claim=claim))
    if table.showdown is not None:
        rows.append(showdown_line(table, table.showdown, translator))
    return rows


def gone_panel(table: Table, translator: Translator) -> Rendered:
    """The panel of a person who no longer holds their seat: the group, that the AI has the seat,
    and once the game is over its result; no hand, no button."""
    rows = [
        translator.t("Game in the group «{group}»", group=title(table)),
        "",
        translator.t("You are no longer in this game: the AI has taken your seat, and its cards are hidden from you."),
    ]
    result = table.state.result if table.state is not None else None
    if table.status is Status.OVER and result is not None:
        rows += ["", result_line(table, result, translator)]
    elif table.status is not Status.PLAYING:
        rows += ["", translator.t("The game was stopped. No result.")]
    return Rendered(lines(*rows))


def _final(table: Table, seat: int, public_view: core.PublicView, translator: Translator, rows: list[str]) -> Rendered:
    """The panel of a game that ended: the result and the record's button, or «stopped»."""
    if public_view.result is None:
        return Rendered(lines(*rows, translator.t("The game was stopped. No result.")))
    place = translator.t("Your result: {place}", place=place_text(translator, public_view.result.places[seat]))
    record = button(translator.t("Get the game's record"), Tap(Op.REC, table.id))
    return Rendered(lines(*rows, "", result_line(table, public_view.result, translator), place), [[record]])


def _turn(table: Table, player_view: core.PlayerView, picks: str, translator: Translator, rows: list[str]) -> Keyboard:
    """The player's own turn: the prompt, the deadline under it, and the legal actions' rows."""
    public_view = player_view.public
    keyboard: Keyboard = []
    if player_view.can_believe:
        last = public_view.claims[-1]
        claim = rank_count(translator, last.count, last.claim)
        if public_view.phase is core.Phase.FINAL_CHECK:
            prompt = translator.t(
                "{player} has played their last cards: {claim}. Do you believe it?",
                player=name(table, last.seat, translator),
                claim=claim,
            )
        else:
            prompt = translator.t("The last play of the game: {claim}. Do you believe it?", claim=claim)
        rows.append("<b>" + prompt + "</b>")
        keyboard.append(
            [button(translator.t("I believe"), Tap(Op.BELIEVE, table.id, action_count=table.action_count), BELIEVE)]
        )
    head = len(rows)
    if player_view.can_play:
        keyboard += _play_rows(table, player_view, picks, translator, rows)
    if player_view.can_challenge:
        keyboard.append(
            [
                button(
                    translator.t("I doubt it!"), Tap(Op.CHALLENGE, table.id, action_count=table.action_count), CHALLENGE
                )
            ]
        )
    if table.turn_end is not None:
        when = deadline(translator, table.turn_end, table.turn_timeout)
        # answering a last play, the automatic move is to believe it (at a final check: their win)
        timer = "⏱ " + (
            translator.t("If you don't answer, I will say «I believe» {deadline}.", deadline=when)
            if player_view.can_believe
            else translator.t("Automatic move {deadline} unless you move first.", deadline=when)
        )
        rows.insert(head + 1 if player_view.can_play else len(rows), timer)
    return keyboard


def _turn_line(table: Table, public_view: core.PublicView, translator: Translator) -> str:
    """Whose turn it is, on a panel that is not theirs, and what they may do: answer a final check
    or the cap, open a round with any claim, or play the rank that must be claimed (RULES.md)."""
    assert public_view.current is not None
    who = name(table, public_view.current, translator)
    due = public_view.required_claim
    if public_view.answering:
        return translator.t("{who} to answer: «I believe» or «I doubt it!»", who=who)
    if due is None:
        return translator.t("{who} to open the round, with any claim", who=who)
    return translator.t("{who} to play · claim: {ranks}", who=who, ranks=rank_due(translator, due))


def _play_prompt(player_view: core.PlayerView, translator: Translator) -> str:
    """What the player is asked on their turn to play."""
    required = player_view.required_claim
    if player_view.phase is core.Phase.OPENING and required is None:
        return translator.t("Your turn, and you open the round: pick 1 to 4 cards, then say what they are.")
    assert required is not None
    if player_view.phase is core.Phase.OPENING:
        return translator.t(
            "Your turn, and you open the round: play 1 to 4 {ranks}.", ranks=rank_due(translator, required)
        )
    return translator.t("Your turn: play 1 to 4 {ranks} or say «I doubt it!».", ranks=rank_due(translator, required))


#: A picked card and a card held but not picked, on a card button.
PICKED, UNPICKED = "●", "○"


def _pick_label(short: str, chosen: int, held: int) -> str:
    """A card button: the rank and how many the player holds («Q ×3»); once some are picked, one
    dot per card held, the picked ones filled («Q ●○○»: one of three Queens picked). A single
    card held is ticked when picked («✓ Q»). At most 7 characters («10 ●●○○»), a quarter of a row."""
    if not chosen:
        return short + (f" ×{held}" if held > 1 else "")
    if held == 1:
        return f"✓ {short}"
    return f"{short} {PICKED * chosen}{UNPICKED * (held - chosen)}"


def _play_rows(
    table: Table, player_view: core.PlayerView, picks: str, translator: Translator, rows: list[str]
) -> Keyboard:
    """The card buttons (a tap picks or unpicks one), then Clear and the play buttons."""
    rows.append("<b>" + _play_prompt(player_view, translator) + "</b>")
    picked = Hand.from_str(picks) if picks else Hand()
    if picks:
        rows.append(translator.t("Picked: {cards}", cards=hand_text(translator, picked)))
    count = table.action_count
    cards: list[Button] = []
    for rank in player_view.hand.distinct():
        held, chosen = player_view.hand[rank], picked[rank]
        more = chosen < held and picked.size < core.rules.MAX_PLAY_CARDS  # a tap adds one, else clears the rank
        after = picked + Hand.from_ranks([rank]) if more else picked - Hand.from_ranks([rank] * chosen)
        cards.append(
            button(
                _pick_label(rank_short(translator, rank), chosen, held),
                Tap(Op.PICK, table.id, action_count=count, cards=after.to_str()),
            )
        )
    keyboard = [cards[i : i + PICKS_PER_ROW] for i in range(0, len(cards), PICKS_PER_ROW)]
    if not picks:
        return keyboard
    keyboard.append([button(translator.t("Clear"), Tap(Op.PICK, table.id, action_count=count, cards=""))])
    required = player_view.required_claim
    if required is not None:
        label = translator.t("Play: {claim}", claim=rank_count(translator, picked.size, required))
        return [
            *keyboard,
            [button(label, Tap(Op.PLAY, table.id, action_count=count, cards=picks, claim=required.char), PLAY)],
        ]
    rows.append(translator.t("What do you claim? Tap it to play:"))
    play = [Tap(Op.PLAY, table.id, action_count=count, cards=picks, claim=rank.char) for rank in RANKS]
    claims = [button("▶ " + rank_short(translator, rank), tap, PLAY) for rank, tap in zip(RANKS, play, strict=True)]
    return keyboard + [claims[i : i + CLAIMS_PER_ROW] for i in range(0, len(claims), CLAIMS_PER_ROW)]
