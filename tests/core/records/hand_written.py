"""The hand-written records of this directory, with their expected outputs worked out by hand.

Each ``rec(name, document, expected)`` below is one record; the comment above it gives the
reasoning behind the expected output. ``python tests/core/records/hand_written.py`` rewrites
``NAME.json`` and ``NAME.expected.json`` for all of them (the ``cap_*`` games come from
``make_long_records.py``). The expected outputs are literals here, never computed by the engine.
"""

import json
import os

OUT = os.path.dirname(os.path.abspath(__file__))


def fmt(doc):
    """Readable JSON: one action per line."""
    if not isinstance(doc, dict) or not isinstance(doc.get("actions"), list) or "hands" not in doc:
        return json.dumps(doc, ensure_ascii=False) + "\n"
    parts = []
    for k, v in doc.items():
        if k == "actions":
            inner = ",\n    ".join(json.dumps(a, ensure_ascii=False) for a in v)
            parts.append(f'  "actions": [\n    {inner}\n  ]' if v else '  "actions": []')
        elif k == "hands" and isinstance(v, list):
            inner = ",\n    ".join(json.dumps(h, ensure_ascii=False) for h in v)
            parts.append(f'  "hands": [\n    {inner}\n  ]')
        else:
            parts.append(f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def ok(status, winner, draw, places, sizes, pile, plays, current):
    return {
        "exit": 0,
        "output": {
            "status": status,
            "winner": winner,
            "draw": draw,
            "places": places,
            "hand_sizes": sizes,
            "pile": pile,
            "plays": plays,
            "current": current,
        },
    }


def running(sizes, pile, plays, current):
    return ok("running", None, False, None, sizes, pile, plays, current)


def err(code, index):
    return {"exit": 1, "output": {"error": code, "action": index}}


BAD = {"exit": 2, "output": {"error": "invalid_record"}}

R = {}


def rec(name, doc, expected, raw=None):
    R[name] = (doc, expected, raw)


def base(variant, hands, actions, **extra):
    d = {"format": "cheat-record/1", "variant": variant, "hands": hands, "actions": actions}
    d.update(extra)
    return d


def play(s, cards, claim=None):
    a = {"seat": s, "play": cards}
    if claim is not None:
        a["claim"] = claim
    return a


def ch(s):
    return {"seat": s, "challenge": True}


def bel(s):
    return {"seat": s, "believe": True}


# ---------------------------------------------------------------- rules (exit 0)
EX_HANDS = [["A", "7", "7", "K"], ["2", "10", "Q"], ["J"]]
EX_ACTIONS = [play(0, ["7", "7"], "7"), play(1, ["Q"], "7"), ch(2), play(2, ["J"], "5"), bel(0)]
# seat 1 bluffs, takes 3; seat 2 opens with its last card (bluff), seat 0 believes and takes 1.
rec("spec_example", base("russian", EX_HANDS, EX_ACTIONS), ok("finished", 2, False, [2, 3, 1], [3, 5, 0], 0, 3, None))
rec(
    "optional_keys_ignored",
    base(
        "russian",
        EX_HANDS,
        EX_ACTIONS,
        players=["Аня", "Боря", "Вика"],
        seed=123,
        started_at="2024-05-01T12:00:00Z",
        meta={"note": "ignored", "bot": {"v": 1}},
    ),
    ok("finished", 2, False, [2, 3, 1], [3, 5, 0], 0, 3, None),
)

D4 = [
    ["A", "A", "A", "A", "2", "2", "2", "2", "3", "3", "3", "3", "4"],
    ["4", "4", "4", "5", "5", "5", "5", "6", "6", "6", "6", "7", "7"],
    ["7", "7", "8", "8", "8", "8", "9", "9", "9", "9", "10", "10", "10"],
    ["10", "J", "J", "J", "J", "Q", "Q", "Q", "Q", "K", "K", "K", "K"],
]
# 0 plays AA (true), 1 plays 4 5 claiming A, 2 plays 8 claiming A, 3 challenges the 8:
# bluff, seat 2 takes all 5 cards (13-1+5 = 17), seat 3 opens.
rec(
    "deal4_full_challenge_running",
    base("russian", D4, [play(0, ["A", "A"], "A"), play(1, ["4", "5"], "A"), play(2, ["8"], "A"), ch(3)]),
    running([11, 11, 17, 13], 0, 3, 3),
)
rec("deal4_no_actions", base("classic", D4, []), running([13, 13, 13, 13], 0, 0, 0))

D5 = [
    ["A", "A", "A", "A", "2", "2", "2", "2", "3", "3", "3"],
    ["3", "4", "4", "4", "4", "5", "5", "5", "5", "6", "6"],
    ["6", "6", "7", "7", "7", "7", "8", "8", "8", "8"],
    ["9", "9", "9", "9", "10", "10", "10", "10", "J", "J"],
    ["J", "J", "Q", "Q", "Q", "Q", "K", "K", "K", "K"],
]
# 0: 222 (claim 2); 1: 6 (claim 2); 2 challenges: bluff, 1 takes 4 (11-1+4=14), 2 opens 7777;
# 3: 9 claim 7; 4: QQ claim 7; 0 challenges QQ: bluff, 4 takes 4+1+2=7 (10-2+7=15), 0 opens.
rec(
    "deal5_two_rounds_running",
    base(
        "russian",
        D5,
        [
            play(0, ["2", "2", "2"], "2"),
            play(1, ["6"], "2"),
            ch(2),
            play(2, ["7", "7", "7", "7"], "7"),
            play(3, ["9"], "7"),
            play(4, ["Q", "Q"], "7"),
            ch(0),
        ],
    ),
    running([8, 14, 6, 9, 15], 0, 5, 0),
)

D6 = [
    ["A", "A", "A", "A", "2", "2", "2", "2", "3"],
    ["3", "3", "3", "4", "4", "4", "4", "5", "5"],
    ["5", "5", "6", "6", "6", "6", "7", "7", "7"],
    ["7", "8", "8", "8", "8", "9", "9", "9", "9"],
    ["10", "10", "10", "10", "J", "J", "J", "J"],
    ["Q", "Q", "Q", "Q", "K", "K", "K", "K"],
]
# classic, claims omitted (forced A,2,3,4,5); 5 challenges seat 4's 10 claimed as 5: bluff,
# seat 4 takes 2+1+2+1+1 = 7 (8-1+7 = 14); seat 5 opens the 6th play, which claims 6 (given
# explicitly, equal to the forced rank); seat 0 plays the 7th (claim 7, omitted).
rec(
    "deal6_classic_forced_claims",
    base(
        "classic",
        D6,
        [
            play(0, ["A", "A"]),
            play(1, ["3"]),
            play(2, ["5", "6"]),
            play(3, ["7"]),
            play(4, ["10"]),
            ch(5),
            play(5, ["Q"], "6"),
            play(0, ["2"]),
        ],
    ),
    running([6, 8, 7, 8, 14, 7], 2, 7, 1),
)

# russian: truthful play challenged: challenger takes the pile, the player opens the next round
rec(
    "russian_truthful_challenge",
    base(
        "russian",
        [["7", "7", "K"], ["2", "Q"], ["3", "J"]],
        [play(0, ["7"], "7"), ch(1), play(0, ["K"], "K"), play(1, ["2"], "K")],
    ),
    running([1, 2, 2], 2, 3, 2),
)

# russian: the opener may claim a rank they do not hold; later plays keep it; the challenge of a
# bluff reveals only the last play (seat 1's A is true, seat 0's 2 was a lie never revealed).
rec(
    "russian_bluff_challenge_reveals_last_only",
    base(
        "russian",
        [["2", "9"], ["A", "A", "5"], ["3", "4"]],
        [play(0, ["2"], "A"), play(1, ["A"], "A"), ch(2), play(1, ["5"], "K")],
    ),
    # seat 1's play is truthful: seat 2 takes 2 cards (2+2=4), seat 1 opens again with 5 claim K
    running([1, 1, 4], 1, 3, 2),
)

CL_HANDS = [["A", "A", "2", "5", "9"], ["3", "4", "6", "10"], ["7", "8", "J", "Q"]]
CL_ACTIONS = [play(0, ["A"]), play(1, ["3"]), play(2, ["7"]), play(0, ["2"]), play(1, ["4"]), ch(2)]
# plays 1..5 claim A,2,3,4,5; the 5th (seat 1's 4 as 5) is challenged: bluff, seat 1 takes 5
# (2 left + 5 = 7); seat 2 opens the 6th play, which claims 6, not A; seat 0's 7th claims 7.
rec(
    "classic_sequence_continues_after_challenge",
    base("classic", CL_HANDS, [*CL_ACTIONS, play(2, ["8"], "6"), play(0, ["5"])]),
    running([2, 7, 2], 2, 7, 1),
)
rec(
    "err_classic_sequence_restarted",
    base("classic", CL_HANDS, [*CL_ACTIONS, play(2, ["8"], "A")]),
    err("claim_not_allowed", 6),
)
# classic: 14 plays without a challenge wrap K -> A (claim omitted everywhere, the 14th claims A)
CW_HANDS = [["A", "A", "A", "A", "2"], ["2", "2", "2", "3", "3"], ["3", "3", "4", "4", "4"], ["4", "5", "5", "5", "5"]]
cw = [play(k % 4, [CW_HANDS[k % 4][k // 4]]) for k in range(13)] + [play(1, ["3"], "A")]
# hand sizes: each seat plays ceil/floor of 14 plays: seats 0,1 play 4 cards, seats 2,3 play 3
rec("classic_wraps_k_to_a", base("classic", CW_HANDS, cw), running([1, 1, 2, 2], 14, 14, 2))

# final check: challenge of a truthful last play: player wins, challenger takes the pile.
rec(
    "final_check_challenge_truthful",
    base("russian", [["9", "9"], ["2", "3"], ["4", "5"], ["6", "7"]], [play(0, ["9", "9"], "9"), ch(1)]),
    ok("finished", 0, False, [1, 4, 2, 2], [0, 4, 2, 2], 0, 1, None),
)
# final check: challenge of a bluff: the player takes the pile, the challenger opens, game goes on
rec(
    "final_check_challenge_bluff_goes_on",
    base("russian", [["K"], ["2", "3"], ["4", "5"]], [play(0, ["K"], "A"), ch(1), play(1, ["2"], "2")]),
    running([1, 1, 2], 1, 2, 2),
)
# final check: believe of a truthful last play: player wins, the pile (4 cards) stays.
rec(
    "final_check_believe_truthful_pile_stays",
    base(
        "russian",
        [["Q", "5"], ["Q", "3"], ["4", "8"]],
        [play(0, ["5"], "Q"), play(1, ["Q"], "Q"), play(2, ["4"], "Q"), play(0, ["Q"], "Q"), bel(1)],
    ),
    ok("finished", 0, False, [1, 2, 2], [0, 1, 1], 4, 4, None),
)
# final check: believe of a bluff: player wins, believer takes the pile; places 1,4,2,4,2
rec(
    "final_check_believe_bluff_5p",
    base("russian", [["J", "J"], ["2"], ["3", "3"], ["4", "4", "4"], ["5", "5"]], [play(0, ["J", "J"], "K"), bel(1)]),
    ok("finished", 0, False, [1, 4, 2, 4, 2], [0, 3, 2, 3, 2], 0, 1, None),
)
# classic final check in a later round; seat 2 goes out and is checked by seat 0 (wraps around)
rec(
    "classic_final_check_wraps_to_seat0",
    base("classic", [["A", "5"], ["2", "6"], ["3"]], [play(0, ["A"]), play(1, ["2"]), play(2, ["3"]), bel(0)]),
    ok("finished", 2, False, [2, 2, 1], [1, 1, 0], 3, 3, None),
)
# ranking with shared places: 1, 2, 2, 4
rec(
    "ranking_shared_places",
    base("russian", [["7"], ["2", "3"], ["4", "5"], ["6", "8", "9"]], [play(0, ["7"], "7"), bel(1)]),
    ok("finished", 0, False, [1, 2, 2, 4], [0, 2, 2, 3], 1, 1, None),
)
# 6 players: seat 5 goes out, seat 0 challenges, truthful; seat 0 takes 6 cards
rec(
    "six_players_last_seat_goes_out",
    base(
        "classic",
        [["A", "K"], ["2", "Q"], ["3", "J"], ["4", "10"], ["5", "9"], ["6"]],
        [play(0, ["A"]), play(1, ["2"]), play(2, ["3"]), play(3, ["4"]), play(4, ["5"]), play(5, ["6"]), ch(0)],
    ),
    ok("finished", 5, False, [6, 2, 2, 2, 2, 1], [7, 1, 1, 1, 1, 0], 0, 6, None),
)
rec("running_no_actions_small_deal", base("russian", [["A"], ["2"], ["3"]], []), running([1, 1, 1], 0, 0, 0))

# ---------------------------------------------------------------- rule errors (exit 1)
SM = [["A", "K"], ["2", "Q"], ["3", "J"]]
rec(
    "err_game_over",
    base(
        "russian",
        [["9", "9"], ["2", "3"], ["4", "5"], ["6", "7"]],
        [play(0, ["9", "9"], "9"), ch(1), play(2, ["4"], "4")],
    ),
    err("game_over", 2),
)
rec("err_not_your_turn", base("russian", SM, [play(1, ["2"], "2")]), err("not_your_turn", 0))
rec(
    "err_not_your_turn_loser_opens",
    base("russian", SM, [play(0, ["K"], "A"), ch(1), play(0, ["A"], "A")]),
    err("not_your_turn", 2),
)
rec(
    "err_play_not_allowed",
    base("russian", [["K"], ["2", "3"], ["4", "5"]], [play(0, ["K"], "A"), play(1, ["2"], "A")]),
    err("play_not_allowed", 1),
)
rec("err_believe_not_allowed", base("russian", SM, [play(0, ["A"], "A"), bel(1)]), err("believe_not_allowed", 1))
rec("err_believe_on_opening", base("classic", SM, [bel(0)]), err("believe_not_allowed", 0))
rec("err_challenge_not_allowed", base("russian", SM, [ch(0)]), err("challenge_not_allowed", 0))
rec(
    "err_challenge_after_round_end",
    base("classic", SM, [play(0, ["A"]), ch(1), ch(0)]),
    err("challenge_not_allowed", 2),
)
rec("err_bad_card_count_empty", base("russian", SM, [play(0, [], "A")]), err("bad_card_count", 0))
rec(
    "err_bad_card_count_five",
    base("russian", [["A", "A", "A", "A", "2"], ["3"], ["4"]], [play(0, ["A", "A", "A", "A", "2"], "A")]),
    err("bad_card_count", 0),
)
rec(
    "err_precedence_five_cards_one_not_held",
    base("russian", [["A", "A", "A", "A", "2"], ["3"], ["4"]], [play(0, ["A", "A", "A", "2", "K"], "A")]),
    err("bad_card_count", 0),
)
rec("err_cards_not_in_hand", base("russian", SM, [play(0, ["Q"], "Q")]), err("cards_not_in_hand", 0))
rec("err_cards_not_in_hand_twice", base("classic", SM, [play(0, ["A", "A"])]), err("cards_not_in_hand", 0))
rec("err_claim_missing_russian", base("russian", SM, [play(0, ["A"])]), err("claim_not_allowed", 0))
rec(
    "err_claim_wrong_russian",
    base("russian", SM, [play(0, ["A"], "A"), play(1, ["2"], "2")]),
    err("claim_not_allowed", 1),
)
rec("err_claim_wrong_classic", base("classic", SM, [play(0, ["K"], "K")]), err("claim_not_allowed", 0))
rec(
    "err_precedence_final_check_five_wrong_claim",
    base(
        "russian",
        [["K"], ["2", "3", "4", "5", "6"], ["7"]],
        [play(0, ["K"], "A"), play(1, ["2", "3", "4", "5", "6"], "9")],
    ),
    err("play_not_allowed", 1),
)
rec(
    "err_precedence_game_over_wrong_seat",
    base("russian", [["9", "9"], ["2", "3"], ["4", "5"], ["6", "7"]], [play(0, ["9", "9"], "9"), bel(1), bel(3)]),
    err("game_over", 2),
)

# ---------------------------------------------------------------- malformed (exit 2)
OKACT = [play(0, ["A"], "A")]
rec("bad_not_an_object", ["format", "cheat-record/1"], BAD)
rec("bad_not_json", None, BAD, raw='{"format": "cheat-record/1", "variant": "russian",\n')
rec("bad_string_document", "cheat-record/1", BAD)
rec("bad_format", {"format": "cheat-record/2", "variant": "russian", "hands": SM, "actions": []}, BAD)
rec("bad_format_missing", {"variant": "russian", "hands": SM, "actions": []}, BAD)
rec("bad_variant", base("chinese", SM, []), BAD)
rec("bad_variant_missing", {"format": "cheat-record/1", "hands": SM, "actions": []}, BAD)
rec("bad_variant_case", base("Russian", SM, []), BAD)
rec("bad_hands_two", base("russian", [["A"], ["2"]], []), BAD)
rec("bad_hands_seven", base("russian", [["A"], ["2"], ["3"], ["4"], ["5"], ["6"], ["7"]], []), BAD)
rec("bad_hands_empty_hand", base("russian", [["A"], [], ["3"]], []), BAD)
rec("bad_hands_not_list", base("russian", {"0": ["A"], "1": ["2"], "2": ["3"]}, []), BAD)
rec("bad_hands_hand_is_string", base("russian", ["A", ["2"], ["3"]], []), BAD)
rec("bad_rank_five_times", base("russian", [["7", "7", "7"], ["7", "2"], ["7"]], []), BAD)
rec("bad_rank_string", base("russian", [["A", "T"], ["2"], ["3"]], []), BAD)
rec("bad_rank_lowercase", base("russian", [["a"], ["2"], ["3"]], []), BAD)
rec("bad_rank_int", base("russian", [["A", 7], ["2"], ["3"]], []), BAD)
rec("bad_actions_not_list", base("russian", SM, {"seat": 0, "play": ["A"], "claim": "A"}), BAD)
rec("bad_actions_missing", {"format": "cheat-record/1", "variant": "russian", "hands": SM}, BAD)
rec("bad_action_not_object", base("russian", SM, [["seat", 0]]), BAD)
rec("bad_action_unknown_key", base("russian", SM, [{"seat": 0, "play": ["A"], "claim": "A", "note": "x"}]), BAD)
rec("bad_action_challenge_false", base("russian", SM, [*OKACT, {"seat": 1, "challenge": False}]), BAD)
rec("bad_action_believe_false", base("russian", SM, [*OKACT, {"seat": 1, "believe": False}]), BAD)
rec("bad_action_challenge_one", base("russian", SM, [*OKACT, {"seat": 1, "challenge": 1}]), BAD)
rec(
    "bad_action_play_and_believe", base("russian", SM, [{"seat": 0, "play": ["A"], "claim": "A", "believe": True}]), BAD
)
rec(
    "bad_action_challenge_and_believe",
    base("russian", SM, [*OKACT, {"seat": 1, "challenge": True, "believe": True}]),
    BAD,
)
rec("bad_action_claim_only", base("russian", SM, [{"seat": 0, "claim": "A"}]), BAD)
rec("bad_action_no_seat", base("russian", SM, [{"play": ["A"], "claim": "A"}]), BAD)
rec("bad_seat_out_of_range", base("russian", SM, [play(3, ["A"], "A")]), BAD)
rec("bad_seat_negative", base("russian", SM, [play(-1, ["A"], "A")]), BAD)
rec("bad_seat_string", base("russian", SM, [play("0", ["A"], "A")]), BAD)
rec("bad_seat_float", base("russian", SM, [play(0.0, ["A"], "A")]), BAD)
rec("bad_seat_true", base("russian", SM, [*OKACT, play(True, ["2"], "A")]), BAD)
rec("bad_claim_not_rank", base("russian", SM, [play(0, ["A"], "X")]), BAD)
rec("bad_claim_int", base("russian", SM, [play(0, ["A"], 1)]), BAD)
rec("bad_claim_null", base("classic", SM, [play(0, ["A"], None) | {"claim": None}]), BAD)
rec("bad_play_not_list", base("russian", SM, [play(0, "A", "A")]), BAD)
rec("bad_play_bad_rank", base("russian", SM, [play(0, ["1"], "A")]), BAD)
# malformed wins over an earlier illegal action: the whole document is validated first
rec("bad_after_illegal_action", base("russian", SM, [play(1, ["2"], "2"), {"seat": 0, "pass": True}]), BAD)


def write():
    for name, (doc, expected, raw) in R.items():
        text = raw if raw is not None else fmt(doc)
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            f.write(text)
        with open(os.path.join(OUT, name + ".expected.json"), "w") as f:
            f.write(json.dumps(expected) + "\n")


if __name__ == "__main__":
    write()
    print(len(R), "records")
