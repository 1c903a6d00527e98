"""Each person's share of the overall message window (docs/DESIGN.md, Budgets per person): what is
sent to a private chat and is no game's own (replies, redraws of one's own view) takes at most
``share`` of the overall window's calls per person; and that window's order: a game's own first."""

from __future__ import annotations

from collections import deque

__all__ = ["SHARE_PART", "PersonShares"]

#: The part of the overall window one person may take: 1/6, 5 of Telegram's 30 a second.
SHARE_PART = 6


class PersonShares:
    """``share`` calls per ``period`` seconds for each person (a sliding window counted from each
    call's admission); ``game_waiting``: a game's own calls waiting now for the overall window
    alone (the others let them go first)."""

    def __init__(self, share: int, period: float) -> None:
        self.share, self.period = max(1, share), period
        self.game_waiting = 0
        self._sent: dict[int, deque[float]] = {}
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
        sent = self._sent.get(person)
        if sent is None:
            return 0.0
        while sent and sent[0] + self.period <= now:
            sent.popleft()
        return 0.0 if len(sent) < self.share else sent[-self.share] + self.period - now

    def take(self, person: int, now: float) -> None:
        """``person``'s call is admitted at ``now``."""
        if len(self._sent) >= self._sweep_at:
            self._sent = {key: sent for key, sent in self._sent.items() if sent and sent[-1] + self.period > now}
            self._sweep_at = 2 * len(self._sent) + 1024
        self._sent.setdefault(person, deque()).append(now)

    def need(self, game: bool) -> int:
        """Overall slots a call needs free to go now: its own, and for any call but a game's
        own, one for each game's call waiting."""
        return 1 if game else 1 + self.game_waiting
