"""The redraw of a panel its player tapped (a card picked, «Refresh», a stale tap), beside the
sync's own: only their current panel, a newer one whose answer was lost (adopted), or the one kept
beside a turn panel maybe sent; one refused for now (its chat blocked) raises RetryAfter, for
:class:`~tgbot.sync.redraws.PanelRedraws` to draw it once the block ends."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from telegram import Message

from tgbot.game.table import Table
from tgbot.render.announcements import panel_moved
from tgbot.render.panel import panel, panel_state
from tgbot.sync import bookkeeping as fields
from tgbot.sync.bookkeeping import Bookkeeping
from tgbot.sync.messages import Messages


class TappedPanels:
    """Redraws tapped panels under the sync's per-panel ``lock`` (so each decides on what the
    panel shows now)."""

    def __init__(
        self,
        bookkeeping: Bookkeeping,
        messages: Messages,
        lock: Callable[[str, int], asyncio.Lock],
    ) -> None:
        self.bookkeeping = bookkeeping
        self.messages = messages
        self._lock = lock

    async def redraw(self, table: Table, seat: int, message: Message, picks: str = "", refresh: bool = False) -> None:
        """Redraw panel ``message`` of ``seat`` unless it shows exactly that already. A newer one
        than recorded becomes theirs; a ``refresh`` of the one kept beside a turn panel maybe sent
        brings the actions back there (none below, they say)."""
        if message.chat_id != table.seats[seat].user_id:
            return  # a panel is drawn only in its player's private chat, never in a group
        async with self._lock(table.id, seat):
            bookkeeping = await self.bookkeeping.of(table.id)
            recorded = bookkeeping.get(fields.panel_message(seat))
            if recorded != str(message.message_id):
                if recorded and int(recorded) > message.message_id:
                    return
                await self._adopt(table, seat, message, recorded)
            kept = bool(bookkeeping.get(fields.panel_maybe_newer(seat)))  # (an adopted panel has it cleared)
            if kept and refresh:
                await self.bookkeeping.write(table.id, {fields.panel_maybe_newer(seat): None})
            rendered = panel(table, seat, picks, kept=kept and not refresh)
            if bookkeeping.get(fields.panel_digest(seat)) == rendered.digest:
                return
            # RetryAfter: the chat is blocked for now (nothing shown, no digest written): PanelRedraws draws it later
            shown = await self.messages.show(message.chat_id, None, message.message_id, rendered, resend=False)
            if shown == message.message_id:
                written: dict[str, object] = {fields.panel_digest(seat): rendered.digest}
                if not picks:
                    written[fields.panel_state(seat)] = panel_state(table, seat)
                await self.bookkeeping.write(table.id, written)

    async def _adopt(self, table: Table, seat: int, message: Message, recorded: str | None) -> None:
        """A newer panel than the one recorded: sent, its answer lost (MaybeSentError); it is theirs now."""
        adopted: dict[str, object] = {
            fields.panel_message(seat): message.message_id,
            fields.panel_digest(seat): None,
            fields.panel_maybe_newer(seat): None,
        }
        await self.bookkeeping.write(table.id, adopted)
        if recorded:
            await self.messages.retire(message.chat_id, int(recorded), panel_moved(table, seat))
