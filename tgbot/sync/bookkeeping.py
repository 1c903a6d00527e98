"""What Telegram shows of a game (its messages and their digests), a hash in Redis kept in memory by
the active process; the field names are the functions and constants here. Digests and panel
states are saved every :data:`DIGEST_SAVE_EVERY` seconds, the rest written through. Each write
also carries when the bot's recent messages to the game's group went out (:data:`GROUP_SENT`),
so the next active process knows the group's real window."""

from __future__ import annotations

import asyncio
import logging
import math
import re
import string
from collections.abc import Callable

from tgbot.owner.store import Store

log = logging.getLogger(__name__)

BOARD_MESSAGE = "board_message"
BOARD_DIGEST = "board_digest"
#: When the bot's messages counted in the group's window went out, as of a write: ``"<second>:<tenths
#: after it, two characters each>"``, on Redis's clock (:func:`group_sent`, :func:`read_group_sent`).
GROUP_SENT = "group_sent"


def panel_message(seat: int) -> str:
    return f"panel_message:{seat}"


def panel_state(seat: int) -> str:
    return f"panel_state:{seat}"


def panel_digest(seat: int) -> str:
    return f"panel_digest:{seat}"


def turn_panel_sent(seat: int) -> str:
    return f"turn_panel_sent:{seat}"


def panel_maybe_newer(seat: int) -> str:
    """Set while a turn panel may have been sent whose id the bot never learnt (its answer came
    too late): the panel kept then shows no action, only «Refresh» (one live turn panel)."""
    return f"panel_maybe_newer:{seat}"


def unreachable(seat: int) -> str:
    return f"unreachable:{seat}"


def told_retired(seat: int) -> str:
    return f"told_retired:{seat}"


def reminder(seat: int) -> str:
    """The seat's turn reminder shown: ``<message id> <turn end>`` (retired once that turn passed)."""
    return f"reminder:{seat}"


#: The digits of :data:`GROUP_SENT`'s tenths (two a message: up to 409.5 s after the first).
_SENT_DIGITS = string.digits + string.ascii_letters + "-_"


