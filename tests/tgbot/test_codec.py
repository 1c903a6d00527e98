"""Callback codec: round trips, the 64-byte limit on every keyboard render produces, malformed data."""

from __future__ import annotations

from dataclasses import replace

import pytest

import core
from tests.tgbot.helpers import ai_players, at_cap, lobby, play_through, started
from tgbot import codec
from tgbot.codec import CallbackDataError, Tap, decode, encode
from tgbot.game import play
from tgbot.game.lobby import add_bot
from tgbot.game.table import Status, Table
from tgbot.render.board import board, lobby as lobby_view
from tgbot.render.panel import panel
from tgbot.render.text import BOT_NAMES, Rendered

LONG_GID = "Zz9_-" + "x" * 11  # 16 characters: the longest id the codec accepts

TAPS = [
    Tap("join", "abc"),
    Tap("leave", "abc"),
    Tap("start", "abc"),
    Tap("cancel", "abc"),
    Tap("variant", "abc", arg="classic"),
    Tap("pick", "abc", action_count=0, cards=""),
    Tap("pick", "abc", action_count=12, cards="A27K"),
    Tap("play", "abc", action_count=999999, cards="TTTT", claim="T"),
    Tap("challenge", "abc", action_count=3),
    Tap("believe", "abc", action_count=300),
    Tap("refresh", "abc"),
    Tap("lang", "0", arg="fr"),
    Tap("play", LONG_GID, action_count=999999, cards="QQQQ", claim="A"),
    Tap("addbot", "abc"),
    Tap("rmbot", "abc"),
    Tap("takeback", LONG_GID),
    Tap("quit", "abc", arg="5"),
    Tap("timer", "-1001234567890", arg="600"),
    Tap("timer", "-1001234567890", arg="long"),
    Tap("settings", "-1001234567890", arg="vclassic"),
    Tap("settings", "-1001234567890", arg="tlong"),
    Tap("stopok", LONG_GID, arg=codec.person(2**52)),
    Tap("again", LONG_GID),
    Tap("rec", LONG_GID),
]


def test_every_op_is_covered():
    assert {t.op for t in TAPS} == set(codec._OPS)


@pytest.mark.parametrize("tap", TAPS, ids=lambda t: t.op)
def test_round_trip(tap):
    data = encode(tap)
    assert len(data.encode()) <= codec.MAX_BYTES == 64
    assert decode(data) == tap


@pytest.mark.parametrize(
    "data",
    [
        None,
        "",
        "zzz",
        "j",
        "j:",
        "j:a:b",
        "j:" + "a" * 17,
        "j:a b",
        "j:ä",
        "p:abc:1:77",
        "p:abc:x:77:7",
        "p:abc:-1:77:7",
        "p:abc:1234567:7:7",
        "p:abc:1:77777:7",
        "p:abc:1:7Z:7",
        "p:abc:1:77:Z",
        "p:abc:1:77:77",
        "p:abc:1:77:",
        "k:abc:1",
        "c:abc",
        "c:abc:1:2",
        "b:abc:",
        "v:abc:Classic",
        "v:abc:",
        "v:abc:abcdefghijklm",
        "r:abc:1",
        "x:abc:",
        ":abc",
        "J:abc",
        "p:abc:1:77:7:",
    ],
)
def test_malformed_raises_bad_callback(data):
    with pytest.raises(CallbackDataError):
        decode(data)


def test_encode_refuses_over_64_bytes():
    with pytest.raises(ValueError):
        encode(Tap("join", "x" * 70))


def _datas(rendered: Rendered) -> list[str]:
    if rendered.markup is None:
        return []
    out = []
    for row in rendered.markup.inline_keyboard:
        for b in row:
            if b.callback_data is not None:
                out.append(b.callback_data)
            else:
                assert b.url, b
    return out


def _check(rendered: Rendered, gid: str) -> set[str]:
    ops = set()
    for data in _datas(rendered):
        assert isinstance(data, str)
        assert 1 <= len(data.encode()) <= 64, data
        tap = decode(data)
        assert tap.game_id == gid
        ops.add(tap.op)
    return ops


@pytest.mark.parametrize("n", [0, 1, 3, 6])
@pytest.mark.parametrize("variant", ["russian", "classic"])
def test_lobby_keyboards(n, variant):
    t = replace(lobby(n), id=LONG_GID, variant=variant)
    ops = _check(lobby_view(t), LONG_GID)
    assert ops == {"join", "leave", "start", "cancel", "variant", "addbot"}
    assert _check(board(t, "cheat_test_bot"), LONG_GID) == ops
    if n < 6:
        with_bot = add_bot(t, BOT_NAMES, 0, 900).table
        assert _check(lobby_view(with_bot), LONG_GID) == ops | {"rmbot"}
        # its name, translated, says it is a bot: no AI mark beside it (that is for stand-ins)
        assert "🤖" not in lobby_view(with_bot).text and "Bot" not in lobby_view(with_bot).text


