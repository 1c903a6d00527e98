"""Transitions of a table's access to its group (:class:`~tgbot.game.table.GroupAccess`), as the
view sync learns it from Telegram's answers (:mod:`tgbot.sync.syncer`)."""

from __future__ import annotations

from dataclasses import replace

from tgbot.game.table import Answer, Change, Ending, GroupAccess, Status, Table

#: While the group takes no message, the table's timer wakes this often (seconds from the first
#: refusal) so the group is tried again even when nothing happens at the table.
UNWRITABLE_PROBE_EVERY = 60.0


def group_unwritable(table: Table, now: float, grace: float) -> Change:
    """The group refused a message for now, at ``now`` (epoch seconds, Redis's clock): the table is
    retired ``grace`` seconds later unless a message goes through first (``unchanged`` if known)."""
    if table.group_access is not GroupAccess.WRITABLE:
        return Change(table, reply=Answer.UNCHANGED)
    new = replace(table, group_access=GroupAccess.UNWRITABLE, unwritable_since=now, retire_at=now + grace)
    return Change(new, reply=Answer.UNWRITABLE)


def group_writable(table: Table) -> Change:
    """A message went through to the group that had refused them (``unchanged`` unless unwritable)."""
    if table.group_access is not GroupAccess.UNWRITABLE:
        return Change(table, reply=Answer.UNCHANGED)
    new = replace(table, group_access=GroupAccess.WRITABLE, unwritable_since=None, retire_at=None)
    return Change(new, reply=Answer.WRITABLE)


def group_gone(table: Table, reason: Ending) -> Change:
    """The group is lost for good: the table is retired. A live one ends without result
    (``ended`` = ``reason``, no timer, no group note); an ended one keeps its end (``unchanged`` if gone)."""
    if table.group_access is GroupAccess.GONE:
        return Change(table, reply=Answer.UNCHANGED)
    new = replace(table, group_access=GroupAccess.GONE, retire_at=None)
    if table.live:
        new = replace(new, status=Status.CANCELLED, ended=reason, deadline=None, deadline_kind=None, turn_end=None)
    return Change(new, reply=Answer.RETIRED)
