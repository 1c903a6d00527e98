"""Each person's share of the overall message window (docs/DESIGN.md, Budgets per person): what is
sent to a private chat and is no game's own (replies, redraws of one's own view) takes at most
``share`` of the overall window's calls per person; and that window's order: a game's own first."""

from __future__ import annotations

import bisect
from collections import deque

__all__ = ["SHARE_PART", "PersonShares", "Window"]

#: The part of the overall window one person may take: 1/6, 5 of Telegram's 30 a second.
SHARE_PART = 6


class Window:
    """A sliding-window log of ``limit`` calls per ``period`` seconds: the calls in flight, and the
    end times of finished ones in order (each counted until ``period`` after it)."""

    def __init__(self, limit: int, period: float) -> None:
        self.limit, self.period = limit, period
        self.in_flight = 0
        self.ends: deque[float] = deque()

    def wait(self, now: float, need: int = 1) -> float:
        """Seconds until ``need`` more calls fit (0: now); a call in flight frees its slot last."""
        ends = self.ends
        while ends and ends[0] + self.period <= now:
            ends.popleft()
        over = len(ends) + self.in_flight + need - self.limit
        if over <= 0:
            return 0.0
        return ends[over - 1] + self.period - now if over <= len(ends) else self.period

    def finish(self, end: float, count: int = 1) -> None:
        """Record ``count`` calls finished at ``end`` (clock seconds)."""
        if not self.ends or end >= self.ends[-1]:
            self.ends.extend([end] * count)
        else:
            for _ in range(count):
                bisect.insort(self.ends, end)

    def empty(self, now: float) -> bool:
        return self.wait(now, self.limit) == 0.0


class PersonShares:
    """``share`` calls per ``period`` seconds for each person (a :class:`Window` each: a call holds
    its slot until a period after it finished, as Telegram counts it when it arrives);
    ``game_waiting``: a game's own calls waiting now for the overall window alone (the others let
    them go first)."""

    def __init__(self, share: int, period: float) -> None:
        self.share, self.period = max(1, share), period
        self.game_waiting = 0
        self._windows: dict[int, Window] = {}
        self._sweep_at = 1024  # forget people without a recent call when this many are known

    @staticmethod
    def person(chat_id: object, game: bool) -> int | None:
        """Whose share a call spends: the person of a private chat (a positive id), unless the
        call is a game's own message (their turn's panel, a reminder: the game's pace bounds them)."""
        if game or isinstance(chat_id, bool) or not isinstance(chat_id, int | str):
            return None
        try:
            person = int(chat_id)
        except ValueError:  # an @username: a channel's or a group's
            return None
        return person if person > 0 else None

    def wait(self, person: int, now: float) -> float:
        """Seconds until ``person`` has a call left in their share (0: now)."""
        window = self._windows.get(person)
        return 0.0 if window is None else window.wait(now)

    def window(self, person: int, now: float) -> Window:
        """``person``'s window, for an admitted call to hold a slot in while in flight."""
        if len(self._windows) >= self._sweep_at:
            self._windows = {key: window for key, window in self._windows.items() if not window.empty(now)}
            self._sweep_at = 2 * len(self._windows) + 1024
        return self._windows.setdefault(person, Window(self.share, self.period))

    def need(self, game: bool) -> int:
        """Overall slots a call needs free to go now: its own, and for any call but a game's
        own, one for each game's call waiting."""
        return 1 if game else 1 + self.game_waiting
