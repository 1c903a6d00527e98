"""One or more unit tests per rule of RULES.md, for both variants."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from core import (
    CLASSIC,
    FULL_DECK,
    PLAY_CAP,
    RANKS,
    RUSSIAN,
    Believe,
    Believed,
    CardsPlayed,
    Challenge,
    ChallengeResolved,
    CheckStarted,
    GameEnded,
    GameState,
    Hand,
    Phase,
    PilePlay,
    Play,
    PlayerWon,
    Rank,
    RoundStarted,
    apply,
    deal,
    from_deal,
    new_game,
    rank_places,
    view,
)
from core.errors import ClaimNotAllowedError, PlayNotAllowedError

H = Hand.from_str
R = Rank.from_str
VARIANTS = ("russian", "classic")


def P(cards: str, claim: str | None = None) -> Play:
    """Play of compact cards ``"77Q"`` claiming ``claim``."""
    return Play(H(cards).ranks(), None if claim is None else R(claim))


def game(variant: str, *hands: str, **kw) -> GameState:
    s = from_deal(variant, [H(h) for h in hands])
    if kw:
        s = GameState(s.variant, s.hands, kw.get("pile", ()), kw.get("current", 0), kw.get("plays", 0))
    return s


def run(state: GameState, *moves) -> tuple[GameState, list]:
    """Apply ``(seat, action)`` moves in order; returns the final state and all events."""
    events = []
    for seat, action in moves:
        state, ev = apply(state, seat, action)
        events.extend(ev)
    return state, events


# -- Table: the deal ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "n,sizes",
    [(3, [18, 17, 17]), (4, [13] * 4), (5, [11, 11, 10, 10, 10]), (6, [9, 9, 9, 9, 8, 8])],
)
@pytest.mark.parametrize("seed", range(20))
def test_deal_sizes_and_conservation(n, sizes, seed):
    hands = deal(n, random.Random(seed))
    assert [h.size for h in hands] == sizes
    total = Hand()
    for h in hands:
        total = total + h
    assert total == FULL_DECK
    assert all(total[r] == 4 for r in RANKS)


def test_deal_is_one_card_at_a_time_from_seat_0():
    """The deal equals dealing the shuffled deck round-robin from seat 0."""
    rng1, rng2 = random.Random(42), random.Random(42)
    hands = deal(5, rng1)
    deck = list(FULL_DECK.ranks())
    rng2.shuffle(deck)
    expected = [Counter() for _ in range(5)]
    for i, card in enumerate(deck):
        expected[i % 5][card] += 1
    assert [Hand.from_ranks(c.elements()) for c in expected] == list(hands)


def test_deal_is_seeded_and_varies():
    assert deal(4, random.Random(1)) == deal(4, random.Random(1))
    assert deal(4, random.Random(1)) != deal(4, random.Random(2))


@pytest.mark.parametrize("n", [0, 1, 2, 7, 8])
def test_player_count_bounds(n):
    with pytest.raises(ValueError):
        deal(n, random.Random(0))
    with pytest.raises(ValueError):
        new_game(n, "russian", random.Random(0))
    with pytest.raises(ValueError):
        from_deal("russian", [H("A")] * n)


@pytest.mark.parametrize("variant", VARIANTS)
def test_new_game_seat_0_opens(variant):
    s = new_game(4, variant, random.Random(5))
    assert s.current == 0 and s.phase is Phase.OPENING and s.plays == 0 and s.pile == ()
    assert s.variant.name == variant


def test_bad_variant_name():
    from core import UnknownVariant

    with pytest.raises(UnknownVariant):
        new_game(4, "chinese", random.Random(0))


# -- Turns: plays of 1-4 cards, clockwise -------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_play_of_k_cards(variant, k):
    s = game(variant, "AAAA2", "3", "4")
    s2, events = apply(s, 0, P("A" * k, "A"))
    assert s2.hands[0] == H("A" * (4 - k) + "2")
    assert s2.pile_size == k and s2.plays == 1 and s2.current == 1
    assert s2.pile == (PilePlay(0, H("A" * k), Rank.ACE),)
    assert events == [CardsPlayed(0, k, Rank.ACE, 1)]
    assert s2.phase is Phase.PLAYING


@pytest.mark.parametrize("variant", VARIANTS)
def test_play_passes_clockwise_and_wraps(variant):
    s = game(variant, "AA23", "2345", "3456")
    claims = ["A", "A", "A"] if variant == "russian" else ["A", "2", "3"]
    s, _ = run(s, (0, P("A", claims[0])), (1, P("2", claims[1])), (2, P("3", claims[2])))
    assert s.current == 0 and s.plays == 3 and s.pile_size == 3


@pytest.mark.parametrize("variant", VARIANTS)
def test_play_may_lie_count_is_true(variant):
    s = game(variant, "QK", "2", "3")
    s, ev = apply(s, 0, P("QK", "A"))
    assert ev[0].count == 2 and ev[0].claim == Rank.ACE
    assert not s.pile[-1].truthful


def test_truthful_and_bluff_definitions():
    assert PilePlay(0, H("77"), R("7")).truthful
    assert not PilePlay(0, H("77Q"), R("7")).truthful
    assert not PilePlay(0, H("Q"), R("7")).truthful


# -- Claim rules --------------------------------------------------------------------------------


@pytest.mark.parametrize("claim", ["A", "7", "K"])
def test_russian_opener_claims_any_rank_held_or_not(claim):
    s = game("russian", "55", "2", "3")
    assert s.required_claim is None
    s2, _ = apply(s, 0, P("5", claim))
    assert s2.round_claim == R(claim) and s2.required_claim == R(claim)


def test_russian_later_plays_same_rank():
    s = game("russian", "55", "26", "36")
    s, _ = apply(s, 0, P("5", "6"))
    with pytest.raises(ClaimNotAllowedError):
        apply(s, 1, P("2", "2"))
    with pytest.raises(ClaimNotAllowedError):
        apply(s, 1, P("2"))  # a russian play without a claim
    s, _ = apply(s, 1, P("2", "6"))
    s, _ = apply(s, 2, P("3", "6"))
    assert [p.claim for p in s.pile] == [R("6")] * 3


def test_russian_opener_must_claim():
    s = game("russian", "55", "2", "3")
    with pytest.raises(ClaimNotAllowedError):
        apply(s, 0, P("5"))


def test_russian_claim_is_free_again_after_a_challenge():
    s = game("russian", "556", "227", "338")
    s, _ = run(s, (0, P("5", "5")), (1, P("2", "5")), (2, Challenge()))  # bluff: 1 takes 2 cards, 2 opens
    assert s.current == 2 and s.pile == () and s.required_claim is None
    s, _ = apply(s, 2, P("3", "K"))
    assert s.round_claim == Rank.KING


def test_classic_sequence_a_to_k_and_wraps():
    # 3 players with plenty of cards; 14 truthful-or-not plays in a row without challenge.
    s = game("classic", "AAAA22223333", "44445555666", "777788889999")
    seen = []
    for _ in range(14):
        seat = s.current
        card = s.hands[seat].ranks()[0]
        seen.append(s.required_claim)
        s, ev = apply(s, seat, Play((card,), None))  # claim omitted: forced
        assert ev[0].claim == seen[-1]
    assert seen == [*RANKS, Rank.ACE]


def test_classic_claim_must_equal_forced_rank():
    s = game("classic", "AA", "22", "33")
    with pytest.raises(ClaimNotAllowedError):
        apply(s, 0, P("A", "2"))
    s, _ = apply(s, 0, P("A", "A"))  # given and equal: accepted
    assert s.required_claim == Rank.TWO


def test_classic_sequence_continues_across_challenges():
    """RULES.md: if the 5th play of the game (claiming 5) is challenged, the next play claims 6."""
    s = game("classic", "AAA2222", "333344", "5555666")
    s, _ = run(s, (0, P("A")), (1, P("3")), (2, P("5")), (0, P("2")))  # claims A 2 3 4
    assert s.required_claim == Rank.FIVE
    s, _ = apply(s, 1, P("4"))  # 5th play, claims 5 with a 4: bluff
    s, ev = apply(s, 2, Challenge())
    assert ev[0].loser == 1 and s.current == 2 and s.pile == ()
    assert s.required_claim == Rank.SIX  # not A: the sequence goes on
    s, ev = apply(s, 2, P("6"))
    assert ev[0].claim == Rank.SIX and ev[0].plays == 6


def test_classic_sequence_continues_after_truthful_challenge_whoever_opens():
    s = game("classic", "A2", "2K", "3Q")
    s, _ = run(s, (0, P("A")), (1, Challenge()))  # truthful: 1 takes, 0 opens
    assert s.current == 0 and s.required_claim == Rank.TWO
    s, ev = apply(s, 0, P("2"))
    assert ev[0].claim == Rank.TWO


# -- Challenge (showdown) -----------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_challenge_reveals_only_the_last_play(variant):
    claims = ("7", "7", "7") if variant == "russian" else ("A", "2", "3")
    s = game(variant, "QQ7", "KK2", "A3")
    s, _ = run(s, (0, P("QQ", claims[0])), (1, P("KK", claims[1])))
    s, ev = apply(s, 2, Challenge())
    (res, started) = ev
    assert isinstance(res, ChallengeResolved)
    assert res.revealed == (Rank.KING, Rank.KING)  # not the queens under it
    assert res.challenger == 2 and res.player == 1 and res.claim == R(claims[1])
    assert not res.truthful and res.loser == 1 and res.pile_taken == 4
    assert started == RoundStarted(2)


@pytest.mark.parametrize("variant", VARIANTS)
def test_challenge_truthful_challenger_takes_pile_player_opens(variant):
    claims = ("A", "A") if variant == "russian" else ("A", "2")
    s = game(variant, "AAK", "2Q", "33")
    s, _ = run(s, (0, P("K", claims[0])), (1, P("2", claims[1])))
    s, ev = apply(s, 2, Challenge())
    truthful = variant == "classic"  # seat 1 played a 2: true in classic (claim 2), a bluff in russian (claim A)
    assert ev[0].truthful is truthful
    loser = 2 if truthful else 1
    opener = 1 if truthful else 2
    assert ev[0].loser == loser and s.current == opener
    assert s.hands[loser].size == {2: 2, 1: 1}[loser] + 2
    assert s.pile == () and s.phase is Phase.OPENING and s.result is None


@pytest.mark.parametrize("variant", VARIANTS)
def test_bluff_challenged_player_takes_whole_pile(variant):
    claims = ("A", "A") if variant == "russian" else ("A", "2")
    s = game(variant, "AAA5", "KKQ", "33")
    s, _ = run(s, (0, P("AAA", claims[0])), (1, P("KK", claims[1])))
    before = s.hands[1]
    s, _ = apply(s, 2, Challenge())
    assert s.hands[1] == before + H("AAAKK")  # the whole pile, not just the challenged play
    assert s.current == 2 and s.pile == () and s.hand_sizes == (1, 6, 2)


def test_implicit_belief_cannot_be_challenged_again():
    s = game("russian", "AQ", "K2", "33")
    s, _ = run(s, (0, P("Q", "A")), (1, P("K", "A")))
    s, ev = apply(s, 2, Challenge())
    # the challenge concerns seat 1's play, never seat 0's earlier bluff
    assert ev[0].player == 1 and ev[0].revealed == (Rank.KING,)


def test_challenge_not_allowed_on_empty_pile():
    from core.errors import ChallengeNotAllowedError

    s = game("russian", "A", "2", "3")
    with pytest.raises(ChallengeNotAllowedError):
        apply(s, 0, Challenge())


# -- Going out: the final check -----------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_last_cards_start_a_final_check(variant):
    s = game(variant, "A", "22", "33")
    s, ev = apply(s, 0, P("A", "A"))
    assert ev[-1] == CheckStarted(1, 0, "final_check", True)
    assert s.phase is Phase.FINAL_CHECK and s.result is None and s.current == 1
    v = view(s, 1)
    assert v.can_believe and v.can_challenge and not v.can_play
    with pytest.raises(PlayNotAllowedError):
        apply(s, 1, P("2", "A" if variant == "russian" else "2"))


@pytest.mark.parametrize("variant", VARIANTS)
def test_final_check_challenge_truthful_player_wins_challenger_takes_pile(variant):
    s = game(variant, "AA", "22", "33", "44")
    s, _ = apply(s, 0, P("AA", "A"))
    s, ev = apply(s, 1, Challenge())
    assert ev[0] == ChallengeResolved(1, 0, Rank.ACE, (Rank.ACE, Rank.ACE), True, 1, 2)
    assert PlayerWon(0) in ev
    assert s.result is not None and s.result.winner == 0 and not s.result.draw and not s.result.capped
    assert s.hand_sizes == (0, 4, 2, 2) and s.pile == ()
    assert s.result.places == (1, 4, 2, 2)
    assert s.current is None and s.phase is Phase.OVER


@pytest.mark.parametrize("variant", VARIANTS)
def test_final_check_challenge_bluff_player_takes_pile_challenger_opens(variant):
    s = game(variant, "KK", "22", "33")
    s, _ = apply(s, 0, P("KK", "A"))
    s, ev = apply(s, 1, Challenge())
    assert ev == [ChallengeResolved(1, 0, Rank.ACE, (Rank.KING, Rank.KING), False, 0, 2), RoundStarted(1)]
    assert s.result is None and s.current == 1 and s.hands[0] == H("KK") and s.pile == ()
    assert s.phase is Phase.OPENING


@pytest.mark.parametrize("variant", VARIANTS)
def test_final_check_believe_truthful_simple(variant):
    s = game(variant, "AA", "22", "33")
    s, _ = apply(s, 0, P("AA", "A"))
    s, ev = apply(s, 1, Believe())
    assert ev == [
        Believed(1, 0, Rank.ACE, (Rank.ACE, Rank.ACE), True, None, 0),
        PlayerWon(0),
        GameEnded((1, 2, 2), 0, False, False),
    ]
    assert s.pile_size == 2 and s.hand_sizes == (0, 2, 2)  # the pile stays where it is


@pytest.mark.parametrize("variant", VARIANTS)
def test_final_check_believe_bluff_believer_takes_pile(variant):
    s = game(variant, "KK", "22", "3")
    s, _ = apply(s, 0, P("KK", "A"))
    s, ev = apply(s, 1, Believe())
    assert ev == [
        Believed(1, 0, Rank.ACE, (Rank.KING, Rank.KING), False, 1, 2),
        PlayerWon(0),
        GameEnded((1, 3, 2), 0, False, False),
    ]
    assert s.hand_sizes == (0, 4, 1) and s.pile == () and s.result.winner == 0


def test_believe_not_allowed_outside_checks():
    from core.errors import BelieveNotAllowedError

    s = game("russian", "AA", "22", "33")
    with pytest.raises(BelieveNotAllowedError):
        apply(s, 0, Believe())
    s, _ = apply(s, 0, P("A", "A"))
    with pytest.raises(BelieveNotAllowedError):
        apply(s, 1, Believe())


def test_game_ends_as_soon_as_one_wins():
    from core.errors import GameOverError

    s = game("russian", "A", "22", "33")
    s, _ = run(s, (0, P("A", "A")), (1, Believe()))
    for seat in range(3):
        for action in (P("2", "2"), Challenge(), Believe()):
            with pytest.raises(GameOverError):
                apply(s, seat, action)


def test_final_check_in_a_later_round_after_several_plays():
    """The checked player is the previous one; the pile may hold other players' cards."""
    s = game("russian", "7Q", "775", "K")
    s, _ = run(s, (0, P("7", "7")), (1, P("77", "7")), (2, P("K", "7")))  # seat 2 out of cards
    assert s.phase is Phase.FINAL_CHECK and s.current == 0
    s, ev = apply(s, 0, Challenge())
    assert ev[0].revealed == (Rank.KING,) and ev[0].loser == 2 and ev[0].pile_taken == 4
    assert s.hands[2] == H("777K") and s.current == 0 and s.result is None
    assert s.hand_sizes == (1, 1, 4)


