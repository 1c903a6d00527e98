"""The Bot API emulator, driven over HTTP (httpx) and by PTB's telegram.Bot."""

import asyncio

import httpx
import pytest
import telegram
from telegram import InlineKeyboardButton as Btn
from telegram import InlineKeyboardMarkup as Markup
from telegram.error import BadRequest, ChatMigrated, Conflict, Forbidden, RetryAfter

from tests.fakes import BotAPIEmulator
from tests.fakes.botapi import NOT_MODIFIED, QUERY_TOO_OLD


class Clock:
    """A manual clock for rate limits and query timeouts."""

    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def kb(*rows):
    return Markup([[Btn(t, callback_data=d) for t, d in row] for row in rows])


async def raw(emu, method, token=None, **kw):
    async with httpx.AsyncClient() as c:
        r = await c.post(f"http://127.0.0.1:{emu.port}/bot{token or emu.token}/{method}", **kw)
        return r.status_code, r.json()


@pytest.fixture
def world(emu):
    alice = emu.add_user(1001, "Алиса", username="alice")
    bob = emu.add_user(1002, "Bob", language_code="en")
    group = emu.add_group(-100, "Cards", members=[alice, bob], admins=[alice])
    return emu, alice, bob, group


# ------------------------------------------------------------------ protocol
async def test_token_and_unknown_method(emu):
    assert await raw(emu, "getMe", token="1:BAD") == (
        401,
        {"ok": False, "error_code": 401, "description": "Unauthorized"},
    )
    assert await raw(emu, "fooBar") == (
        404,
        {"ok": False, "error_code": 404, "description": "Not Found: method not found"},
    )
    assert [e["error_code"] for e in emu.errors] == [401, 404]


async def test_get_me(bot, emu):
    me = await bot.get_me()
    assert me.username == "cheat_test_bot" and me.is_bot and me.id == 123456
    assert me.can_read_all_group_messages is False and me.supports_inline_queries is False
    assert emu.base_url == f"http://127.0.0.1:{emu.port}/bot"


async def test_json_body_form_and_query_string(world):
    emu, alice, _, group = world
    status, body = await raw(
        emu,
        "sendMessage",
        json={
            "chat_id": group.id,
            "text": "<b>x</b>",
            "parse_mode": "HTML",
            "reply_markup": {"inline_keyboard": [[{"text": "A", "callback_data": "a"}]]},
        },
    )
    assert status == 200 and body["result"]["entities"][0]["type"] == "bold"
    status, body = await raw(emu, "sendMessage", data={"chat_id": str(group.id), "text": "y"})
    assert status == 200 and body["result"]["message_id"] == 2
    async with httpx.AsyncClient() as c:
        r = await c.get(f"{emu.base_url}{emu.token}/getChat", params={"chat_id": group.id})
    assert r.json()["result"]["title"] == "Cards"


async def test_unknown_parameter_is_a_violation(world):
    emu, _, _, group = world
    status, _ = await raw(emu, "sendMessage", json={"chat_id": group.id, "text": "x", "foo": 1})
    assert status == 200
    assert emu.violations == ["sendMessage: unknown parameter 'foo'"]


async def test_strict_unknown():
    async with BotAPIEmulator(strict_unknown=True) as emu:
        emu.add_group(-1, "G")
        status, body = await raw(emu, "sendMessage", json={"chat_id": -1, "text": "x", "foo": 1})
        assert status == 400


async def test_type_violation(world):
    emu, _, _, group = world
    status, body = await raw(emu, "sendMessage", json={"chat_id": group.id, "text": "x", "message_thread_id": "abc"})
    assert status == 400 and body["description"].startswith("Bad Request:")
    assert len(emu.violations) == 1 and emu.errors[-1]["error_code"] == 400


# ------------------------------------------------------------------- button styles
async def test_button_style_only_the_three_documented_values(bot, world):
    emu, _, _, group = world
    for style in ("success", "danger", "primary"):
        await bot.send_message(group.id, "ok", reply_markup=Markup([[Btn("a", callback_data="a", style=style)]]))
    for style in ("green", "Danger", "default", ""):
        with pytest.raises(BadRequest, match="invalid button style"):
            await raw_send(emu, group.id, {"inline_keyboard": [[{"text": "a", "callback_data": "a", "style": style}]]})
    sent = emu.last_message(group.id, lambda m: m.from_bot and m.buttons)
    assert sent.flat_buttons[0]["style"] == "primary"


