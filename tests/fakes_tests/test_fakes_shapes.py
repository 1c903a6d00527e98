"""Everything the emulator produces conforms to the Bot API types of api.min.json."""

import pytest
import telegram

from tests.fakes import Spec


async def test_updates_and_results_conform(bot, emu):
    spec = Spec.load()
    alice = emu.add_user(1001, "Алиса", username="alice", last_name="K")
    bob = emu.add_user(1002, "Bob", language_code=None)
    group = emu.add_group(-100, "Cards", members=[alice, bob], admins=[alice])
    forum = emu.add_group(-1005, "Forum", members=[alice], admins=[alice], is_forum=True, bot_status="administrator")
    await alice.start_bot("x")
    alice.block_bot()
    await alice.start_bot()
    await alice.send(group, "/new")
    m = await bot.send_message(
        group.id,
        "<b>hi</b>",
        parse_mode="HTML",
        reply_markup=telegram.InlineKeyboardMarkup([[telegram.InlineKeyboardButton("A", callback_data="a")]]),
    )
    await bob.send(group, "re", reply_to=emu.last_message(group))
    await alice.tap(emu.last_message(group), "a")
    tid = await emu.create_topic(forum, "T")
    await alice.send(forum, "hi", thread_id=tid)
    await bot.send_message(forum.id, "t", message_thread_id=tid)
    await bot.send_document(group.id, b"x", filename="f.txt", caption="c")
    await bot.edit_message_text("e", group.id, m.message_id)
    await emu.user_left(group, bob)
    await emu.user_joined(group, bob)
    await emu.remove_bot(group)
    emu.add_bot(group)
    await emu.migrate_group(group, -1009)
    await bot.get_chat(forum.id)
    await bot.get_chat(alice.id)
    await bot.get_chat_member(forum.id, emu.bot_id)
    await bot.get_chat_administrators(forum.id)
    await bot.get_me()
    await bot.get_webhook_info()

    problems = []
    for update in emu.updates.values():
        problems += spec.check_object("Update", update)
    for call in emu.calls:
        if call["ok"]:
            returns = spec.returns(call["method"])
            problems += spec.check_object("|".join(returns), call["result"]) if len(returns) == 1 else []
            if len(returns) > 1:
                attempts = [spec.check_object(r, call["result"]) for r in returns]
                problems += min(attempts, key=len)
    assert problems == []
    assert emu.violations == [] and emu.unmodelled == []
    assert len(emu.updates) >= 14


@pytest.mark.parametrize("typ", ["Message", "Update", "ChatMemberUpdated", "CallbackQuery", "ChatFullInfo", "User"])
def test_known_types(typ):
    assert typ in Spec.load().types
