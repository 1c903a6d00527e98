"""Self-play tool: Wilson interval, seat rotation, determinism, CLI."""

from __future__ import annotations

import json

import pytest

from core.selfplay import format_table, main, run, wilson


def test_wilson_known_values():
    lo, hi = wilson(50, 100)
    assert round(lo, 4) == 0.4038 and round(hi, 4) == 0.5962
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and round(hi, 4) == 0.2775
    lo, hi = wilson(10, 10)
    assert round(lo, 4) == 0.7225 and hi == pytest.approx(1.0)
    lo, hi = wilson(1, 4)
    assert round(lo, 4) == 0.0456 and round(hi, 4) == 0.6994
    assert wilson(0, 0) == (0.0, 1.0)
    lo, hi = wilson(960, 2000)
    assert lo < 0.48 < hi


def test_wilson_errors():
    with pytest.raises(ValueError):
        wilson(3, 2)
    with pytest.raises(ValueError):
        wilson(-1, 2)


def test_run_rotates_seats_and_counts():
    res = run(4, 20, ["counting", "honest", "honest", "honest"], seed=5)
    assert res["games"] == 20
    c, h = res["strategies"]["counting"], res["strategies"]["honest"]
    assert c["games"] == 20 and h["games"] == 60
    assert 0 <= c["wins"] <= 20
    assert c["wilson_low"] <= c["win_rate"] <= c["wilson_high"]
    assert 1 <= c["mean_place"] <= 4


def test_run_rounds_up_to_whole_deals_and_is_deterministic():
    a = run(3, 7, ["random", "honest", "counting"], seed=2, variant="classic")
    b = run(3, 7, ["random", "honest", "counting"], seed=2, variant="classic")
    assert a["games"] == 9
    assert a["strategies"] == b["strategies"] and a["plays"] == b["plays"]


def test_run_bad_arguments():
    with pytest.raises(ValueError):
        run(4, 10, ["counting", "honest"], seed=1)
    with pytest.raises(ValueError):
        run(4, 10, ["counting", "honest", "honest", "genius"], seed=1)
    with pytest.raises(ValueError):
        run(2, 10, ["counting", "honest"], seed=1)


def test_cli_table_and_json(capsys):
    assert main(["--players", "4", "--games", "8", "--seats", "counting,random,random,random", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "counting" in out and "random" in out and "plays/s" in out and "Wilson" in out
    assert main(["--players", "3", "--games", "3", "--seats", "honest,random,counting", "--seed", "1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data["strategies"]) == {"honest", "random", "counting"}
    assert format_table(data).startswith("3 games")


def test_cli_rejects_unknown_strategy(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--players", "3", "--games", "3", "--seats", "a,b,c"])
    assert e.value.code == 2
