"""The compact JSON encoding of GameState: schema_version, round trips, errors."""

from __future__ import annotations

import json
import random

import pytest

from core import SCHEMA_VERSION, GameState, InvalidState, new_game
from tests.core.engine_helpers import play_game


def some_states():
    out = []
    for seed, variant in [(1, "russian"), (2, "classic"), (3, "russian")]:
        g = play_game(seed, variant)
        out += [g.initial, g.states[len(g.states) // 2], g.final]
    return out


def test_schema_version_present():
    s = new_game(4, "russian", random.Random(0))
    d = json.loads(s.to_json())
    assert d["schema_version"] == SCHEMA_VERSION
    assert s.to_dict()["schema_version"] == SCHEMA_VERSION


@pytest.mark.parametrize("i", range(9))
def test_round_trip(i):
    s = some_states()[i]
    assert GameState.from_json(s.to_json()) == s
    assert GameState.from_json(s.to_json().encode()) == s
    assert GameState.from_dict(s.to_dict()) == s
    assert len(s.to_json().encode()) < 2048


def test_finished_state_round_trip_keeps_result():
    g = play_game(5, "classic")
    back = GameState.from_json(g.final.to_json())
    assert back.result == g.final.result and back.current is None


@pytest.mark.parametrize("version", [None, 0, 2, "1", SCHEMA_VERSION + 1, 1.5])
def test_wrong_schema_version(version):
    d = new_game(3, "russian", random.Random(0)).to_dict()
    if version is None:
        del d["schema_version"]
    else:
        d["schema_version"] = version
    with pytest.raises(InvalidState):
        GameState.from_json(json.dumps(d))
    with pytest.raises(InvalidState):
        GameState.from_dict(d)


@pytest.mark.parametrize(
    "text",
    ["", "{", "not json", "[1, 2]", "null", '"state"', "42", b"\xff\xfe", '{"schema_version": 1}'],
)
def test_bad_json(text):
    with pytest.raises(InvalidState):
        GameState.from_json(text)


@pytest.mark.parametrize(
    "field,value",
    [
        ("variant", "chinese"),
        ("hands", "AAA"),
        ("hands", ["A1"]),
        ("pile", [[0, "A"]]),
        ("plays", "x"),
        ("pile", [[0, "A", "Z"]]),
        ("hands", None),
        ("hands", ["A", "2"]),
        ("pile", [[9, "A", "A"]]),
        ("current", "0"),
        ("current", 7),
        ("plays", -1),
        ("plays", 1.5),
        ("pile", "A"),
    ],
)
def test_bad_fields(field, value):
    d = new_game(3, "russian", random.Random(0)).to_dict()
    d[field] = value
    with pytest.raises(InvalidState):
        GameState.from_json(json.dumps(d))


def test_invalid_state_is_a_value_error():
    assert issubclass(InvalidState, ValueError)
