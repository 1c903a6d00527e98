"""The ``search`` player: determinised sampling with an opponent model fitted to this game.

A decision, from the view and the game's public events only:

1. :class:`~core.ai_model.OpponentModel` reads the events: per opponent, how often they
   challenged when they could, how many of their plays shown at a showdown were bluffs, and
   the chance that they play like ``honest`` (they challenged rarely, never lost a challenge,
   believed final checks) rather than like ``counting``.
2. The candidates are ``tuned``'s :data:`CANDIDATES` cheapest choices (as a russian opener
   also the truthful plays of its three most-held ranks).
3. :data:`SAMPLES` determinisations each draw which opponents play like ``honest``, then deal
   the cards we cannot see to the opponents' hands and pile plays; the play we may challenge
   is true with ``counting``'s probability, its odds scaled by how truthful its player's shown
   plays were (an ``honest`` play of several cards is always true).
4. Each candidate is played in every determinisation; the next player answers: as ``honest``
   does (challenge only a proven lie, believe a final check it cannot disprove) or as
   ``counting`` does from their sampled hand, their challenge rate scaled to the one they
   showed; if they play on, the round is played on to its showdown (at most
   :data:`ROLLOUT_STEPS` actions), every seat from its own view of the sampled state.
5. The positions reached are scored by a win model over hand sizes (:func:`win_chance`); the
   candidate of best mean score is played, unless it beats ``tuned``'s own choice by less
   than :data:`MARGIN` times the opponents' mean chance of playing like ``honest``.

The work is fixed (samples x candidates x rollout steps), never a time budget. The only
randomness is the injected stream, so a decision replays exactly.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from .actions import Action, Challenge, Play
from .ai_honest import HonestPlayer
from .ai_model import PRIOR_CHALLENGE, OpponentModel, RolloutCounting, odds
from .auto import automatic_move
from .cards import COPIES, FULL_DECK, RANKS, Hand, Rank
from .counting import TunedPlayer
from .events import Event
from .rules import MAX_PLAY_CARDS, variant as lookup_variant
from .state import GameState, PilePlay, apply
from .views import PlayerView, view as view_of

__all__ = ["OpponentModel", "SearchPlayer", "win_chance"]

#: Determinisations per decision, per variant.
SAMPLES = {"russian": 6, "classic": 10}
#: Candidates weighed per decision (``counting``'s cheapest), per variant: the cost is linear
#: in both. Classic rounds are long: 10 samples of 4 candidates beat 6 of 5 at about the cost.
CANDIDATES = {"russian": 5, "classic": 4}
#: Actions played on after the next player's answer, up to the showdown, per variant.
ROLLOUT_STEPS = {"russian": 6, "classic": 6}
#: Steepness of the win model: each card in hand divides the odds of winning by exp(this).
WIN_STEEPNESS = 0.2
#: The player to act next counts this many cards fewer in the win model.
TURN_BONUS = 0.5
#: The chance that an earlier play of the round (not the one to challenge) was true.
TRUTHFUL_PLAY = 0.6
#: Play the base player's own choice unless another candidate's mean win chance beats it by
#: more than this (per variant) times the opponents' mean chance of playing like ``honest``:
#: against three ``honest`` (tuning seed 90500, classic, 200 games) a fixed margin of 0.04 took
#: ``search`` from 37.5% to 51% but against three ``counting`` cost 41.5% to 32%; scaled by the
#: ``honest`` chance, 46% and 40.5%. In classic, with 10 samples of 4 candidates and the classic
#: ``HONEST_CHALLENGE`` / ``HONEST_LOST`` of :mod:`core.ai_model`, a margin of 0.1 (tuning seed
#: 90500: 53.5% against three ``honest``, 200 games; seeds 91000-91004: 39.2% against three
#: ``counting``, 1,000 games).
MARGIN = {"russian": 0.04, "classic": 0.1}


def win_chance(state: GameState, seat: int) -> float:
    """``seat``'s chance to win from ``state`` by the win model: 1 or 0 (a share of a draw)
    once the game is over, else a softmax over hand sizes (fewer cards, better; the player to
    act gets :data:`TURN_BONUS`)."""
    r = state.result
    if r is not None:
        return 0.0 if r.places[seat] != 1 else 1.0 / r.places.count(1)
    weights = [
        math.exp(-WIN_STEEPNESS * (h.size - (TURN_BONUS if i == state.current else 0.0)))
        for i, h in enumerate(state.hands)
    ]
    return weights[seat] / sum(weights)


@dataclass(frozen=True, slots=True)
class _Sample:
    """One determinisation: a full state, and the opponents drawn to play like ``honest``."""

    state: GameState
    honest: frozenset[int]


class SearchPlayer:
    """Determinised one-answer lookahead with an adaptive opponent model (module docstring)."""

    name = "search"

    def __init__(self, seat: int, rng: random.Random) -> None:
        self.seat = seat
        self.rng = rng
        self._counting = TunedPlayer(seat, rng)

    def act(self, view: PlayerView, history: Sequence[Event] = ()) -> Action:
        """The candidate of best mean win chance. Raises ``ValueError`` when it is not our
        turn."""
        if not view.my_turn:
            raise ValueError("not this player's turn")
        self._counting.configure(view.public.variant)
        if view.public.answering:
            return self._counting.act(view)
        options = self._counting.options(view)
        if len(options) == 1:
            return options[0][1]
        model = OpponentModel.from_history(view.public.variant, view.players, history)
        scored = self._evaluate(view, options, model)
        best = max(range(len(scored)), key=lambda i: (scored[i][1], -i))
        others = [model.honest_chance(s) for s in range(view.players) if s != self.seat]
        margin = MARGIN[view.public.variant] * sum(others) / len(others)
        return scored[0 if scored[best][1] - scored[0][1] <= margin else best][0]

    def evaluate(self, view: PlayerView, history: Sequence[Event]) -> list[tuple[Action, float]]:
        """Every candidate of a turn that may play with its mean win chance over
        :data:`SAMPLES` determinisations, ``counting``'s cheapest first."""
        self._counting.configure(view.public.variant)
        model = OpponentModel.from_history(view.public.variant, view.players, history)
        return self._evaluate(view, self._counting.options(view), model)

    def _evaluate(
        self, view: PlayerView, options: list[tuple[float, Action]], model: OpponentModel
    ) -> list[tuple[Action, float]]:
        candidates = self._candidates(view, options)
        if len(candidates) == 1:
            return [(candidates[0], 0.0)]
        scores = [0.0] * len(candidates)
        samples = SAMPLES[view.public.variant]
        for _ in range(samples):
            sample = self._determinise(view, model)
            answers: dict[tuple[int, Rank | None], tuple[float, Action]] = {}
            for i, action in enumerate(candidates):
                scores[i] += self._score(sample, action, model, answers)
        return [(a, score / samples) for a, score in zip(candidates, scores, strict=True)]

    # -- candidates ------------------------------------------------------------------------------

    def _candidates(self, view: PlayerView, options: list[tuple[float, Action]]) -> list[Action]:
        """``counting``'s :data:`CANDIDATES` cheapest choices without repeats; for a russian
        opener its three cheapest, then the truthful plays of its three most-held ranks."""
        ranked = [a for _, a in sorted(options, key=lambda o: o[0])]
        if view.required_claim is None:
            held = sorted((r for r in RANKS if view.hand[r]), key=lambda r: -view.hand[r])
            extra = [Play((r,) * min(MAX_PLAY_CARDS, view.hand[r]), r) for r in held[:3]]
            ranked = ranked[:3] + extra + ranked[3:]
        return list(dict.fromkeys(ranked))[: CANDIDATES[view.public.variant]]

    # -- determinisation -------------------------------------------------------------------------

    def _determinise(self, view: PlayerView, model: OpponentModel) -> _Sample:
        """A full state consistent with ``view``: each opponent drawn ``honest`` with the
        model's chance, the unseen cards dealt to the opponents' hands and pile plays, each
        opponent play truthful with the model's odds (an ``honest`` play of several cards
        always)."""
        rng = self.rng
        honest = frozenset(s for s in range(view.players) if s != self.seat and rng.random() < model.honest_chance(s))
        pool = list((FULL_DECK - view.hand - view.own_pile).ranks())
        rng.shuffle(pool)
        own = list(view.own_pile.ranks())
        last_truth = self._last_truth(view, model)
        pile: list[PilePlay] = []
        for idx, claim in enumerate(view.claims):
            if claim.seat == self.seat:
                cards = _take(own, claim.claim, claim.count, True)
            else:
                p = last_truth if idx == len(view.claims) - 1 else TRUTHFUL_PLAY
                p = 1.0 if claim.seat in honest and claim.count > 1 else p
                cards = _take(pool, claim.claim, claim.count, rng.random() < p)
            pile.append(PilePlay(claim.seat, Hand.from_ranks(cards), claim.claim))
        hands: list[Hand] = []
        for seat, size in enumerate(view.hand_sizes):
            if seat == self.seat:
                hands.append(view.hand)
            else:
                hands.append(Hand.from_ranks(pool[:size]))
                del pool[:size]
        state = GameState(lookup_variant(view.public.variant), tuple(hands), tuple(pile), self.seat, view.plays)
        return _Sample(state, honest)

    def _last_truth(self, view: PlayerView, model: OpponentModel) -> float:
        """The chance that the last claim is true: ``counting``'s estimate, its odds scaled by
        how the claimant's bluffing differs from the prior."""
        if not view.claims or view.claims[-1].seat == self.seat:
            return 1.0
        t = self._counting.truth_probability(view)
        if t in (0.0, 1.0):
            return t
        scaled = odds(t) * model.truth_odds(view.claims[-1].seat)
        return scaled / (1 + scaled)

    # -- scoring ---------------------------------------------------------------------------------

    def _score(
        self,
        sample: _Sample,
        action: Action,
        model: OpponentModel,
        answers: dict[tuple[int, Rank | None], tuple[float, Action]],
    ) -> float:
        """Our win chance after ``action`` in the sample and the next player's answer."""
        after, _ = apply(sample.state, self.seat, action)
        nxt = after.current
        if nxt is None or isinstance(action, Challenge):
            return win_chance(after, self.seat)
        key = (len(action.cards), action.claim) if isinstance(action, Play) else (0, None)
        if key not in answers:
            answers[key] = self._answer(after, nxt, model, nxt in sample.honest)
        p_challenge, play_on = answers[key]
        value = 0.0
        if p_challenge > 0.0:
            value += p_challenge * win_chance(apply(after, nxt, Challenge())[0], self.seat)
        if p_challenge < 1.0:
            value += (1 - p_challenge) * self._rollout(apply(after, nxt, play_on)[0], sample.honest)
        return value

    def _rollout(self, state: GameState, honest: frozenset[int]) -> float:
        """Our win chance after playing on to the showdown (at most :data:`ROLLOUT_STEPS`
        actions), every seat deciding from its own view of the sampled state: as ``honest``
        for the opponents drawn so, else as ``counting``."""
        for _ in range(ROLLOUT_STEPS[state.variant.name]):
            seat = state.current
            if seat is None:
                break
            v = view_of(state, seat)
            player = HonestPlayer(seat, self.rng) if seat in honest else RolloutCounting(seat, self.rng)
            state, _ = apply(state, seat, player.act(v))
            if not state.pile or state.result is not None:
                break
        return win_chance(state, self.seat)

    def _answer(self, state: GameState, seat: int, model: OpponentModel, honest: bool) -> tuple[float, Action]:
        """How likely ``seat`` challenges the last play, and what they do otherwise. As
        ``honest``: its own decision (a proven lie challenged, anything else believed or
        played on). Else their ``counting`` decision from their sampled hand, the challenge
        rate scaled to the one they showed (a proven lie always challenged), and nearly
        every final check challenged."""
        v = view_of(state, seat)
        if honest:
            action = HonestPlayer(seat, self.rng).act(v)
            return (1.0, action) if isinstance(action, Challenge) else (0.0, action)
        if v.public.answering:
            return 1.0, Challenge()
        action = RolloutCounting(seat, self.rng).act(v)
        rate = model.challenge_rate(seat)  # 1: as often as counting
        if isinstance(action, Challenge):
            r = v.claims[-1].claim
            claimed = sum(c.count for c in v.claims if c.claim == r and c.seat != seat)
            proven = claimed > COPIES - v.hand[r] - v.own_pile[r]
            p = 1.0 if proven else min(1.0, rate)
            return p, automatic_move(v) if p < 1.0 else action
        return min(0.5, max(0.0, (rate - 1.0) * PRIOR_CHALLENGE[v.public.variant])), action


def _take(pool: list[Rank], claim: Rank, count: int, truthful: bool) -> list[Rank]:
    """Remove and return ``count`` cards from ``pool``: of ``claim`` when ``truthful`` (as many
    as there are), the rest of other ranks (or any, when nothing else is left)."""
    out: list[Rank] = []
    if truthful:
        for _ in range(count):
            if claim in pool:
                pool.remove(claim)
                out.append(claim)
    for i in range(len(pool) - 1, -1, -1):
        if len(out) == count:
            break
        if pool[i] != claim:
            out.append(pool.pop(i))
    while len(out) < count and pool:
        out.append(pool.pop())
    return out
