"""A full game's transcript: every message, edit and tap answer the bot sends, in order.

    python -m tests.transcript --lang ru --variant russian      # or en / fr / it, classic
    python -m tests.transcript --lang fr --variant classic --seed 3 > fr-classic.txt

Runs the real bot (``tgbot.handlers.app``, in-process, on the embedded ``memory://`` store) against the
Bot API emulator (:mod:`tests.fakes.botapi`), so what is printed is exactly what Telegram would
have been asked to show, after the emulator's HTML parsing: ``<tg-time>`` entities are shown as
``[time: <format> <unix> | <fallback>]``, bold as ``*…*``, buttons as ``[label]`` (``{style}``
after a coloured one), one row per line. Users' actions (commands, taps) are printed with
``>>``. The game: three people (Алиса, Борис, Вера; their Telegram in the chosen language) and
one AI seat; the group's language and the variant are chosen with the bot's own buttons; Борис
lets his first two turns run out (automatic moves, the AI takes his seat, he takes it back),
Вера leaves with /leave midway; the rest play seeded random moves (picks, claims, «Не верю!»,
«Верю»); then /board, /stats, /top, /settings, /rules and /help. A short turn timer
(``--turn``, seconds) keeps it quick.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
from typing import Any

from tests.fakes.botapi import BotAPIEmulator, MessageRecord, SimUser
from tests.fakes.html import parse_html
from tests.tgbot.live import Live
from tgbot.i18n import LANGUAGE_NAMES, LANGUAGES, translator

GROUP = -100777
SHOWN = {
    "sendMessage",
    "editMessageText",
    "editMessageReplyMarkup",
    "answerCallbackQuery",
    "deleteMessage",
    "sendDocument",
}


class Transcript:
    def __init__(self, emu: BotAPIEmulator, out=sys.stdout) -> None:
        self.emu = emu
        self.out = out
        self.seen = 0
        self.names: dict[int, str] = {GROUP: "GROUP"}

    def who(self, chat_id: Any) -> str:
        try:
            cid = int(chat_id)
        except (TypeError, ValueError):
            return str(chat_id)
        return self.names.get(cid, str(cid))

    def action(self, user: SimUser, what: str) -> None:
        self.flush()
        print(f"\n>> {user.first_name}: {what}", file=self.out)

    def flush(self) -> None:
        calls = self.emu.calls[self.seen :]
        self.seen += len(calls)
        for c in calls:
            if c["method"] in SHOWN:
                self.show(c)

    def show(self, c: dict) -> None:
        m, p = c["method"], c["params"]
        status = "" if c["ok"] else f"  !! REFUSED {c.get('error_code')}: {c.get('description')}"
        if m == "answerCallbackQuery":
            text = p.get("text") or "(no text)"
            print(f"   tap answer: {text}{status}", file=self.out)
            return
        if m == "deleteMessage":
            print(f"-- delete in {self.who(p.get('chat_id'))} #{p.get('message_id')}{status}", file=self.out)
            return
        head = {
            "sendMessage": "NEW",
            "editMessageText": "EDIT",
            "editMessageReplyMarkup": "EDIT KEYBOARD",
            "sendDocument": "FILE",
        }[m]
        where = self.who(p.get("chat_id"))
        mid = (
            f" #{p['message_id']}"
            if "message_id" in p
            else (
                f" #{c['result']['message_id']}"
                if isinstance(c.get("result"), dict) and "message_id" in c["result"]
                else ""
            )
        )
        print(f"\n== {head} {where}{mid}{status}", file=self.out)
        if m == "sendDocument":
            print(f"   {p.get('caption') or ''}", file=self.out)
        text = p.get("text")
        if text is not None:
            print(_indent(_render(text, p.get("parse_mode"))), file=self.out)
        markup = p.get("reply_markup")
        if isinstance(markup, dict):
            for row in markup.get("inline_keyboard", []):
                print("   " + "  ".join(_button(b) for b in row), file=self.out)


def _indent(text: str) -> str:
    return "\n".join("   " + line for line in text.split("\n"))


def _button(b: dict) -> str:
    style = f"{{{b['style']}}}" if b.get("style") else ""
    link = " ↗" if "url" in b else ""
    return f"[{b['text']}]{style}{link}"


def _render(text: str, parse_mode: str | None) -> str:
    """Telegram's view of an HTML text: plain text with bold as *…* and date-time entities
    spelled out (no client here to show them in a reader's time)."""
    if (parse_mode or "").lower() != "html":
        return text
    plain, ents = parse_html(text)
    u16 = plain.encode("utf-16-le")
    marks: list[tuple[int, int, str]] = []  # (utf-16 offset, order, text)
    for e in ents:
        if e["type"] == "bold":
            marks += [(e["offset"], 1, "*"), (e["offset"] + e["length"], 0, "*")]
        elif e["type"] == "date_time":
            marks += [
                (e["offset"], 1, f"[time: {e.get('date_time_format', '')} {e['unix_time']} | "),
                (e["offset"] + e["length"], 0, "]"),
            ]
    out, last = [], 0
    for off, _, mark in sorted(marks):
        out.append(u16[2 * last : 2 * off].decode("utf-16-le"))
        out.append(mark)
        last = off
    out.append(u16[2 * last :].decode("utf-16-le"))
    return "".join(out)


def _cb(msg: MessageRecord | None, prefix: str) -> list[dict]:
    if msg is None:
        return []
    return [b for b in msg.flat_buttons if b.get("callback_data", "").startswith(prefix)]


#: Steps of the play loop at most (a human's move, or a wait for the AI's): a classic game of three
#: players and an AI seat takes up to a few hundred plays, and the loop stops at the game's end.
MAX_STEPS = 5000


async def run(lang: str, variant: str, seed: int, turn: float, out=sys.stdout) -> None:
    rng = random.Random(seed)
    emu = BotAPIEmulator(group_window=1.0)
    await emu.start()
    alice = emu.add_user(1001, "Алиса", language_code=lang)
    boris = emu.add_user(1002, "Борис", language_code=lang)
    vera = emu.add_user(1003, "Вера", language_code=lang)
    users = {u.id: u for u in (alice, boris, vera)}
    group = emu.add_group(GROUP, "Клуб настолок", members=[alice, boris, vera], admins=[alice])
    t = Transcript(emu, out)
    t.names.update({u.id: f"{u.first_name} (private)" for u in users.values()})
    live = await Live(emu, "memory://", TURN_TIMEOUT=turn, AI_PAUSE_MIN=0.2, AI_PAUSE_MAX=0.4).start()
    app = live.app
    settle = live.settle

    async def say(user: SimUser, chat: Any, text: str) -> None:
        t.action(user, text + ("" if chat is group else "  (private chat)"))
        await user.send(chat, text)
        await settle()

    async def tap(user: SimUser, msg: MessageRecord, button: dict | str) -> None:
        label = button if isinstance(button, str) else button["text"]
        t.action(user, f"taps [{label}]")
        await (await user.tap(msg, button)).answer(15)
        await settle()

    try:
        for u in users.values():
            t.action(u, "/start  (private chat)")
            await u.start_bot()
            await settle()
        if lang != "ru":
            await say(alice, group, "/language")
            menu = emu.last_message(group.id, lambda m: m.from_bot and _cb(m, "g:"))
            await tap(alice, menu, translator(lang).t(LANGUAGE_NAMES[lang]))
        await say(alice, group, "/start_game")
        lobby = emu.last_message(group.id, lambda m: m.from_bot and _cb(m, "j:"))
        gid = _cb(lobby, "j:")[0]["callback_data"][2:]
        for u in (boris, vera):
            await tap(u, lobby, _cb(lobby, "j:")[0])
        await tap(alice, lobby, _cb(lobby, "a:")[0])  # an AI seat
        if variant == "classic":
            await tap(alice, lobby, _cb(lobby, "v:")[0])
        await tap(alice, lobby, _cb(lobby, "s:")[0])
        store = app.bot_data["services"].store

        def panel(u: SimUser) -> MessageRecord | None:
            for m in reversed(emu.chat_messages(u.id, from_bot=True)):
                if any(gid in b.get("callback_data", "") for b in m.flat_buttons):
                    return m
            return None

        skipped = 0
        left = False
        for _ in range(MAX_STEPS):
            table = await store.load(gid)
            if table.state is None or table.state.result is not None or table.status.name != "PLAYING":
                break
            seat = table.state.current
            uid = table.seats[seat].user_id
            u = users.get(uid)
            if u is None or table.seats[seat].by_ai:
                await asyncio.sleep(0.3)
                await settle()
                continue
            if u is boris and skipped < 2:  # lets the timer run out twice: automatic moves, then the AI
                skipped += 1
                t.action(u, "(does nothing: the turn's time runs out)")
                await asyncio.sleep(turn + 1.5)
                await settle()
                if skipped == 2:
                    await asyncio.sleep(turn)
                    await settle()
                    p = panel(boris)
                    if _cb(p, "t:"):
                        await tap(boris, p, _cb(p, "t:")[0])
                continue
            if u is vera and not left and table.state.plays >= 12:
                left = True
                await say(vera, group, "/leave")
                ask = emu.last_message(group.id, lambda m: m.from_bot and _cb(m, "q:"))
                if ask is not None:
                    await tap(vera, ask, _cb(ask, "q:")[0])
                continue
            p = panel(u)
            if p is None:
                await settle()
                continue
            answer = _cb(p, "b:") + _cb(p, "c:")
            if _cb(p, "b:"):
                await tap(u, p, rng.choice(answer))
                continue
            if _cb(p, "c:") and rng.random() < 0.25:
                await tap(u, p, _cb(p, "c:")[0])
                continue
            picks = _cb(p, "k:")
            for _ in range(rng.choice((1, 1, 2, 3))):
                picks = _cb(p, "k:")
                if not picks:
                    break
                await tap(u, p, rng.choice(picks))
                p = panel(u) or p
            plays = _cb(p, "p:")
            if not plays:
                continue
            if len(plays) > 1 and rng.random() < 0.5:  # an opener names a rank: sometimes the one held, sometimes not
                await tap(u, p, rng.choice(plays))
            else:
                await tap(u, p, plays[0])
        await asyncio.sleep(1)
        await settle()
        await say(alice, group, "/board")
        await say(boris, group, "/stats")
        await say(alice, group, "/top")
        await say(alice, group, "/settings")
        menu = emu.last_message(group.id, lambda m: m.from_bot and _cb(m, "e:"))
        if menu is not None:
            await tap(alice, menu, _cb(menu, "e:")[2])
        await say(vera, group, "/rules")
        await say(vera, group, "/help")
        t.flush()
        if emu.violations:
            print("\n!! emulator violations:", *emu.violations, sep="\n   ", file=out)
    finally:
        await live.stop()
        await emu.stop()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m tests.transcript", description=__doc__.split("\n\n")[0])
    ap.add_argument("--lang", choices=LANGUAGES, default="ru")
    ap.add_argument("--variant", choices=("russian", "classic"), default="russian")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--turn", type=float, default=4.0, help="seconds per turn (short, so the timer's texts show quickly)"
    )
    args = ap.parse_args(argv)
    asyncio.run(run(args.lang, args.variant, args.seed, args.turn))


if __name__ == "__main__":
    main()