# -- Play cap -----------------------------------------------------------------------------------


def capped(variant: str, hands: list[str], last: tuple[int, str, str], current: int, plays: int = PLAY_CAP):
    """A state right after the ``plays``-th play ``last = (seat, cards, claim)``."""
    seat, cards, claim = last
    return GameState(
        (RUSSIAN if variant == "russian" else CLASSIC),
        tuple(H(h) for h in hands),
        (PilePlay(seat, H(cards), R(claim)),),
        current,
        plays,
    )


@pytest.mark.parametrize("variant", VARIANTS)
def test_300th_play_starts_cap_check(variant):
    claim = str(RANKS[(PLAY_CAP - 1) % 13])  # classic: the 300th play claims A
    s = GameState(
        RUSSIAN if variant == "russian" else CLASSIC,
        (H("AA5"), H("22"), H("33")),
        (),
        0,
        PLAY_CAP - 1,
    )
    assert s.required_claim == (None if variant == "russian" else Rank.ACE)
    s, ev = apply(s, 0, P("A", claim))
    assert s.plays == PLAY_CAP
    assert ev[-1] == CheckStarted(1, 0, "cap", False)
    assert s.phase is Phase.CAP_CHECK and view(s, 1).can_believe and not view(s, 1).can_play
    with pytest.raises(PlayNotAllowedError):
        apply(s, 1, P("2", claim))


