"""Every error code of GAME_RECORD.md, with the state left unchanged, and the error precedence."""

from __future__ import annotations

import pytest

from core import (
    ERROR_CODES,
    PLAY_CAP,
    RUSSIAN,
    Believe,
    Challenge,
    GameState,
    Hand,
    IllegalActionError,
    PilePlay,
    Play,
    Rank,
    apply,
    error_for_code,
    from_deal,
)

H = Hand.from_str
R = Rank.from_str


def P(cards: str, claim: str | None = None) -> Play:
    return Play(H(cards).ranks(), None if claim is None else R(claim))


def start(variant="russian"):
    return from_deal(variant, [H("AA77K"), H("2QQ"), H("3J")])


def after_open(variant="russian"):
    s, _ = apply(start(variant), 0, P("77", "7" if variant == "russian" else "A"))
    return s


def final_check(variant="russian"):
    s = from_deal(variant, [H("KK"), H("2QQ"), H("3J")])
    s, _ = apply(s, 0, P("KK", "A"))
    return s


def cap_check():
    return GameState(RUSSIAN, (H("AA"), H("2QQ"), H("3J")), (PilePlay(0, H("K"), R("A")),), 1, PLAY_CAP)


def over():
    s, _ = apply(final_check(), 1, Believe())
    assert s.result is not None
    return s


def expect(code: str, state: GameState, seat: int, action) -> None:
    before = state.to_json()
    with pytest.raises(IllegalActionError) as info:
        apply(state, seat, action)
    assert info.value.code == code, str(info.value)
    assert isinstance(info.value, error_for_code(code))
    assert info.value.args and info.value.args[0]  # a developer message
    assert state.to_json() == before  # unchanged


def test_codes_are_the_documented_ones_in_order():
    assert ERROR_CODES == (
        "game_over",
        "not_your_turn",
        "play_not_allowed",
        "believe_not_allowed",
        "challenge_not_allowed",
        "bad_card_count",
        "cards_not_in_hand",
        "claim_not_allowed",
    )


@pytest.mark.parametrize("variant", ["russian", "classic"])
def test_each_error_code(variant):
    fc = final_check(variant)
    expect("game_over", over(), 2, Challenge())
    expect("game_over", over(), 0, P("A", "A"))
    expect("not_your_turn", start(variant), 1, P("2", "2"))
    expect("not_your_turn", start(variant), 7, P("A", "A"))
    expect("not_your_turn", after_open(variant), 0, Challenge())
    expect("not_your_turn", after_open(variant), 2, Challenge())
    expect("play_not_allowed", fc, 1, P("2", "A"))
    expect("play_not_allowed", cap_check(), 1, P("2", "A"))
    expect("believe_not_allowed", start(variant), 0, Believe())
    expect("believe_not_allowed", after_open(variant), 1, Believe())
    expect("challenge_not_allowed", start(variant), 0, Challenge())
    claim = "A"
    expect("bad_card_count", start(variant), 0, Play((), R(claim)))
    expect("bad_card_count", start(variant), 0, P("AA77K", claim))
    expect("cards_not_in_hand", start(variant), 0, P("2", claim))
    expect("cards_not_in_hand", start(variant), 0, P("AAA", claim))
    expect("claim_not_allowed", after_open(variant), 1, P("2", "K"))
    if variant == "classic":
        expect("claim_not_allowed", start(variant), 0, P("A", "K"))
    else:
        expect("claim_not_allowed", start(variant), 0, P("A"))
        expect("claim_not_allowed", after_open(variant), 1, P("2"))


def test_precedence():
    fc = final_check()
    # game_over before everything, even the wrong seat with a bad play
    expect("game_over", over(), 0, Play((R("2"),) * 5, R("5")))
    expect("game_over", over(), 1, Believe())
    # not_your_turn before the phase rules
    expect("not_your_turn", fc, 2, P("3", "A"))
    expect("not_your_turn", fc, 0, Believe())
    expect("not_your_turn", start(), 1, Challenge())
    # GAME_RECORD.md: 5 cards with a wrong claim during a final check: play_not_allowed
    expect("play_not_allowed", fc, 1, Play((R("Q"),) * 5, R("9")))
    expect("play_not_allowed", fc, 1, Play((), None))
    # bad_card_count before cards_not_in_hand and claim: 5 cards one of which is not held
    expect("bad_card_count", start(), 0, P("AA77J", "A"))
    expect("bad_card_count", after_open(), 1, Play((R("9"),) * 6, R("2")))
    # cards_not_in_hand before claim_not_allowed
    expect("cards_not_in_hand", after_open(), 1, P("9", "2"))
    expect("cards_not_in_hand", start("classic"), 0, P("9", "K"))
    expect("cards_not_in_hand", start(), 0, P("9"))


def test_illegal_actions_do_not_affect_the_next_legal_one():
    s = start()
    for seat, action in [(1, P("2", "2")), (0, Challenge()), (0, Believe()), (0, P("9", "9"))]:
        with pytest.raises(IllegalActionError):
            apply(s, seat, action)
    s2, _ = apply(s, 0, P("K", "A"))
    assert s2.plays == 1 and s2.current == 1


def test_unknown_action_type_is_a_type_error():
    with pytest.raises(TypeError):
        apply(start(), 0, "play")  # type: ignore[arg-type]