async def test_tg_time_reaches_the_message_as_a_date_time_entity(bot, world):
    _, _, _, group = world
    msg = await bot.send_message(
        group.id, 'Ход <tg-time unix="1796131919" format="r">≈ 90 с</tg-time>', parse_mode="HTML"
    )
    assert msg.text == "Ход ≈ 90 с"
    with pytest.raises(BadRequest, match="(?i)invalid date format used"):
        await bot.send_message(group.id, '<tg-time unix="1796131919" format="x">≈ 90 с</tg-time>', parse_mode="HTML")


# ------------------------------------------------------------------- limits
async def test_callback_data_bytes(bot, world):
    emu, _, _, group = world
    await bot.send_message(group.id, "ok", reply_markup=kb([("a", "я" * 32)]))  # 64 bytes
    with pytest.raises(BadRequest, match="(?i)BUTTON_DATA_INVALID"):
        await bot.send_message(group.id, "x", reply_markup=kb([("a", "я" * 32 + "x")]))
    with pytest.raises(BadRequest, match="(?i)BUTTON_DATA_INVALID"):
        await raw_send(emu, group.id, {"inline_keyboard": [[{"text": "a", "callback_data": ""}]]})
    assert any("BUTTON_DATA_INVALID" in v for v in emu.violations)


async def raw_send(emu, chat_id, markup):
    status, body = await raw(emu, "sendMessage", json={"chat_id": chat_id, "text": "x", "reply_markup": markup})
    if status != 200:
        raise BadRequest(body["description"])
    return body


async def test_keyboard_shape(world):
    emu, _, _, group = world
    with pytest.raises(BadRequest, match="(?i)reply markup is too long"):
        await raw_send(
            emu, group.id, {"inline_keyboard": [[{"text": str(i), "callback_data": str(i)}] for i in range(101)]}
        )
    await raw_send(
        emu, group.id, {"inline_keyboard": [[{"text": str(i), "callback_data": str(i)}] for i in range(100)]}
    )
    with pytest.raises(BadRequest, match="(?i)Text buttons are unallowed"):
        await raw_send(emu, group.id, {"inline_keyboard": [[{"text": "a"}]]})
    with pytest.raises(BadRequest, match="(?i)exactly one"):
        await raw_send(
            emu, group.id, {"inline_keyboard": [[{"text": "a", "callback_data": "a", "url": "https://x.org"}]]}
        )
    with pytest.raises(BadRequest, match="(?i)Wrong HTTP URL"):
        await raw_send(emu, group.id, {"inline_keyboard": [[{"text": "a", "url": "nope"}]]})
    for url in ("https://t.me/cheat_test_bot?start=x", "tg://user?id=1", "t.me/x"):
        await raw_send(emu, group.id, {"inline_keyboard": [[{"text": "a", "url": url}]]})


async def test_text_length_after_parsing(bot, world):
    emu, _, _, group = world
    await bot.send_message(group.id, "<b>" + "я" * 4096 + "</b>", parse_mode="HTML")
    with pytest.raises(BadRequest, match="(?i)^Message is too long$"):
        await bot.send_message(group.id, "я" * 4097)
    with pytest.raises(BadRequest, match="(?i)Message text is empty"):
        await bot.send_message(group.id, "<b> </b>", parse_mode="HTML")
    with pytest.raises(BadRequest, match="(?i)Message text is empty"):
        await raw(emu, "sendMessage", json={"chat_id": group.id, "text": ""}) and (_ for _ in ()).throw(
            BadRequest("Message text is empty")
        )
    assert emu.errors[-1]["description"] == "Bad Request: message text is empty"


