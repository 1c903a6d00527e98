"""The ``search`` player: determinised sampling with an opponent model fitted to this game.

A decision, from the view and the game's public events only:

1. :class:`OpponentModel` reads the events: per opponent, how often they challenged when they
   could, and how many of their plays shown at a showdown were bluffs (caught), each as a ratio
   to what ``counting`` players do, smoothed by a prior.
2. The candidates are ``counting``'s costed choices (challenge, truthful plays, bluffs, padded
   plays; as a russian opener also the truthful plays of its three most-held ranks).
3. :data:`SAMPLES` determinisations deal the cards we cannot see to the opponents' hands and
   pile plays; the play we may challenge is true with ``counting``'s probability, its odds
   scaled by how truthful its player's shown plays were.
4. Each candidate is played in every determinisation; the next player answers as ``counting``
   does from their sampled hand, their challenge rate scaled to the one they showed (a proven
   lie is always challenged); if they play on, the round is played on by ``counting`` for
   every seat, each from its own view of the sampled state, to its showdown (at most
   :data:`ROLLOUT_STEPS` actions).
5. The positions reached are scored by a win model over hand sizes (:func:`win_chance`) and
   the candidate of best mean score is played.

The work is fixed (samples x candidates x rollout steps), never a time budget. The only
randomness is the injected stream, so a decision replays exactly.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from .actions import Action, Challenge, Play
from .auto import automatic_move
from .cards import COPIES, FULL_DECK, RANKS, Hand, Rank
from .counting import CountingPlayer, TunedPlayer
from .events import Believed, CardsPlayed, ChallengeResolved, Event, RoundStarted
from .rules import MAX_PLAY_CARDS, variant as lookup_variant
from .state import GameState, Phase, PilePlay, apply
from .views import PlayerView, view as view_of

__all__ = ["OpponentModel", "SearchPlayer", "quick_action", "win_chance"]

#: Determinisations per decision.
SAMPLES = 10
#: Actions played on after the next player's answer, up to the showdown, per variant.
ROLLOUT_STEPS = {"russian": 8, "classic": 8}
#: Roll out with ``counting`` itself (from each seat's view) rather than :func:`quick_action`:
#: on tuning seed 90500, 400 games against three counting, russian 72% against 39.5%, classic
#: 46% against 35% (no cheap rollout there: it misjudged the forced claims).
FULL_ROLLOUT = True
#: Steepness of the win model: each card in hand divides the odds of winning by exp(this).
WIN_STEEPNESS = 0.2
#: The player to act next counts this many cards fewer in the win model.
TURN_BONUS = 0.5
#: What ``counting`` players do, per variant, as the model's prior: how often they challenge
#: when they may, how often a play shown at a showdown is true (measured in self-play).
PRIOR_CHALLENGE = {"russian": 0.41, "classic": 0.26}
PRIOR_TRUTHFUL = {"russian": 0.30, "classic": 0.12}
#: The prior's weight, in observations.
PRIOR_WEIGHT = 10.0
#: The non-proven challenge rate of a rollout player that challenges as often as ``counting``.
QUICK_CHALLENGE = 0.2
#: The chance that an earlier play of the round (not the one to challenge) was true.
TRUTHFUL_PLAY = 0.6
#: Play the base player's own choice unless another candidate's mean win chance beats it by
#: more than this.
MARGIN = 0.0


@dataclass
class _Seen:
    """What one opponent did so far: chances to challenge, challenges, plays shown, bluffs
    among them."""

    chances: int = 0
    challenges: int = 0
    shown: int = 0
    bluffs: int = 0


@dataclass
class OpponentModel:
    """Each seat's observed challenge rate and bluff rate (of plays shown at a showdown),
    smoothed toward ``counting``'s by a prior."""

    variant: str = "russian"
    seen: list[_Seen] = field(default_factory=list)

    @classmethod
    def from_history(cls, variant: str, players: int, history: Sequence[Event]) -> OpponentModel:
        """The model after ``history`` (the game's public events, oldest first)."""
        seen = [_Seen() for _ in range(players)]
        pile = 0
        for e in history:
            if isinstance(e, CardsPlayed):
                if pile:
                    seen[e.seat].chances += 1
                pile += 1
            elif isinstance(e, ChallengeResolved):
                seen[e.challenger].chances += 1
                seen[e.challenger].challenges += 1
                seen[e.player].shown += 1
                seen[e.player].bluffs += not e.truthful
                pile = 0
            elif isinstance(e, Believed):
                seen[e.player].shown += 1
                seen[e.player].bluffs += not e.truthful
            elif isinstance(e, RoundStarted):
                pile = 0
        return cls(variant, seen)

    def challenge_rate(self, seat: int) -> float:
        """How often ``seat`` challenges when they may, over ``counting``'s (1: as often)."""
        s, prior = self.seen[seat], PRIOR_CHALLENGE[self.variant]
        return (s.challenges + prior * PRIOR_WEIGHT) / (s.chances + PRIOR_WEIGHT) / prior

    def truth_odds(self, seat: int) -> float:
        """The odds that a play of ``seat`` shown at a showdown was true, over ``counting``'s
        (square-rooted: the showdowns others chose are a biased sample)."""
        s, prior = self.seen[seat], PRIOR_TRUTHFUL[self.variant]
        rate = (s.shown - s.bluffs + prior * PRIOR_WEIGHT) / (s.shown + PRIOR_WEIGHT)
        return math.sqrt(_odds(rate) / _odds(prior))


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