def test_299th_play_does_not_start_cap_check():
    s = GameState(RUSSIAN, (H("AA5"), H("22"), H("33")), (), 0, PLAY_CAP - 2)
    s, ev = apply(s, 0, P("A", "A"))
    assert s.phase is Phase.PLAYING and not any(isinstance(e, CheckStarted) for e in ev)


@pytest.mark.parametrize("variant", VARIANTS)
def test_cap_challenge_bluff_ends_game_fewest_cards_wins(variant):
    s = capped(variant, ["AA", "2222", "333"], (0, "K", "A"), 1)
    s, ev = apply(s, 1, Challenge())
    assert ev[0].loser == 0 and ev[0].pile_taken == 1
    assert s.hand_sizes == (3, 4, 3)
    # 0 and 2 share the fewest: a draw
    assert s.result.winner is None and s.result.draw and s.result.capped
    assert s.result.places == (1, 3, 1)
    assert ev[-1] == GameEnded((1, 3, 1), None, True, True)
    assert not any(isinstance(e, RoundStarted) for e in ev)


@pytest.mark.parametrize("variant", VARIANTS)
def test_cap_challenge_truthful_challenger_takes_game_ends(variant):
    s = capped(variant, ["AA", "2222", "333"], (0, "A", "A"), 1)
    s, _ = apply(s, 1, Challenge())
    assert s.hand_sizes == (2, 5, 3) and s.pile == ()
    assert s.result == type(s.result)((1, 3, 2), 0, False, True)