async def test_html_errors(bot, world):
    emu, _, _, group = world
    with pytest.raises(BadRequest, match='(?i)Unsupported start tag "br" at byte offset 2'):
        await bot.send_message(group.id, "a <br> b", parse_mode="HTML")
    with pytest.raises(BadRequest, match="(?i)Can't find end tag"):
        await bot.send_message(group.id, "<b>a", parse_mode="HTML")
    assert emu.errors[-1]["description"] == (
        "Bad Request: can't parse entities: Can't find end tag corresponding to start tag \"b\""
    )
    msg = await bot.send_message(group.id, "1 &lt; 2", parse_mode="HTML")
    assert msg.text == "1 < 2"
    rec = emu.last_message(group.id)
    assert rec.text == "1 < 2" and rec.html == "1 &lt; 2"


# -------------------------------------------------------------- private chats
async def test_private_needs_start_and_block(bot, world):
    emu, alice, _, _ = world
    with pytest.raises(Forbidden, match="(?i)bot can't initiate conversation with a user"):
        await bot.send_message(alice.id, "hi")
    await alice.start_bot("g100")
    await bot.send_message(alice.id, "hi")
    alice.block_bot()
    with pytest.raises(Forbidden, match="(?i)bot was blocked by the user"):
        await bot.send_message(alice.id, "hi")
    await alice.start_bot()
    await bot.send_message(alice.id, "again")
    kinds = [next(k for k in u if k != "update_id") for u in emu.pending_updates]
    assert kinds == ["message", "my_chat_member", "my_chat_member", "message"]
    assert emu.pending_updates[0]["message"]["text"] == "/start g100"
    assert emu.pending_updates[0]["message"]["entities"] == [{"type": "bot_command", "offset": 0, "length": 6}]
    assert [m.text for m in emu.chat_messages(alice, from_bot=True)] == ["hi", "again"]


async def test_private_message_starts_chat(bot, world):
    emu, alice, _, _ = world
    await alice.send(alice, "hello")
    await bot.send_message(alice.id, "hi")


async def test_unknown_chat(bot):
    with pytest.raises(BadRequest, match="(?i)Chat not found"):
        await bot.send_message(-5, "x")


# --------------------------------------------------------------------- edits
async def test_edits(bot, world):
    emu, alice, _, group = world
    m = await bot.send_message(group.id, "one", reply_markup=kb([("A", "a")]))
    edited = await bot.edit_message_text("two", group.id, m.message_id, reply_markup=kb([("B", "b")]))
    assert isinstance(edited, telegram.Message) and edited.text == "two"
    with pytest.raises(BadRequest, match="(?i)Message is not modified"):
        await bot.edit_message_text("two", group.id, m.message_id, reply_markup=kb([("B", "b")]))
    assert emu.errors[-1]["description"] == NOT_MODIFIED
    edited = await bot.edit_message_reply_markup(group.id, m.message_id, reply_markup=kb([("C", "c")]))
    assert edited.reply_markup.inline_keyboard[0][0].text == "C"
    await bot.edit_message_text("three", group.id, m.message_id)  # drops the keyboard
    rec = emu.last_message(group.id)
    assert rec.buttons == [] and rec.edited_count == 3 and rec.text == "three"
    with pytest.raises(BadRequest, match="(?i)Message to edit not found"):
        await bot.edit_message_text("x", group.id, 999)
    await alice.send(group, "/cmd")
    user_msg = emu.last_message(group.id, from_bot=False)
    with pytest.raises(BadRequest, match="(?i)Message can't be edited"):
        await bot.edit_message_text("x", group.id, user_msg.message_id)
    assert await bot.delete_message(group.id, m.message_id) is True
    with pytest.raises(BadRequest, match="(?i)Message to delete not found"):
        await bot.delete_message(group.id, m.message_id)
    with pytest.raises(BadRequest, match="(?i)Message to edit not found"):
        await bot.edit_message_text("x", group.id, m.message_id)
    with pytest.raises(BadRequest, match="(?i)Message can't be deleted"):
        await bot.delete_message(group.id, user_msg.message_id)
    assert [r.message_id for r in emu.chat_messages(group.id, include_deleted=True)] == [1, 2]
    assert [r.message_id for r in emu.chat_messages(group.id)] == [2]


