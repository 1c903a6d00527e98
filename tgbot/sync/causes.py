"""What one person causes in a group (docs/DESIGN.md, Budgets per person): at most :data:`CAUSE_CAP`
group messages per :data:`CAUSE_WINDOW` for the replies to someone outside the chat's games and the
lobby redraws a person's Join and Leave cause; a lobby change past that waits for the next change
(anyone's) or for their room, and is then drawn as the lobby is."""

from __future__ import annotations

import time
from collections.abc import Callable

from tgbot.game.table import Status, Table
from tgbot.sync.shares import Window

__all__ = ["CAUSE_CAP", "CAUSE_WINDOW", "GroupCauses"]

#: Seconds over which a person's group messages are counted (Telegram's group window).
CAUSE_WINDOW = 60.0
#: Group messages one person may cause in one group within :data:`CAUSE_WINDOW`.
CAUSE_CAP = 3


class GroupCauses:
    """Each person's group messages per group (``window`` seconds, ``cap``), and the lobbies whose
    board waits: game id → (the table's version, the group, the person who changed it)."""

    def __init__(
        self, window: float = CAUSE_WINDOW, cap: int = CAUSE_CAP, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.window, self.cap, self._clock = window, cap, clock
        self._caused: dict[tuple[int, int], Window] = {}
        self._held: dict[str, tuple[int, int, int]] = {}
        self._sweep_at = 1024  # forget people without a recent message when this many are known

    def _wait(self, chat_id: int, user_id: int, now: float) -> float:
        """Seconds until ``user_id`` may cause one more message in ``chat_id`` (0: now)."""
        caused = self._caused.get((chat_id, user_id))
        return 0.0 if caused is None else caused.wait(now)

    def _spend(self, chat_id: int, user_id: int, now: float) -> None:
        if len(self._caused) >= self._sweep_at:
            self._caused = {key: caused for key, caused in self._caused.items() if not caused.empty(now)}
            self._sweep_at = 2 * len(self._caused) + 1024
        self._caused.setdefault((chat_id, user_id), Window(self.cap, self.window)).finish(now)

    def spend(self, chat_id: int, user_id: int) -> bool:
        """Spend one of ``user_id``'s messages in ``chat_id``; False (nothing spent) when none is left."""
        now = self._clock()
        if self._wait(chat_id, user_id, now) > 0:
            return False
        self._spend(chat_id, user_id, now)
        return True

    def caused(self, table: Table, user_id: int) -> None:
        """``user_id`` changed the lobby: ``table`` as committed. The board's redraw spends one of
        their messages, or, none left, waits at this version."""
        if self.spend(table.chat_id, user_id):
            self._held.pop(table.id, None)
        else:
            self._held[table.id] = (table.version, table.chat_id, user_id)

    def held(self, table: Table) -> float:
        """Seconds the board of ``table`` waits (0: draw it now). A wait ends when the table
        changed since (anyone's change) or is no lobby, or once its cause has room (spent then)."""
        hold = self._held.get(table.id)
        if hold is None:
            return 0.0
        version, chat_id, user_id = hold
        now = self._clock()
        if version == table.version and table.status is Status.LOBBY:
            wait = self._wait(chat_id, user_id, now)
            if wait > 0:
                return wait
            self._spend(chat_id, user_id, now)
        del self._held[table.id]
        return 0.0

    def forget(self, game_id: str) -> None:
        """An ended game's board waits no more."""
        self._held.pop(game_id, None)