@pytest.mark.parametrize("variant", VARIANTS)
def test_cap_believe_bluff_believer_takes_pile(variant):
    s = capped(variant, ["AA", "2", "333"], (0, "KK", "A"), 1)
    s, ev = apply(s, 1, Believe())
    assert ev[0] == Believed(1, 0, Rank.ACE, (Rank.KING, Rank.KING), False, 1, 2)
    assert s.hand_sizes == (2, 3, 3)
    assert s.result.winner == 0 and s.result.places == (1, 2, 2) and s.result.capped and not s.result.draw
    assert not any(isinstance(e, PlayerWon) for e in ev)  # winner by cards, nobody went out


@pytest.mark.parametrize("variant", VARIANTS)
def test_cap_believe_truthful_pile_stays_game_ends(variant):
    s = capped(variant, ["AA", "2", "333"], (0, "AA", "A"), 1)
    s, _ = apply(s, 1, Believe())
    assert s.pile_size == 2 and s.hand_sizes == (2, 1, 3)
    assert s.result.winner == 1 and s.result.places == (2, 1, 3) and s.result.capped


@pytest.mark.parametrize("variant", VARIANTS)
def test_cap_last_cards_challenged_truthful_player_wins(variant):
    s = capped(variant, ["", "2", "333"], (0, "AA", "A"), 1)
    s, ev = apply(s, 1, Challenge())
    assert PlayerWon(0) in ev
    assert s.hand_sizes == (0, 3, 3) and s.result.winner == 0 and s.result.places == (1, 2, 2)
    assert s.result.capped and not s.result.draw


