"""Write the long 52-card records that reach the 300-play cap (``cap_*.json``).

Run ``python tests/core/records/make_long_records.py`` to regenerate them. Only the records are
generated; their ``.expected.json`` files were written by hand from the reasoning below, not by
running the engine (see README.md).

Every game follows one loop: the player to act plays ONE card with a false claim, the next seat
challenges, the bluffer takes the pile (just that card) back, and the challenger opens the next
round. So hands never change, and play k (1-based) is made by seat (k - 1) mod n. Only the 300th
play and its answer differ, as each record's docstring in ``GAMES`` says.
"""

from __future__ import annotations

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
CAP = 300


def _hands(spec: list[str]) -> list[list[str]]:
    return [s.split() for s in spec]


def _loop(variant: str, hands: list[list[str]], last_play: dict, answer: dict) -> dict:
    n = len(hands)
    actions = []
    for k in range(1, CAP):
        seat = (k - 1) % n
        if variant == "classic":
            forced = NAMES[(k - 1) % 13]
            card = next(c for c in hands[seat] if c != forced)
            actions.append({"seat": seat, "play": [card]})  # claim omitted: forced, and false
        else:
            card = hands[seat][0]
            claim = "K" if card != "K" else "A"
            actions.append({"seat": seat, "play": [card], "claim": claim})
        actions.append({"seat": (seat + 1) % n, "challenge": True})
    actions.append(last_play)
    actions.append(answer)
    assert sum(len(h) for h in hands) == 52
    return {
        "format": "cheat-record/1",
        "variant": variant,
        "hands": hands,
        "actions": actions,
        "meta": {"generator": "tests/core/records/make_long_records.py"},
    }


FOUR = _hands(
    [
        "A A A A 2 2 2 2 3 3 3 3 4",
        "4 4 4 5 5 5 5 6 6 6 6 7 7",
        "7 7 8 8 8 8 9 9 9 9 10 10 10",
        "10 J J J J Q Q Q Q K K K K",
    ]
)
FOUR_ACES_LAST = _hands(
    [
        "K K K K 2 2 2 2 3 3 3 3 4",
        "4 4 4 5 5 5 5 6 6 6 6 7 7",
        "7 7 8 8 8 8 9 9 9 9 10 10 10",
        "10 J J J J Q Q Q Q A A A A",
    ]
)
ONE_CARD = _hands(
    [
        "A A A A 2 2 2 2 3 3 3 3 4 4 4 4 5",
        "5 5 5 6 6 6 6 7 7 7 7 8 8 8 8 9 9",
        "9 9 10 10 10 10 J J J J Q Q Q Q K K K",
        "K",
    ]
)
FIVE = _hands(
    [
        "A A A A 2 2 2 2 3 3 3",
        "3 4 4 4 4 5 5 5 5 6 6",
        "6 6 7 7 7 7 8 8 8 8",
        "9 9 9 9 10 10 10 10 J J",
        "J J Q Q Q Q K K K K",
    ]
)

GAMES = {
    # 300th play (seat 3): one card, a bluff; seat 0 challenges; seat 3 takes it back.
    # All hold 13: a draw, everyone shares 1st place.
    "cap_draw_russian_52": lambda: _loop(
        "russian", FOUR, {"seat": 3, "play": ["10"], "claim": "K"}, {"seat": 0, "challenge": True}
    ),
    # classic: the 300th play claims A (299 mod 13 = 0); seat 3 plays its four aces truthfully,
    # seat 0 challenges and takes them: 17, 13, 13, 9 -> seat 3 wins on fewest cards.
    "cap_classic_fewest_wins_52": lambda: _loop(
        "classic", FOUR_ACES_LAST, {"seat": 3, "play": ["A", "A", "A", "A"]}, {"seat": 0, "challenge": True}
    ),
    # seat 3 holds one card all game (each of its plays is a final check whose bluff is
    # challenged); the 300th play is its K claimed truthfully, seat 0 challenges: seat 3 goes out
    # and wins, seat 0 takes the one card: 18, 17, 17, 0.
    "cap_last_cards_win_russian_52": lambda: _loop(
        "russian", ONE_CARD, {"seat": 3, "play": ["K"], "claim": "K"}, {"seat": 0, "challenge": True}
    ),
    # 5 players, classic: the 300th play is seat 4's (299 mod 5); two cards claimed as A (a bluff);
    # seat 0 believes and takes them: 13, 11, 10, 10, 8.
    "cap_classic_believe_bluff_5p_52": lambda: _loop(
        "classic", FIVE, {"seat": 4, "play": ["Q", "K"]}, {"seat": 0, "believe": True}
    ),
    # as the last-cards game, but seat 0 believes the truthful K: seat 3 wins, the pile stays.
    "cap_last_cards_believed_russian_52": lambda: _loop(
        "russian", ONE_CARD, {"seat": 3, "play": ["K"], "claim": "K"}, {"seat": 0, "believe": True}
    ),
}


def write() -> None:
    for name, make in GAMES.items():
        doc = make()
        lines = ",\n    ".join(json.dumps(a) for a in doc["actions"])
        hands = ",\n    ".join(json.dumps(h) for h in doc["hands"])
        text = (
            "{\n"
            f'  "format": "cheat-record/1",\n  "variant": {json.dumps(doc["variant"])},\n'
            f'  "meta": {json.dumps(doc["meta"])},\n'
            f'  "hands": [\n    {hands}\n  ],\n  "actions": [\n    {lines}\n  ]\n}}\n'
        )
        with open(os.path.join(HERE, name + ".json"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    write()