# ------------------------------------------------------------- callback queries
async def test_tap_and_answer(bot, world):
    emu, alice, _, group = world
    await bot.send_message(group.id, "pick", reply_markup=kb([("Да", "y"), ("Нет", "n")]))
    msg = emu.last_message(group.id)
    tap = await alice.tap(msg, "Нет")
    ups = await bot.get_updates()
    q = ups[-1].callback_query
    assert q.data == "n" and q.from_user.id == alice.id and q.message.message_id == 1
    assert q.chat_instance and q.message.chat.id == group.id
    await q.answer("ok", show_alert=True)
    assert await tap == {"callback_query_id": q.id, "text": "ok", "show_alert": True}
    with pytest.raises(BadRequest, match="(?i)Query is too old"):
        await q.answer("again")
    assert emu.errors[-1]["description"] == QUERY_TOO_OLD
    with pytest.raises(LookupError):
        await alice.tap(msg, "Maybe")
    forged = await alice.tap(msg, "old:data", strict=False)
    assert forged.data == "old:data"


async def test_tap_by_data_and_dict(world):
    emu, alice, _, group = world
    await raw_send(
        emu,
        group.id,
        {"inline_keyboard": [[{"text": "A", "callback_data": "a"}, {"text": "U", "url": "https://x.org"}]]},
    )
    msg = emu.last_message(group.id)
    assert (await alice.tap(msg, "a")).data == "a"
    assert (await alice.tap((group.id, msg.message_id), {"text": "A", "callback_data": "a"})).data == "a"
    with pytest.raises(ValueError):
        await alice.tap(msg, "U")
    msg.deleted = True
    with pytest.raises(ValueError):
        await alice.tap(msg, "a")


async def test_answer_timeout_and_url():
    clock = Clock()
    async with BotAPIEmulator(query_timeout=15, clock=clock) as emu:
        alice = emu.add_user(1, "A")
        await alice.start_bot()
        await raw_send(emu, alice.id, {"inline_keyboard": [[{"text": "A", "callback_data": "a"}]]})
        t1 = await alice.tap(emu.last_message(alice), "a")
        t2 = await alice.tap(emu.last_message(alice), "a")
        status, body = await raw(
            emu, "answerCallbackQuery", json={"callback_query_id": t1.query_id, "url": "https://example.org"}
        )
        assert (status, body["description"]) == (400, "Bad Request: URL_INVALID")
        status, _ = await raw(emu, "answerCallbackQuery", json={"callback_query_id": t1.query_id, "text": "x" * 201})
        assert status == 400
        status, _ = await raw(
            emu,
            "answerCallbackQuery",
            json={"callback_query_id": t1.query_id, "url": "https://t.me/cheat_test_bot?start=g-100"},
        )
        assert status == 200 and t1.answered["url"].endswith("g-100")
        clock.t += 15.5
        status, body = await raw(emu, "answerCallbackQuery", json={"callback_query_id": t2.query_id})
        assert (status, body["description"]) == (400, QUERY_TOO_OLD)
        with pytest.raises(TimeoutError):
            await emu.wait_answer(t2.query_id, timeout=0.05)


# -------------------------------------------------------------------- updates
async def test_long_polling_offsets(bot, world):
    emu, alice, _, group = world
    poll = asyncio.create_task(bot.get_updates(timeout=5))
    await asyncio.sleep(0.05)
    uid = await alice.send(group, "/newgame@cheat_test_bot")
    ups = await asyncio.wait_for(poll, 2)
    assert [u.update_id for u in ups] == [uid]
    assert ups[0].message.entities[0].length == len("/newgame@cheat_test_bot")
    assert [u.update_id for u in await bot.get_updates()] == [uid]  # not acknowledged yet
    assert await bot.get_updates(offset=uid + 1) == ()
    assert emu.pending_updates == []
    emu.redeliver(uid)
    assert [u.update_id for u in await bot.get_updates(offset=uid + 1)] == [uid]
    assert await bot.get_updates(offset=uid + 1) == ()


async def test_negative_offset_and_limit(bot, world):
    emu, alice, _, _ = world
    ids = [await alice.send(alice, f"m{i}") for i in range(5)]
    assert [u.update_id for u in await bot.get_updates(limit=2)] == ids[:2]
    assert [u.update_id for u in await bot.get_updates(offset=-2)] == ids[3:]
    assert [u.update_id for u in await bot.get_updates()] == ids[3:]