@pytest.mark.parametrize("variant", VARIANTS)
def test_cap_last_cards_believed_player_wins_even_if_bluff(variant):
    s = capped(variant, ["", "2", "333"], (0, "KK", "A"), 1)
    s, ev = apply(s, 1, Believe())
    assert PlayerWon(0) in ev
    assert s.hand_sizes == (0, 3, 3) and s.result.winner == 0 and s.result.places == (1, 2, 2)


@pytest.mark.parametrize("variant", VARIANTS)
def test_cap_last_cards_bluff_challenged_game_ends_anyway(variant):
    """Where a final check's bluff would let the game go on, the cap ends it."""
    s = capped(variant, ["", "22", "3"], (0, "KK", "A"), 1)
    s, ev = apply(s, 1, Challenge())
    assert s.hand_sizes == (2, 2, 1)
    assert s.result is not None and s.result.winner == 2 and s.result.places == (2, 2, 1)
    assert s.current is None and not any(isinstance(e, PlayerWon) for e in ev)


def test_cap_draw_shared_first_place_and_skip():
    s = capped("russian", ["AA", "22", "3", "4"], (0, "K", "K"), 1)
    s, _ = apply(s, 1, Believe())  # truthful, pile stays
    assert s.hand_sizes == (2, 2, 1, 1)
    assert s.result.draw and s.result.winner is None and s.result.places == (3, 3, 1, 1)


