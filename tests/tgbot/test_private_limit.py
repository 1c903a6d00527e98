"""Fast taps in a private chat (issue 26, 4): Telegram takes about one message a second there,
short bursts allowed. A card picked past that limit is answered at once and drawn on the panel
once the block ends, never lost.

Driven through the Bot API emulator (its private limit on: 3 messages per window) against the
bot's real Application (in-process, :mod:`tests.tgbot.live`) and a private redis-server.
"""

from __future__ import annotations

import pytest

from tests.fakes.html import parse_html
from tests.fakes.spec import ApiError
from tests.tgbot.live import cb, running
from tgbot.codec import decode
from tgbot.render.panel import panel

pytestmark = pytest.mark.e2e

DB = 3


def _data(buttons: list[dict]) -> list[str]:
    return [b.get("callback_data", "") for b in buttons]


def _people(emu, base: int) -> list:
    return [emu.add_user(base + i, name) for i, name in enumerate(("Аня", "Борис", "Вера"))]


async def _four_quick_picks(bot) -> None:
    """The player on turn picks four cards one after the other without waiting: the fourth
    pick's redraw meets the chat's limit; every tap is answered, and the panel ends showing
    the fourth pick (waited for on the emulator's events, no sleep)."""
    emu = bot.emu
    people = _people(emu, 2600)
    group = emu.add_group(-26004, "Клуб", members=people, admins=people[:1])
    gid = await bot.open_game(group, people)
    table = await bot.store.load(gid)
    seat = table.state.current
    user = next(u for u in people if u.id == table.seats[seat].user_id)
    shown = await emu.wait_for(lambda: (m := bot.panel(user, gid)) and cb(m, "k:") and m, timeout=20)
    picks = cb(shown, "k:")[:4]
    assert len(picks) == 4
    taps = [await user.tap(shown, button) for button in picks]  # all queued before the bot reads one
    for tap in taps:
        assert await tap.answer(15)  # answered at once, drawn or not
    last = decode(picks[-1]["callback_data"]).cards
    expected = panel(table, seat, last)
    assert expected.keyboard is not None
    wanted = _data([b for row in expected.keyboard for b in row])
    await emu.wait_for(lambda: _data(shown.flat_buttons) == wanted, timeout=15)
    refused = [
        e for e in emu.errors if e["error_code"] == 429 and e["params"].get("chat_id") in (user.id, str(user.id))
    ]
    assert refused == [], "the bot keeps the private chat's window itself: Telegram never answers 429"
    assert emu.violations == []


async def test_a_fourth_quick_pick_is_drawn_once_the_block_ends(redis_server):
    """Scaled down: 3 messages per second in a private chat (the group's window is 20 s)."""
    async with running(redis_server.url.replace("/0", f"/{DB}"), group_window=20.0) as bot:
        assert bot.emu.private_window == 1.0 and bot.emu.private_rate == 3
        await _four_quick_picks(bot)


async def test_a_fourth_quick_pick_at_telegram_s_real_limits(redis_server):
    """Telegram's own limits (20 a minute in a group, 3 per 3 s in a private chat): the fourth
    pick is drawn about 3 s after the first."""
    async with running(redis_server.url.replace("/0", f"/{DB}"), group_window=60.0) as bot:
        assert bot.emu.private_window == 3.0
        await _four_quick_picks(bot)


async def test_one_blocked_private_chat_holds_back_no_other_panel(redis_server):
    """The player who just played has a private chat that answers 429 to everything: the next
    player's turn panel (drawn after theirs in seat order) comes all the same, and theirs once
    their chat takes messages again."""
    async with running(redis_server.url.replace("/0", f"/{DB}"), group_window=20.0) as bot:
        emu = bot.emu
        people = _people(emu, 2610)
        group = emu.add_group(-26014, "Клуб", members=people, admins=people[:1])
        gid = await bot.open_game(group, people)
        users = {u.id: u for u in people}
        if (await bot.store.load(gid)).state.current == 2:
            await bot.play_one(gid, users)  # the next panel to draw comes after the blocked one
        table = await bot.store.load(gid)
        seat = table.state.current
        victim = users[table.seats[seat].user_id]
        shown = await bot.pick(victim, gid)
        blocked = ApiError(429, "Too Many Requests: retry after 1", {"retry_after": 1})
        emu.fault = lambda method, raw: blocked if str(raw.get("chat_id")) == str(victim.id) else None
        await (await victim.tap(shown, cb(shown, "p:")[0])).answer(15)
        table = await bot.store.load(gid)
        after = users[table.seats[table.state.current].user_id]

        def turn_panel() -> bool:
            taps = [decode(b["callback_data"]) for b in cb(bot.panel(after, gid), "k:")]
            return bool(taps) and taps[0].action_count == table.action_count

        def victim_drawn() -> bool:
            return bot.panel(victim, gid).text == parse_html(panel(table, seat).text)[0]

        await emu.wait_for(turn_panel, timeout=15)
        assert not victim_drawn()
        emu.fault = None
        await emu.wait_for(victim_drawn, timeout=15)
        assert emu.violations == []
