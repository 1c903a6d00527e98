"""Shared helpers for the core tests: random games with mixed players, invariant checks.

The players are ``core.ai.make_player(name, seat, rng)`` ("random", "honest", "counting"),
imported directly: a broken ``core.ai`` fails these tests instead of being replaced by a weaker
stand-in. Every player sees only ``core.view(state, seat)``.
"""

from __future__ import annotations

import multiprocessing
import os
import random
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from core import GameState, Hand, Phase, apply, new_game, view
from core.ai import STRATEGIES, make_player
from core.cards import FULL_DECK as FULL_DECK_HAND


def total_cards(state: GameState) -> Hand:
    """Hands plus pile."""
    total = state.pile_cards
    for h in state.hands:
        total = total + h
    return total


def check_invariants(state: GameState, deal: Hand) -> None:
    """RULES.md invariants checked after every action."""
    assert total_cards(state) == deal, "cards are not conserved"
    if state.result is None:
        assert state.current is not None and 0 <= state.current < state.players
        if view(state, state.current).can_play:
            assert state.hands[state.current].size > 0, "a player with an empty hand is asked to play"
        empty = [i for i, h in enumerate(state.hands) if h.size == 0]
        # at most one player is out of cards while running: the one being checked
        assert len(empty) <= 1
        if empty:
            assert state.pile and state.pile[-1].seat == empty[0]
            assert state.phase in (Phase.FINAL_CHECK, Phase.CAP_CHECK)
    else:
        assert state.current is None
        assert state.phase is Phase.OVER


@dataclass
class Game:
    seed: int
    variant: str
    initial: GameState
    actions: list  # (seat, action)
    states: list  # state after each action
    final: GameState


#: The players random games mix: all but `search`, whose rollouts cost a few hundred times more
#: a decision; every :data:`SEARCH_EVERY`-th game seats it instead of seat 0's pick.
SWEPT = tuple(name for name in STRATEGIES if name != "search")
SEARCH_EVERY = 50


def play_game(
    seed: int,
    variant: str,
    on_state: Callable[[GameState], None] | None = None,
    names: tuple[str, ...] | None = None,
    players: int | None = None,
) -> Game:
    """Play one seeded random game with 3 to 6 mixed core.ai players."""
    rng = random.Random(seed)
    n = players or rng.randint(3, 6)
    state = new_game(n, variant, random.Random(rng.getrandbits(64)))
    if names is None:
        names = tuple(rng.choice(SWEPT) for _ in range(n))
        if seed % SEARCH_EVERY == 0:
            names = ("search", *names[1:])
    seats = [make_player(names[i], i, random.Random(rng.getrandbits(64))) for i in range(n)]
    initial = state
    actions, states = [], []
    guard = 0
    while state.result is None:
        seat = state.current
        action = seats[seat].act(view(state, seat))
        state, _ = apply(state, seat, action)
        actions.append((seat, action))
        states.append(state)
        if on_state is not None:
            on_state(state)
        guard += 1
        assert guard < 5000, "game does not end"
    return Game(seed, variant, initial, actions, states, state)


# -- the seeded sweep (run in worker processes by test_properties*.py) ---------------------------

MAX_STATE_BYTES = 2048


def checked_game(seed: int, variant: str) -> dict:
    """Play one seeded game checking every invariant after every action, then the record round
    trip. Returns a few statistics; raises AssertionError (with the seed) on any violation."""
    from core.record import Record, record_of, replay  # not core.replay: once imported, the CLI module shadows it

    sizes = []
    deal_total: list[Hand] = []

    def on_state(s: GameState) -> None:
        check_invariants(s, deal_total[0])
        text = s.to_json()
        sizes.append(len(text.encode()))
        assert sizes[-1] < MAX_STATE_BYTES, f"state of {sizes[-1]} bytes"
        assert '"schema_version"' in text
        assert GameState.from_json(text) == s, "serialization round trip"

    deal_total.append(FULL_DECK_HAND)
    try:
        g = play_game(seed, variant, on_state=lambda s: on_state(s))
        assert total_cards(g.initial) == FULL_DECK_HAND
        rec = record_of(variant, g.initial.hands, g.actions, seed=seed)
        back = Record.from_json(rec.to_json())
        assert back == rec
        out = replay(back)
        assert out.error is None and out.applied == len(g.actions)
        assert out.state == g.final, "record replay reaches another state"
        assert out.state.result == g.final.result
        s = out.summary()
        r = g.final.result
        assert s["status"] == "finished" and s["winner"] == r.winner and s["places"] == list(r.places)
        assert s["draw"] == r.draw and (r.draw == (r.winner is None))
        if r.winner is not None:
            assert r.places[r.winner] == 1 and list(r.places).count(1) == 1
        else:
            assert r.capped and list(r.places).count(1) >= 2
    except AssertionError as e:
        raise AssertionError(f"{variant} seed {seed}: {e}") from None
    return {
        "actions": len(g.actions),
        "max_bytes": max(sizes),
        "sum_bytes": sum(sizes),
        "capped": int(g.final.result.capped),
        "draw": int(g.final.result.draw),
        "players": g.initial.players,
    }


def sweep(variant: str, seeds: range | list[int]) -> dict:
    """Run :func:`checked_game` over ``seeds``; aggregated statistics."""
    agg = {"games": 0, "actions": 0, "max_bytes": 0, "sum_bytes": 0, "capped": 0, "draw": 0}
    for seed in seeds:
        st = checked_game(seed, variant)
        agg["games"] += 1
        agg["actions"] += st["actions"]
        agg["max_bytes"] = max(agg["max_bytes"], st["max_bytes"])
        agg["sum_bytes"] += st["sum_bytes"]
        agg["capped"] += st["capped"]
        agg["draw"] += st["draw"]
    return agg


#: Seeded games per variant of :func:`check_sweep` and the processes it splits them over.
GAMES_PER_VARIANT = 2000
WORKERS = 2
#: The sweeps' time limit (pytest-timeout, seconds): about a minute of CPU each, but one took
#: over 300 s (the suite's limit) beside the other on a machine loaded 7 times over; only a hang
#: should stop them (their speed is tests/bench's).
SWEEP_TIMEOUT = 900


def check_sweep(variant: str) -> None:
    """:data:`GAMES_PER_VARIANT` seeded games of ``variant`` (seeds from 0, classic's from 1 000 000)
    over :data:`WORKERS` processes, each checked by :func:`checked_game`; every game is played and
    no state's JSON reaches 2 KiB."""
    base = 1_000_000 if variant == "classic" else 0
    seeds = [base + s for s in range(GAMES_PER_VARIANT)]
    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:  # pragma: no cover - no fork: run in-process
        ctx = None
    if ctx is None or (os.cpu_count() or 1) < 2:
        results = [sweep(variant, seeds)]
    else:
        with ProcessPoolExecutor(WORKERS, mp_context=ctx) as pool:
            results = list(pool.map(sweep, [variant] * WORKERS, [seeds[i::WORKERS] for i in range(WORKERS)]))
    games = sum(r["games"] for r in results)
    actions = sum(r["actions"] for r in results)
    assert games == GAMES_PER_VARIANT
    max_bytes = max(r["max_bytes"] for r in results)
    mean_bytes = sum(r["sum_bytes"] for r in results) / actions
    capped = sum(r["capped"] for r in results)
    print(
        f"\n{variant}: {games} games, {actions} actions, state max {max_bytes} B, mean {mean_bytes:.0f} B, "
        f"{capped} capped, {sum(r['draw'] for r in results)} draws"
    )
    assert max_bytes < 2048