async def test_second_poller_conflicts(bot, world):
    emu, alice, _, _ = world
    first = asyncio.create_task(bot.get_updates(timeout=5))
    await asyncio.sleep(0.05)
    # another process (PTB's own get_updates connection pool has a single connection)
    second = asyncio.create_task(raw(emu, "getUpdates", json={"timeout": 5}))
    with pytest.raises(Conflict, match="(?i)terminated by other getUpdates request"):
        await asyncio.wait_for(first, 2)
    await alice.send(alice, "hi")
    status, body = await asyncio.wait_for(second, 2)
    assert status == 200 and len(body["result"]) == 1


async def test_webhook_blocks_polling(bot, emu):
    await bot.set_webhook("https://example.org/hook", secret_token="s")
    assert (await bot.get_webhook_info()).url == "https://example.org/hook"
    with pytest.raises(Conflict, match="(?i)webhook is active"):
        await bot.get_updates()
    with pytest.raises(BadRequest, match="(?i)HTTPS URL must be provided"):
        await bot.set_webhook("http://example.org/hook")
    await bot.delete_webhook(drop_pending_updates=True)
    assert await bot.get_updates() == ()


async def test_allowed_updates_and_member_events(bot, world):
    emu, alice, bob, group = world
    group.bot_status = "administrator"  # chat_member updates go to admin bots only
    await emu.user_left(group, bob)
    ups = await bot.get_updates()
    assert [u.message.left_chat_member.id for u in ups] == [bob.id]  # chat_member dropped
    await emu.user_joined(group, bob)
    ups = await bot.get_updates(offset=ups[-1].update_id + 1, allowed_updates=["message", "chat_member"])
    assert ups[0].chat_member.new_chat_member.status == "member"
    assert ups[1].message.new_chat_members[0].id == bob.id


async def test_removed_members_are_no_members(bot, emu):
    """An admin removes a member: banned ("kicked") from a supergroup, "left" a basic group;
    they can no longer write there, getChatMember says so, the bot hears it (chat_member for
    an admin bot, the left_chat_member message from the admin), and adding them back lifts it."""
    alice, bob, carol = emu.add_user(1001, "Алиса"), emu.add_user(1002, "Bob"), emu.add_user(1003, "Carol")
    group = emu.add_group(-100, "Cards", members=[bob, carol], admins=[alice])
    forum = emu.add_group(
        -1001, "Forum", members=[bob, carol], admins=[alice], is_forum=True, bot_status="administrator"
    )
    await emu.remove_user(group, bob)
    assert (await bot.get_chat_member(group.id, bob.id)).status == "left"
    with pytest.raises(ValueError, match="not a member"):
        await bob.send(group, "/start_game")
    await emu.remove_user(forum, bob, by=alice)
    assert (await bot.get_chat_member(forum.id, bob.id)).status == "kicked"
    with pytest.raises(ValueError, match="not a member"):
        await bob.send(forum, "/start_game")
    with pytest.raises(ValueError, match="admin"):
        await emu.remove_user(forum, alice, by=carol)
    ups = await bot.get_updates(allowed_updates=["message", "chat_member"])
    assert [u.message.left_chat_member.id for u in ups if u.message] == [bob.id, bob.id]
    assert [u.message.from_user.id for u in ups if u.message] == [alice.id, alice.id]
    member = [u.chat_member for u in ups if u.chat_member]
    assert [(m.chat.id, m.from_user.id, m.new_chat_member.status) for m in member] == [(forum.id, alice.id, "kicked")]
    assert await emu.remove_user(forum, carol, notify=False) is None  # the bot never hears of it
    assert (await bot.get_chat_member(forum.id, carol.id)).status == "kicked"
    await emu.user_joined(forum, bob)
    assert (await bot.get_chat_member(forum.id, bob.id)).status == "member"
    # hidden members: a bot that is no admin may not ask about others
    forum.hidden_members, forum.bot_status = True, "member"
    with pytest.raises(BadRequest, match="(?i)chat_admin_required"):
        await bot.get_chat_member(forum.id, bob.id)
    assert (await bot.get_chat_member(forum.id, emu.bot_id)).status == "member"


