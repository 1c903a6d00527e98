"""The group's one message of a game, edited in place: the lobby while it is open, then the
board (seats with hand sizes, whose turn, the pile, the round's claims), then the result."""

from __future__ import annotations

import core
from tgbot.codec import Op, Tap
from tgbot.game.table import Ending, Status, Table
from tgbot.i18n import Translator, translator as translator_for
from tgbot.render.limits import fit
from tgbot.render.text import (
    Rendered,
    button,
    lines,
    link,
    marked,
    name,
    number,
    pile_text,
    place_text,
    rank_count,
    rank_due,
    variant_name,
)

#: The board shows the round's last claims only: a Classic round can run to a dozen.
ROUND_CLAIMS_SHOWN = 4


def lobby(table: Table) -> Rendered:
    """The lobby message: players, variant, and the join/leave/start/cancel/variant buttons."""
    translator = translator_for(table.lang)
    seats = [f"{seat + 1}. {marked(table, seat)}" for seat in range(len(table.seats))] or ["—"]
    missing = core.MIN_PLAYERS - len(table.seats)
    if missing > 0:
        footer = translator.n(
            "Waiting for at least {n} more player.", "Waiting for at least {n} more players.", missing
        )
    else:
        footer = translator.t("The creator or an admin can start the game.")
    other = "classic" if table.variant == "russian" else "russian"
    switch = (
        translator.t("Switch to the Russian variant")
        if other == "russian"
        else translator.t("Switch to the classic variant")
    )
    bots = [button(translator.t("Add a bot"), Tap(Op.ADDBOT, table.id))]
    if any(not seat.human for seat in table.seats):
        bots.append(button(translator.t("Remove a bot"), Tap(Op.RMBOT, table.id)))
    keyboard = [
        [button(translator.t("Join"), Tap(Op.JOIN, table.id)), button(translator.t("Leave"), Tap(Op.LEAVE, table.id))],
        [
            button(translator.t("Start"), Tap(Op.START, table.id)),
            button(translator.t("Cancel"), Tap(Op.CANCEL, table.id)),
        ],
        [button(switch, Tap(Op.VARIANT, table.id, arg=other))],
        bots,
    ]
    head = [
        "<b>" + translator.t("«I doubt it»: a new game, join in") + "</b>",
        translator.t("Rules: {variant}", variant=variant_name(translator, table.variant)),
        translator.t("Players ({count}/6):", count=len(table.seats)),
    ]
    return Rendered(lines(*head, *seats, footer), keyboard)


def board(table: Table, bot_username: str) -> Rendered:
    """The group's board: the lobby while it is open, then the table, then the final result."""
    if table.status is Status.LOBBY:
        return lobby(table)
    translator = translator_for(table.lang)
    if table.state is None:  # cancelled before the start
        stopped = table.ended == Ending.STOPPED
        return Rendered(
            translator.t("The lobby was closed.")
            if stopped
            else translator.t("The lobby expired: nobody started the game.")
        )
    public_view = core.public_view(table.state)
    rows = ["<b>" + translator.t("«I doubt it»") + "</b> · " + variant_name(translator, public_view.variant)]
    rows += _seat_rows(table, public_view, translator)
    pile = pile_text(translator, public_view.pile_size)
    rows += ["", pile + " · " + translator.t("plays: {plays}", plays=number(translator, public_view.plays))]
    claims = [
        translator.t(
            "{player} — {claim}", player=name(table, claim.seat), claim=rank_count(translator, claim.count, claim.claim)
        )
        for claim in public_view.claims[-ROUND_CLAIMS_SHOWN:]
    ]
    earlier = len(public_view.claims) > ROUND_CLAIMS_SHOWN

    def round_line(kept: list[str], cut: bool) -> list[str]:
        """The round's claims kept, after «…» when there were more."""
        if not claims:
            return []
        return [translator.t("This round: {claims}", claims=" · ".join((["…"] if earlier or cut else []) + kept))]

    text = fit(rows, claims, ["", _status_line(table, public_view, translator)], round_line)
    keyboard = None
    if table.status is Status.PLAYING and bot_username:
        keyboard = [[link(translator.t("My cards (private chat)"), f"https://t.me/{bot_username}")]]
    elif table.status is Status.OVER:
        keyboard = [[button(translator.t("Play again"), Tap(Op.AGAIN, table.id))]]
    return Rendered(text, keyboard)


def _seat_rows(table: Table, public_view: core.PublicView, translator: Translator) -> list[str]:
    """One row per seat: in seat order with its number while the game runs; once it has a
    result, by place (then seat) without the number, so that only the place is a rank."""
    result = public_view.result
    if result is None:
        rows = []
        for seat in range(public_view.players):
            marker = "▶ " if public_view.current == seat else ""
            cards = translator.n("{n} card", "{n} cards", public_view.hand_sizes[seat])
            rows.append(f"{marker}{seat + 1}. {marked(table, seat)} — {cards}")
        return rows
    return [
        f"{marked(table, seat)} — {place_text(translator, result.places[seat])} · "
        + translator.n("{n} card", "{n} cards", public_view.hand_sizes[seat])
        for seat in sorted(range(public_view.players), key=lambda seat: (result.places[seat], seat))
    ]


def _status_line(table: Table, public_view: core.PublicView, translator: Translator) -> str:
    """The board's last line: the result, or who is to do what now."""
    if table.status is Status.CANCELLED:
        return translator.t("The game was stopped. No result.")
    if public_view.result is not None:
        return result_line(table, public_view.result, translator)
    assert public_view.current is not None
    who = name(table, public_view.current)
    if public_view.phase is core.Phase.FINAL_CHECK:
        last = public_view.claims[-1]
        return translator.t(
            "{player} has played their last cards. {who}, do you believe it?", player=name(table, last.seat), who=who
        )
    if public_view.phase is core.Phase.CAP_CHECK:
        return translator.t("That was the last play of the game. {who}, do you believe it?", who=who)
    due = public_view.required_claim
    if public_view.phase is core.Phase.OPENING and due is None:
        return translator.t("{who} opens a new round and names the cards.", who=who)
    assert due is not None
    if public_view.phase is core.Phase.OPENING:
        return translator.t("{who} opens a new round: {ranks} are due.", who=who, ranks=rank_due(translator, due))
    return translator.t("{who} to play {ranks} or to say «I doubt it!».", who=who, ranks=rank_due(translator, due))


def result_line(table: Table, result: core.Result, translator: Translator) -> str:
    """The result in one line: the winner, or the players sharing first place."""
    if result.draw:
        leaders = ", ".join(name(table, seat, translator) for seat, place in enumerate(result.places) if place == 1)
        return translator.t("Draw! First place shared by {players}.", players=leaders)
    assert result.winner is not None
    return translator.t("{winner} wins!", winner=name(table, result.winner, translator))


def no_game(lang: str | None, last: Table | None = None) -> str:
    """The group's answer to a command that needs a game when none is open: how its ``last``
    game ended (:meth:`tgbot.owner.store.Store.chat_last_game`; ``None`` or a lobby never
    started: nothing to tell), then how to open a new one."""
    translator = translator_for(lang)
    if last is None or last.state is None:
        return translator.t("There is no game here. /start_game opens one.")
    result = core.public_view(last.state).result
    if result is None:
        ended = translator.t("The last game here ended without result.")
    else:
        ended = translator.t("The last game here is over. {result}", result=result_line(last, result, translator))
    return lines(ended, translator.t("/start_game opens a new one."))