@pytest.mark.parametrize("n,variant", [(3, "russian"), (6, "russian"), (6, "classic"), (4, "classic")])
def test_panels_in_every_phase(n, variant):
    table, _ = started(n, seed=n * 7 + len(variant), variant=variant)
    table = replace(table, id=LONG_GID)
    phases: set = set()
    ops: set[str] = set()

    def check_all(t: Table, deep: bool = True) -> None:
        big = replace(t, action_count=999999)
        assert t.state is not None
        for tt in (t, big):
            _check(board(tt, "cheat_test_bot"), LONG_GID)
            for seat in range(n):
                ops.update(_check(panel(tt, seat), LONG_GID))
            cur = t.state.current
            if cur is None or tt.status is not Status.PLAYING:
                continue
            v = core.view(t.state, cur)
            if v.public.answering:
                continue
            # every pick the keyboard offers, followed, and the maximal 4-card pick
            hand = v.hand.ranks()
            for k in (1, 2, 4):
                picks = core.Hand.from_ranks(hand[:k]).to_str()
                r = panel(tt, cur, picks)
                got = _check(r, LONG_GID)
                ops.update(got)
                assert "play" in got, (t.state.phase, picks)
                for d in _datas(r) if deep else ():
                    tap = decode(d)
                    if tap.op == "pick":
                        ops.update(_check(panel(tt, cur, tap.cards), LONG_GID))

    players = ai_players(n, seed=n)
    last = table
    for i, (before, ch) in enumerate(play_through(table, players)):
        phases.add(before.state.phase)
        if i < 40 or i % 10 == 0 or before.state.phase is not core.Phase.PLAYING:
            check_all(before, deep=i < 40)
        last = ch.table
    check_all(last)  # the final panels keep one button: the game's record
    assert all([decode(d).op for d in _datas(panel(last, s))] == ["rec"] for s in range(n))
    # the cap check, forced
    capped = at_cap(table)
    v = core.view(capped.state, capped.state.current)
    r = v.hand.ranks()[0]
    ch = play.act(capped, capped.seats[capped.state.current].user_id, capped.action_count, core.Play((r,), r))
    assert ch.table.state.phase is core.Phase.CAP_CHECK
    phases.add(core.Phase.CAP_CHECK)
    check_all(ch.table)
    assert {core.Phase.OPENING, core.Phase.PLAYING, core.Phase.CAP_CHECK} <= phases
    assert {"pick", "play", "refresh", "challenge", "believe"} <= ops


def test_final_check_panel_offers_believe_and_challenge():
    for seed in range(20):
        table, _ = started(3, seed=seed)
        for before, ch in play_through(table, ai_players(3, seed)):
            if ch.table.status is Status.PLAYING and ch.table.state.phase is core.Phase.FINAL_CHECK:
                t = replace(ch.table, id=LONG_GID, action_count=999999)
                ops = _check(panel(t, t.state.current), LONG_GID)
                assert {"believe", "challenge", "refresh"} <= ops
                return
    pytest.fail("no final check reached")


# -- anything the codec did not produce is refused, quietly -----------------------------------------

from hypothesis import given, settings, strategies as st  # noqa: E402

_ALPHABET = "".join(sorted({c for t in TAPS for c in encode(t)})) + "²³¹٣０\n\r\t :é-_"


def _mutants() -> st.SearchStrategy[str]:
    """Callback data near what the bot renders: a real encoding with a character inserted,
    replaced or dropped, plus arbitrary text."""
    real = st.sampled_from([encode(t) for t in TAPS])

    def mutate(data: str, i: int, ch: str, how: int) -> str:
        i %= len(data) + 1
        return [data[:i] + ch + data[i:], data[:i] + ch + data[i + 1 :], data[:i] + data[i + 1 :]][how]

    return st.one_of(
        st.builds(mutate, real, st.integers(0, 64), st.sampled_from(list(_ALPHABET)), st.integers(0, 2)),
        st.text(alphabet=_ALPHABET, max_size=70),
        st.text(max_size=70),
    )


@settings(max_examples=3000, deadline=None)
@given(_mutants())
def test_decode_accepts_only_what_encode_produces(data):
    try:
        tap = decode(data)
    except CallbackDataError:
        return
    assert encode(tap) == data


@pytest.mark.parametrize(
    "data",
    [
        "k:abc:1²:",
        "k:abc:²:",
        "j:abc\n",
        "j:abc\n\n",
        "c:abc:03",
        "p:abc:1:7:7\n",
        "j:äbc",
        "v:abc:classic\n",
        "w:-100:60\n",
    ],
)
def test_odd_data_is_refused(data):
    with pytest.raises(CallbackDataError):
        decode(data)