async def test_privacy_mode(bot, world):
    emu, alice, bob, group = world
    assert await alice.send(group, "hello") is None
    assert await alice.send(group, "/cmd@other_bot") is None
    assert await alice.send(group, "/cmd") is not None
    m = await bot.send_message(group.id, "bot says")
    rec = emu.last_message(group.id)
    assert await bob.send(group, "a reply", reply_to=rec) is not None
    ups = await bot.get_updates()
    assert ups[-1].message.reply_to_message.message_id == m.message_id
    assert len(emu.chat_messages(group, from_bot=False)) == 4


async def test_migration(bot, world):
    emu, alice, _, group = world
    new = await emu.migrate_group(group, -1009999)
    ups = await bot.get_updates()
    assert ups[0].message.migrate_to_chat_id == -1009999
    assert ups[1].message.migrate_from_chat_id == group.id
    assert ups[1].message.chat.type == "supergroup"
    with pytest.raises(ChatMigrated) as exc:
        await bot.send_message(group.id, "x")
    assert exc.value.new_chat_id == new.id
    assert emu.errors[-1]["parameters"] == {"migrate_to_chat_id": -1009999}
    await bot.send_message(new.id, "moved")


async def test_kick_and_readd(bot, world):
    emu, alice, _, group = world
    await emu.remove_bot(group)
    with pytest.raises(Forbidden, match="(?i)bot was kicked from the group chat"):
        await bot.send_message(group.id, "x")
    emu.add_bot(group)
    await bot.send_message(group.id, "back")
    ups = await bot.get_updates()
    assert ups[0].my_chat_member.new_chat_member.status == "left"
    assert ups[1].my_chat_member.new_chat_member.status == "member"
    assert ups[2].message.new_chat_members[0].id == emu.bot_id


async def test_lost_write_rights_answer_400_without_updates(bot, emu):
    """A restricted bot, a read-only group, a deleted chat: 400 with Telegram's texts (the
    brief's "not enough rights…", "have no rights…", "chat not found"), not 403."""
    alice = emu.add_user(1, "A")
    sup = emu.add_group(-1001, "Super", members=[alice], admins=[alice], supergroup=True)
    basic = emu.add_group(-2, "Basic", members=[alice], admins=[alice])
    board = await bot.send_message(sup.id, "board")
    await emu.restrict_bot(sup, notify=False)
    with pytest.raises(BadRequest, match="(?i)not enough rights to send text messages to the chat"):
        await bot.send_message(sup.id, "x")
    with pytest.raises(BadRequest, match="(?i)have no rights to send a message"):
        await bot.edit_message_text("edited", chat_id=sup.id, message_id=board.message_id)
    with pytest.raises(BadRequest, match="(?i)not enough rights to send documents"):
        await bot.send_document(sup.id, b"{}", filename="r.json")
    assert await bot.delete_message(sup.id, board.message_id)  # its own messages: still
    assert [e["error_code"] for e in emu.errors] == [400, 400, 400]
    await emu.unrestrict_bot(sup)
    await bot.send_message(sup.id, "back")
    # a read-only basic group: members (the bot too) may not write, an admin bot may
    emu.set_read_only(basic)
    with pytest.raises(BadRequest, match="(?i)have no rights to send a message"):
        await bot.send_message(basic.id, "x")
    with pytest.raises(ValueError):
        await emu.add_user(2, "B").send(basic, "/board")  # (not even a member)
    basic.bot_status = "administrator"
    await bot.send_message(basic.id, "admins may")
    basic.bot_status = "member"
    emu.set_read_only(basic, False)
    await bot.send_message(basic.id, "writable again")
    # a deleted group: every call answers 400 chat not found
    emu.delete_chat(basic)
    with pytest.raises(BadRequest, match="(?i)chat not found"):
        await bot.send_message(basic.id, "x")
    with pytest.raises(BadRequest, match="(?i)chat not found"):
        await bot.get_chat(basic.id)
    ups = await bot.get_updates()
    assert [u.my_chat_member.new_chat_member.status for u in ups if u.my_chat_member] == ["member"]


