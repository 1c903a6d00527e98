"""The one table of rights (tgbot/game/rights.py): who may do what at a table."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.tgbot.helpers import lobby
from tgbot.game.rights import REFUSALS, RIGHTS, Action, Rule, allowed, refusal
from tgbot.game.table import Answer
from tgbot.i18n import LANGUAGES
from tgbot.render.answers import answer


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


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_refusal_names_the_rule_that_refused(lang):
    """A non-admin's /timer and a bystander's «Play again» were once told «only the creator or a
    chat admin»: each rule that refuses has its own answer, and each action is refused with its
    rule's."""
    rules = {rule for rule in RIGHTS.values() if rule is not Rule.ANYONE}
    assert set(REFUSALS) == rules
    assert len({answer(REFUSALS[rule], lang) for rule in rules}) == len(rules)
    assert refusal(Action.TIMER) == refusal(Action.SETTINGS) == Answer.ADMINS_ONLY
    assert refusal(Action.PLAY_AGAIN) == Answer.PLAYERS_ONLY
    assert refusal(Action.KICK) == refusal(Action.STOP_GAME) == Answer.NOT_ALLOWED
