"""A real PTB Application polling the emulator, driven by simulated users."""

import html

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.constants import ParseMode
from telegram.ext import Application, CallbackQueryHandler, CommandHandler, ContextTypes, Defaults


async def test_application_polling_roundtrip(emu):
    alice = emu.add_user(1001, "<Алиса>")
    group = emu.add_group(-100, "Cards", members=[alice])

    async def newgame(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        name = html.escape(update.effective_user.first_name)
        await update.effective_chat.send_message(
            f"<b>{name}</b> starts a game",
            reply_markup=InlineKeyboardMarkup([[InlineKeyboardButton("Join", callback_data="join")]]),
        )

    async def join(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        await update.callback_query.answer("joined")
        await update.callback_query.edit_message_text("game on")

    app = (
        Application.builder()
        .token(emu.token)
        .base_url(emu.base_url)
        .defaults(Defaults(parse_mode=ParseMode.HTML))
        .build()
    )
    app.add_handler(CommandHandler("newgame", newgame))
    app.add_handler(CallbackQueryHandler(join))
    async with app:
        await app.start()
        await app.updater.start_polling(poll_interval=0, timeout=1)
        try:
            await alice.send(group, "/newgame@cheat_test_bot")
            msg = await emu.wait_message(group, lambda m: m.buttons, timeout=5)
            assert msg.text == "<Алиса> starts a game"
            answer = await (await alice.tap(msg, "Join"))
            assert answer["text"] == "joined"
            await emu.wait_for(lambda: msg.text == "game on", timeout=5)
        finally:
            await app.updater.stop()
            await app.stop()
    assert emu.violations == []
    assert emu.calls_by("deleteWebhook") and emu.calls_by("getMe")