def group_sent(sent: list[float]) -> str:
    """:data:`GROUP_SENT`'s value for messages sent at ``sent`` (oldest first): the first one's
    whole second, then each one's tenths after it (rounded up: counted a little longer) in two
    characters, so a full window stays a short hash value ("" when none)."""
    if not sent:
        return ""
    base = math.floor(sent[0])
    tenths = [min(math.ceil((moment - base) * 10), 64 * 64 - 1) for moment in sent]
    return f"{base}:" + "".join(_SENT_DIGITS[tenth // 64] + _SENT_DIGITS[tenth % 64] for tenth in tenths)


def read_group_sent(value: str | None) -> list[float]:
    """:data:`GROUP_SENT`'s moments (epoch seconds); [] when absent or unreadable."""
    base, _, digits = (value or "").partition(":")
    try:
        first = int(base)
        tenths = [
            _SENT_DIGITS.index(digits[i]) * 64 + _SENT_DIGITS.index(digits[i + 1]) for i in range(0, len(digits) - 1, 2)
        ]
    except ValueError:
        return []
    return [first + tenth / 10 for tenth in tenths]


def seat_of(field: str) -> int | None:
    """The seat of a per-seat field (``unreachable:2`` → 2), ``None`` for a game-wide one."""
    _, _, seat = field.partition(":")
    return int(seat) if seat.isdigit() else None


#: Fields not written through (what a message shows): without them a new active process
#: edits a message once more ("message is not modified" at worst).
SAVED_LATER = frozenset({"panel_state", "panel_digest", BOARD_DIGEST})
#: Seconds between writes of those fields (all games' in one round trip).
DIGEST_SAVE_EVERY = 2.0

#: The names before issue 15 (``p<seat>``, ``pk<seat>`` …, ``b``, ``bh``).
_OLD_NAME = re.compile(r"(p|pk|pd|pt|nr|x)(\d+)|b|bh")
_OLD_PER_SEAT = {
    "p": panel_message,
    "pk": panel_state,
    "pd": panel_digest,
    "pt": turn_panel_sent,
    "nr": unreachable,
    "x": told_retired,
}
_OLD_GAME_WIDE = {"b": BOARD_MESSAGE, "bh": BOARD_DIGEST}


def with_current_names(stored: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """A stored hash with its old field names translated (a current name wins over an old
    one), and the old names found (to delete from Redis)."""
    current = {field: value for field, value in stored.items() if not _OLD_NAME.fullmatch(field)}
    old: list[str] = []
    for field, value in stored.items():
        match = _OLD_NAME.fullmatch(field)
        if match is None:
            continue
        old.append(field)
        prefix, seat = match.group(1), match.group(2)
        current.setdefault(_OLD_PER_SEAT[prefix](int(seat)) if prefix else _OLD_GAME_WIDE[field], value)
    return current, old


class Bookkeeping:
    """Every game's bookkeeping: read from Redis once, then kept in memory and written back.
    ``group_sent(game_id)``: :data:`GROUP_SENT`'s value now for the game's group (None: unknown)."""

    def __init__(self, store: Store, group_sent: Callable[[str], str | None] | None = None) -> None:
        self.store = store
        self._group_sent = group_sent
        self._games: dict[str, dict[str, str]] = {}
        #: changed since last written, by game (a value of None deletes)
        self._unsaved: dict[str, dict[str, str | None]] = {}
        self._saver: asyncio.Task[None] | None = None

    async def of(self, game_id: str) -> dict[str, str]:
        """Game ``game_id``'s bookkeeping (old names translated and rewritten once)."""
        bookkeeping = self._games.get(game_id)
        if bookkeeping is None:
            bookkeeping, old = with_current_names(await self.store.records.tg_get(game_id))
            if old:
                await self.store.records.tg_set(game_id, **bookkeeping, **dict.fromkeys(old))
            for field, value in self._unsaved.get(game_id, {}).items():  # newer than Redis's
                if value is None:
                    bookkeeping.pop(field, None)
                else:
                    bookkeeping[field] = value
            self._games[game_id] = bookkeeping
        return bookkeeping

    async def write(self, game_id: str, fields: dict[str, object]) -> None:
        """Record fields (``None`` deletes one) in memory, and in Redis those that changed
        (the ones :data:`SAVED_LATER` a little later)."""
        bookkeeping = await self.of(game_id)
        texts = {field: None if value is None else str(value) for field, value in fields.items()}
        changed = {field: value for field, value in texts.items() if bookkeeping.get(field) != value}
        for field, value in changed.items():
            if value is None:
                bookkeeping.pop(field, None)
            else:
                bookkeeping[field] = value
        self._unsaved.setdefault(game_id, {}).update(changed)
        if any(field.partition(":")[0] not in SAVED_LATER for field in changed):
            # the digests and the group's window ride along
            await self.store.records.tg_set(game_id, **self._unsaved.pop(game_id), **self.window(game_id))
        elif self._saver is None or self._saver.done():
            self._saver = asyncio.create_task(self.save(DIGEST_SAVE_EVERY), name="sync-digests")

    async def save(self, after: float = 0.0) -> None:
        """Write what is not yet in Redis, of every game in one round trip, ``after`` seconds
        from now; only while this process is the active one (a former holder's is stale)."""
        await asyncio.sleep(after)
        unsaved, self._unsaved = self._unsaved, {}
        for game_id, fields in unsaved.items():
            fields.update(self.window(game_id))
        if unsaved and await self.store.fence.active():
            try:
                await self.store.records.tg_set_many(unsaved)
            except Exception as error:  # the next take-over edits those messages once more
                log.warning("view digests not saved: %s", error)

    def window(self, game_id: str) -> dict[str, str]:
        """``{GROUP_SENT: …}`` to write with the game's next write when the messages in its group's
        window changed since it was last written (taken as written), else ``{}``."""
        value = self._group_sent(game_id) if self._group_sent is not None else None
        bookkeeping = self._games.get(game_id)
        written = bookkeeping.get(GROUP_SENT, "") if bookkeeping is not None else ""
        if value is None or value == written:
            return {}
        if bookkeeping is not None:
            bookkeeping[GROUP_SENT] = value
        return {GROUP_SENT: value}

    def forget(self, game_id: str) -> None:
        """Drop a game shown to its end (its unsaved fields are still saved: a late sync reads them)."""
        self._games.pop(game_id, None)

    def close(self) -> None:
        """Drop everything (this process is no longer the active one)."""
        if self._saver is not None:
            self._saver.cancel()
        self._games.clear()
        self._unsaved.clear()