async def test_closed_and_deleted_topics(bot, emu):
    alice = emu.add_user(1, "A")
    bob = emu.add_user(2, "B")
    forum = emu.add_group(-1001, "Forum", members=[alice, bob], admins=[alice], is_forum=True)
    tid = await emu.create_topic(forum, "Game")
    m = await bot.send_message(forum.id, "board", message_thread_id=tid)
    await emu.close_topic(forum, tid)
    with pytest.raises(BadRequest, match="(?i)topic_closed"):
        await bot.send_message(forum.id, "x", message_thread_id=tid)
    with pytest.raises(ValueError):
        await bob.send(forum, "hi", thread_id=tid)
    await alice.send(forum, "admins may", thread_id=tid)
    await bot.send_message(forum.id, "General is open")
    await emu.close_topic(forum, tid, closed=False)
    await bot.send_message(forum.id, "reopened", message_thread_id=tid)
    kinds = [
        k
        for u in await bot.get_updates()
        if u.message
        for k in ("forum_topic_closed", "forum_topic_reopened")
        if getattr(u.message, k)
    ]
    assert kinds == ["forum_topic_closed", "forum_topic_reopened"]
    emu.delete_topic(forum, tid)
    with pytest.raises(BadRequest, match="(?i)message thread not found"):
        await bot.send_message(forum.id, "x", message_thread_id=tid)
    with pytest.raises(BadRequest, match="(?i)message to edit not found"):
        await bot.edit_message_text("y", chat_id=forum.id, message_id=m.message_id)


async def test_forum_topics(bot, emu):
    alice = emu.add_user(1, "A")
    forum = emu.add_group(-1001, "Forum", members=[alice], admins=[alice], is_forum=True)
    tid = await emu.create_topic(forum, "Game")
    await alice.send(forum, "/play", thread_id=tid)
    ups = await bot.get_updates()
    assert ups[-1].message.is_topic_message and ups[-1].message.message_thread_id == tid
    m = await bot.send_message(forum.id, "in topic", message_thread_id=tid)
    assert m.message_thread_id == tid and emu.last_message(forum).thread_id == tid
    with pytest.raises(BadRequest, match="(?i)Message thread not found"):
        await bot.send_message(forum.id, "x", message_thread_id=999)


# ------------------------------------------------------------------ rate limits
async def test_group_rate_limit():
    clock = Clock()
    async with BotAPIEmulator(group_rate=3, group_window=6, clock=clock) as emu:
        g = emu.add_group(-1, "G")
        for i in range(3):
            status, _ = await raw(emu, "sendMessage", json={"chat_id": -1, "text": str(i)})
            assert status == 200
            clock.t += 1
        status, body = await raw(emu, "sendMessage", json={"chat_id": -1, "text": "x"})
        assert status == 429 and body == {
            "ok": False,
            "error_code": 429,
            "description": "Too Many Requests: retry after 3",
            "parameters": {"retry_after": 3},
        }
        status, _ = await raw(emu, "editMessageText", json={"chat_id": -1, "message_id": 1, "text": "e"})
        assert status == 429  # edits count like sends
        status, _ = await raw(emu, "sendChatAction", json={"chat_id": -1, "action": "typing"})
        assert status == 200
        clock.t += 3.01
        status, _ = await raw(emu, "sendMessage", json={"chat_id": -1, "text": "x"})
        assert status == 200
        assert emu.chat_messages(g)[-1].text == "x"


async def test_global_and_private_rate():
    clock = Clock()
    async with BotAPIEmulator(global_rate=2, private_rate=1, clock=clock) as emu:
        a, b, c = (emu.add_user(i, str(i)) for i in (1, 2, 3))
        for u in (a, b, c):
            await u.start_bot()
        assert (await raw(emu, "sendMessage", json={"chat_id": 1, "text": "x"}))[0] == 200
        assert (await raw(emu, "sendMessage", json={"chat_id": 1, "text": "x"}))[0] == 429
        assert (await raw(emu, "sendMessage", json={"chat_id": 2, "text": "x"}))[0] == 200
        assert (await raw(emu, "sendMessage", json={"chat_id": 3, "text": "x"}))[0] == 429
        assert (await raw(emu, "getChat", json={"chat_id": 3}))[0] == 200
        clock.t += 1.0
        assert (await raw(emu, "sendMessage", json={"chat_id": 3, "text": "x"}))[0] == 200