# -- Ranking ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sizes,winner,places",
    [
        ([0, 3, 5, 5], 0, (1, 2, 3, 3)),
        ([0, 3, 3, 7], 0, (1, 2, 2, 4)),
        ([4, 0, 4, 4, 1], 1, (3, 1, 3, 3, 2)),
        ([5, 0, 2, 2, 9, 2], 1, (5, 1, 2, 2, 6, 2)),
        ([1, 2, 2, 4], None, (1, 2, 2, 4)),
        ([3, 3, 5], None, (1, 1, 3)),
        ([6, 6, 6, 6], None, (1, 1, 1, 1)),
        ([2, 0, 0], 1, (3, 1, 2)),  # a player on 0 cards who did not go out ranks by cards
    ],
)
def test_rank_places_competition_ranking(sizes, winner, places):
    assert rank_places(sizes, winner) == places


def test_final_ranking_after_pickup_shared_places():
    s = game("russian", "A", "22", "333", "44")
    # sizes after seat 0 wins by belief: (0, 2, 3, 2) -> 1, 2, 4, 2
    s, _ = run(s, (0, P("A", "A")), (1, Believe()))
    assert s.result.places == (1, 2, 4, 2)


# -- Invariants: actions are pure ---------------------------------------------------------------


def test_apply_never_modifies_its_input():
    s0 = game("russian", "AK", "22", "33")
    snapshot = s0.to_json()
    s1, _ = apply(s0, 0, P("K", "A"))
    assert s0.to_json() == snapshot
    snap1 = s1.to_json()
    apply(s1, 1, Challenge())
    apply(s1, 1, P("2", "A"))
    assert s1.to_json() == snap1
