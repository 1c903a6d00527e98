"""Shared helpers for the core tests: random games with mixed players, invariant checks.

The players come from ``core.ai.make_player(name, seat, rng)`` when ``core/ai.py`` exists
("random", "honest", "counting"); until then a local random-legal-action player stands in.
Every player sees only ``core.view(state, seat)``.
"""

from __future__ import annotations

import importlib
import importlib.util
import random
from dataclasses import dataclass
from typing import Callable

from core import Believe, Challenge, GameState, Hand, Play, Phase, Rank, apply, new_game, view
from core.cards import FULL_DECK as FULL_DECK_HAND, RANKS

AI_NAMES = ("random", "honest", "counting")


def _ai_module():
    try:
        if importlib.util.find_spec("core.ai") is None:
            return None
        return importlib.import_module("core.ai")
    except Exception:  # a half-written core.ai must not break the engine tests
        return None


AI = _ai_module()
HAVE_AI = AI is not None and hasattr(AI, "make_player")


class LocalRandomPlayer:
    """A random legal-action player reading only its view (stand-in for core.ai)."""

    def __init__(self, seat: int, rng: random.Random, bluffy: float = 0.5, doubt: float = 0.3) -> None:
        self.seat, self.rng, self.bluffy, self.doubt = seat, rng, bluffy, doubt

    def act(self, v):
        rng = self.rng
        if v.public.answering:
            return Challenge() if rng.random() < 0.5 else Believe()
        if v.phase is Phase.PLAYING and rng.random() < self.doubt:
            return Challenge()
        cards = list(v.hand.ranks())
        rng.shuffle(cards)
        k = rng.randint(1, min(4, len(cards)))
        claim = v.required_claim
        if claim is None:
            claim = rng.choice(RANKS) if rng.random() < self.bluffy else cards[0]
        elif rng.random() >= self.bluffy and v.hand[claim]:
            # play truthfully when possible
            k = rng.randint(1, min(4, v.hand[claim]))
            return Play((claim,) * k, claim)
        return Play(tuple(cards[:k]), claim)


def make_player(name: str, seat: int, rng: random.Random):
    """``core.ai.make_player`` when available, else the local random player."""
    if HAVE_AI:
        return AI.make_player(name, seat, rng)
    return LocalRandomPlayer(seat, rng)


def choose(player, v):
    """Ask a player (core.ai or local) for its action on view ``v``."""
    for meth in ("act", "choose", "decide", "__call__"):
        f = getattr(player, meth, None)
        if f is not None:
            return f(v)
    raise TypeError(f"cannot ask {player!r} for an action")


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
        if state.can_play():
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


def play_game(
    seed: int,
    variant: str,
    on_state: Callable[[GameState], None] | None = None,
    names: tuple[str, ...] | None = None,
    players: int | None = None,
) -> Game:
    """Play one seeded random game with 3 to 6 mixed players (core.ai if available)."""
    rng = random.Random(seed)
    n = players or rng.randint(3, 6)
    state = new_game(n, variant, random.Random(rng.getrandbits(64)))
    if names is None:
        names = tuple(rng.choice(AI_NAMES) for _ in range(n))
    seats = [make_player(names[i], i, random.Random(rng.getrandbits(64))) for i in range(n)]
    # as core.selfplay does: only players with memory observe (random and honest keep none)
    observers = [(i, p) for i, p in enumerate(seats) if hasattr(p, "observe") and getattr(p, "name", "counting") == "counting"]
    initial = state
    actions, states = [], []
    guard = 0
    while state.result is None:
        seat = state.current
        action = choose(seats[seat], view(state, seat))
        state, events = apply(state, seat, action)
        for i, p in observers:
            p.observe(events, view(state, i))
        actions.append((seat, action))
        states.append(state)
        if on_state is not None:
            on_state(state)
        guard += 1
        assert guard < 5000, "game does not end"
    return Game(seed, variant, initial, actions, states, state)


# -- the seeded sweep (run in worker processes by test_properties.py) -----------------------------

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