def _odds(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return p / (1 - p)


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
        candidates = self._candidates(view, options)
        if len(candidates) == 1:
            return candidates[0]
        model = OpponentModel.from_history(view.public.variant, view.players, history)
        scores = [0.0] * len(candidates)
        for _ in range(SAMPLES):
            state = self._determinise(view, model)
            answers: dict[tuple[int, Rank | None], tuple[float, Action]] = {}
            for i, action in enumerate(candidates):
                scores[i] += self._score(state, action, model, answers)
        best = max(range(len(candidates)), key=lambda i: (scores[i], -i))
        if scores[best] - scores[0] <= MARGIN * SAMPLES:
            best = 0
        return candidates[best]

    # -- candidates ------------------------------------------------------------------------------

    def _candidates(self, view: PlayerView, options: list[tuple[float, Action]]) -> list[Action]:
        """``counting``'s choices, cheapest first, without repeats; a russian opener adds the
        truthful play of its second-best rank."""
        ranked = [a for _, a in sorted(options, key=lambda o: o[0])]
        if view.required_claim is None:
            held = sorted((r for r in RANKS if view.hand[r]), key=lambda r: -view.hand[r])
            for r in held[:3]:
                ranked.append(Play((r,) * min(MAX_PLAY_CARDS, view.hand[r]), r))
        return list(dict.fromkeys(ranked))

    # -- determinisation -------------------------------------------------------------------------

    def _determinise(self, view: PlayerView, model: OpponentModel) -> GameState:
        """A full state consistent with ``view``: the unseen cards dealt to the opponents'
        hands and pile plays, each opponent play truthful with the model's odds."""
        rng = self.rng
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
                cards = _take(pool, claim.claim, claim.count, rng.random() < p)
            pile.append(PilePlay(claim.seat, Hand.from_ranks(cards), claim.claim))
        hands: list[Hand] = []
        for seat, size in enumerate(view.hand_sizes):
            if seat == self.seat:
                hands.append(view.hand)
            else:
                hands.append(Hand.from_ranks(pool[:size]))
                del pool[:size]
        return GameState(lookup_variant(view.public.variant), tuple(hands), tuple(pile), self.seat, view.plays)

    def _last_truth(self, view: PlayerView, model: OpponentModel) -> float:
        """The chance that the last claim is true: ``counting``'s estimate, its odds scaled by
        how the claimant's bluffing differs from the prior."""
        if not view.claims or view.claims[-1].seat == self.seat:
            return 1.0
        t = self._counting.truth_probability(view)
        if t in (0.0, 1.0):
            return t
        scaled = _odds(t) * model.truth_odds(view.claims[-1].seat)
        return scaled / (1 + scaled)

    # -- scoring ---------------------------------------------------------------------------------

    def _score(
        self,
        state: GameState,
        action: Action,
        model: OpponentModel,
        answers: dict[tuple[int, Rank | None], tuple[float, Action]],
    ) -> float:
        """Our win chance after ``action`` in ``state`` and the next player's answer."""
        after, _ = apply(state, self.seat, action)
        nxt = after.current
        if nxt is None or isinstance(action, Challenge):
            return win_chance(after, self.seat)
        key = (len(action.cards), action.claim) if isinstance(action, Play) else (0, None)
        if key not in answers:
            answers[key] = self._answer(after, nxt, model)
        p_challenge, play_on = answers[key]
        value = p_challenge * win_chance(apply(after, nxt, Challenge())[0], self.seat)
        if p_challenge < 1.0:
            value += (1 - p_challenge) * self._rollout(apply(after, nxt, play_on)[0], model)
        return value

    def _rollout(self, state: GameState, model: OpponentModel) -> float:
        """Our win chance after playing on to the showdown (at most :data:`ROLLOUT_STEPS`
        actions) with ``counting`` (:data:`FULL_ROLLOUT`) or :func:`quick_action`."""
        for _ in range(ROLLOUT_STEPS[state.variant.name]):
            seat = state.current
            if seat is None:
                break
            if FULL_ROLLOUT:
                action = CountingPlayer(seat, self.rng).act(view_of(state, seat))
            else:
                rate = 1.0 if seat == self.seat else model.challenge_rate(seat)
                action = quick_action(state, seat, rate * QUICK_CHALLENGE, self.rng)
            state, _ = apply(state, seat, action)
            if not state.pile or state.result is not None:
                break
        return win_chance(state, self.seat)

    def _answer(self, state: GameState, seat: int, model: OpponentModel) -> tuple[float, Action]:
        """How likely ``seat`` challenges the last play, and what they play otherwise: their
        ``counting`` decision from their sampled hand, the challenge rate scaled to the one
        they showed (a proven lie always challenged)."""
        v = view_of(state, seat)
        if v.public.answering:
            return 1.0, Challenge()  # a final check: nearly everyone challenges
        opponent = CountingPlayer(seat, self.rng)
        action = opponent.act(v)
        rate = model.challenge_rate(seat)  # 1: as often as counting
        if isinstance(action, Challenge):
            r = v.claims[-1].claim
            claimed = sum(c.count for c in v.claims if c.claim == r and c.seat != seat)
            proven = claimed > COPIES - v.hand[r] - v.own_pile[r]
            p = 1.0 if proven else min(1.0, rate)
            return p, automatic_move(v) if p < 1.0 else action
        return min(0.5, max(0.0, (rate - 1.0) * PRIOR_CHALLENGE[v.public.variant])), action


def quick_action(state: GameState, seat: int, challenge: float, rng: random.Random) -> Action:
    """A cheap ``counting``-like move for rollouts, from the full state: challenge a proven lie
    (and any final check), else challenge with chance ``challenge``; play every card of the
    claimed rank held (a russian opener: of the rank held most), else bluff one card of the
    rank held fewest."""
    hand = state.hands[seat]
    if state.pile:
        last = state.pile[-1]
        if state.phase is not Phase.PLAYING:
            return Challenge()
        r = last.claim
        claimed = sum(p.cards.size for p in state.pile if p.claim == r and p.seat != seat)
        own = hand[r] + sum(p.cards[r] for p in state.pile if p.seat == seat)
        if claimed > COPIES - own or rng.random() < challenge:
            return Challenge()
    claim = state.required_claim
    counts = hand.counts
    if claim is None:
        claim = RANKS[counts.index(max(counts))]
    if hand[claim]:
        return Play((claim,) * min(MAX_PLAY_CARDS, hand[claim]), claim)
    fewest = min((c, i) for i, c in enumerate(counts) if c)[1]
    return Play((RANKS[fewest],), claim)


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
