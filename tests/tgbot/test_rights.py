"""The one table of rights (tgbot/game/rights.py): who may do what at a table."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.tgbot.helpers import lobby
from tgbot.game.rights import RIGHTS, Action, Rule, allowed


def test_every_action_has_a_rule():
    assert set(RIGHTS) == set(Action)


@pytest.mark.parametrize("action", list(Action))
def test_who_may_do_what(action):
    table = replace(lobby(2), creator=1)  # seats 1 and 2; 1 opened it
    creator, player, stranger = 1, 2, 99
    rule = RIGHTS[action]
    assert allowed(action, table, creator, False) is (rule is not Rule.ADMIN)
    assert allowed(action, table, player, False) is (rule in (Rule.ANYONE, Rule.SEATED, Rule.PLAYER))
    assert allowed(action, table, stranger, False) is (rule is Rule.ANYONE)
    assert allowed(action, table, stranger, True) is (rule is not Rule.SEATED)  # an admin, not seated