async def test_ptb_sees_retry_after():
    async with BotAPIEmulator(group_rate=1, group_window=30) as emu:
        emu.add_group(-1, "G")
        async with telegram.Bot(emu.token, base_url=emu.base_url) as bot:
            await bot.send_message(-1, "a")
            with pytest.raises(RetryAfter) as exc:
                await bot.send_message(-1, "b")
            assert emu.errors[-1]["parameters"] == {"retry_after": 30}


# ------------------------------------------------------------------- the rest
async def test_documents_and_chat_info(bot, world):
    emu, alice, bob, group = world
    m = await bot.send_document(group.id, b"log bytes", filename="game.txt", caption="<i>Log</i>", parse_mode="HTML")
    assert m.document.file_name == "game.txt" and m.caption == "Log"
    rec = emu.last_message(group)
    assert rec.file.data == b"log bytes" and rec.document["file_name"] == "game.txt"
    assert (await bot.get_chat(alice.id)).first_name == "Алиса"
    assert (await bot.get_chat_member(group.id, alice.id)).status == "creator"
    assert (await bot.get_chat_member(group.id, bob.id)).status == "member"
    assert (await bot.get_chat_member(group.id, emu.bot_id)).status == "member"
    assert [a.user.id for a in await bot.get_chat_administrators(group.id)] == [alice.id]
    assert await bot.send_chat_action(group.id, "typing") is True


async def test_commands_menu_and_generic(bot, emu):
    await bot.set_my_commands([("start", "Начать")], language_code="ru")
    await bot.set_my_commands([("start", "Start")], scope=telegram.BotCommandScopeAllGroupChats())
    assert [c.description for c in await bot.get_my_commands(language_code="ru")] == ["Начать"]
    assert await bot.get_my_commands() == ()
    assert await bot.delete_my_commands(language_code="ru") is True
    assert await bot.get_my_commands(language_code="ru") == ()
    with pytest.raises(BadRequest, match="(?i)BOT_COMMAND_INVALID"):
        await bot.set_my_commands([("Start!", "x")])
    assert await bot.set_chat_menu_button(menu_button=telegram.MenuButtonCommands()) is True
    emu.add_group(-7, "G")
    assert await bot.pin_chat_message(-7, 1) is True
    assert emu.unmodelled[-1]["method"] == "pinChatMessage"


async def test_wait_for_and_calls_by(bot, world):
    emu, alice, _, group = world

    async def later():
        await asyncio.sleep(0.05)
        await bot.send_message(group.id, "done")

    task = asyncio.create_task(later())
    rec = await emu.wait_message(group.id, lambda m: m.text == "done", timeout=2)
    assert rec["text"] == "done"
    await task
    assert len(emu.calls_by("sendMessage", group)) == 1
    assert emu.calls_by("sendMessage", group.id)[0]["ok"] is True
    with pytest.raises(TimeoutError):
        await emu.wait_for(lambda: False, timeout=0.05)


async def test_real_telegram_group_limit(bot, world):
    """With the default (Telegram's) limits: 20 messages a minute to one group."""
    emu, _, _, group = world
    for i in range(20):
        await bot.send_message(group.id, str(i))
    with pytest.raises(RetryAfter):
        await bot.send_message(group.id, "21st")
    assert 59 <= emu.errors[-1]["parameters"]["retry_after"] <= 60


async def test_control_api():
    async with BotAPIEmulator(control=True) as emu:
        root = emu.base_url[: -len("/bot")]
        async with httpx.AsyncClient() as c:
            assert (await c.post(f"{root}/_sim/user", json={"id": 5, "first_name": "E"})).json()["ok"]
            r = await c.post(f"{root}/_sim/start", json={"user": 5, "payload": "p"})
            assert r.json()["result"] == 1
            r = await c.post(
                f"{emu.base_url}{emu.token}/sendMessage",
                json={
                    "chat_id": 5,
                    "text": "hi",
                    "reply_markup": {"inline_keyboard": [[{"text": "A", "callback_data": "a"}]]},
                },
            )
            mid = r.json()["result"]["message_id"]
            r = await c.post(f"{root}/_sim/tap", json={"user": 5, "chat": 5, "message_id": mid, "button": "A"})
            assert r.json()["result"]["query_id"]
            r = await c.get(f"{root}/_sim/messages", params={"chat_id": 5})
            assert [m["text"] for m in r.json()["result"]] == ["/start p", "hi"]
