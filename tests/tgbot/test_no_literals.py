"""No user-facing string literal in tgbot/: every text comes from the catalogs.

An AST scan of every module in tgbot/: a string constant is user-facing when it is passed to a
call that sends or shows something to Telegram users (messages, buttons, answers, commands) or
when it is a literal part of an f-string; such a constant may hold no words (letters), only
markup, punctuation, digits, emoji or a known technical string. Msgids wrapped in t()/n()/N_()/
Np_(), docstrings, log messages and exception messages are not user-facing.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import tgbot

SRC = Path(tgbot.__file__).resolve().parent

#: Calls whose string arguments reach users.
SENDING = {
    "send_message",
    "reply_text",
    "edit_message_text",
    "edit_text",
    "answer",
    "InlineKeyboardButton",
    "BotCommand",
    "_button",
    "Rendered",
    "_reply",
    "reply",
    "tell",
    "set_my_commands",
    "set_my_description",
    "set_my_short_description",
}
#: Calls whose string arguments are msgids or never shown.
EXEMPT_CALLS = {"t", "n", "N_", "Np_", "debug", "info", "warning", "error", "exception", "critical"}
#: Technical strings allowed where users could see them.
ALLOWED = {
    "<b>",
    "</b>",
    "https://t.me/",
    "?start=",
    "https://t.me/{bot_username}",
    '<tg-time unix="',
    '" format="r">',
    "</tg-time>",
    r"^/start(@\w+)?\s+",
    "sync-",
}  # a command's pattern; a task's name
#: Words in a literal: two letters in a row (A/J/Q/K-style single letters are rank codes).
WORD = re.compile(r"[^\W\d_]{2,}")


def _exempt_nodes(tree: ast.AST) -> set[int]:
    """ids of string constants that are docstrings, msgids, log or exception messages."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
        if isinstance(node, ast.Call):
            fname = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if fname in EXEMPT_CALLS:
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Constant):
                        out.add(id(sub))
        if isinstance(node, ast.Raise) and node.exc is not None:
            for sub in ast.walk(node.exc):
                if isinstance(sub, ast.Constant):
                    out.add(id(sub))
    return out


def _text_parts(node: ast.AST) -> list[ast.Constant]:
    """String constants that become part of the text ``node`` evaluates to: the node itself,
    operands of ``+``, literal parts of f-strings, branches of ``x if c else y`` (not the
    arguments of nested calls: those are codes or msgids, checked where they are used)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node]
    if isinstance(node, ast.BinOp):
        return _text_parts(node.left) + _text_parts(node.right)
    if isinstance(node, ast.JoinedStr):
        return [v for v in node.values if isinstance(v, ast.Constant)]
    if isinstance(node, ast.IfExp):
        return _text_parts(node.body) + _text_parts(node.orelse)
    return []


def _user_facing(tree: ast.AST, fstrings: bool) -> list[ast.Constant]:
    found: list[ast.Constant] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fname = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            on_render = isinstance(node.func, ast.Attribute) and getattr(node.func.value, "id", "") == "render"
            if fname in SENDING and not on_render:  # views.answer(code, lang) takes an answer code
                for arg in [
                    *node.args,
                    *(
                        k.value
                        for k in node.keywords
                        if k.arg not in ("callback_data", "parse_mode", "url", "language_code", "scope")
                    ),
                ]:
                    found += _text_parts(arg)
        if fstrings and isinstance(node, ast.JoinedStr):
            found += [v for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
    return found


#: Packages and modules that compose user texts: every f-string literal there counts as
#: user-facing. Others (storage keys, the views' bookkeeping) only through the sending calls;
#: __main__ writes to the operator's terminal, not to Telegram users.
TEXT_PACKAGES = {"views", "handlers"}
TEXT_MODULES = {"timers.py"}
BOOKKEEPING = {"bookkeeping.py", "messages.py"}


def _composes_text(path: Path) -> bool:
    return path.name not in BOOKKEEPING and (path.parent.name in TEXT_PACKAGES or path.name in TEXT_MODULES)


def scan(source: str, fstrings: bool = True) -> list[str]:
    """The user-facing literals with words in ``source`` (the offending strings)."""
    tree = ast.parse(source)
    exempt = _exempt_nodes(tree)
    bad = []
    for const in sorted(_user_facing(tree, fstrings), key=lambda c: (c.lineno, c.col_offset)):
        if id(const) in exempt or const.value in ALLOWED:
            continue
        if WORD.search(re.sub(r"</?b>", "", const.value)) or re.search("[А-Яа-яЁё]", const.value):
            bad.append(f"line {const.lineno}: {const.value!r}")
    return bad


def test_scan_finds_literals():
    sample = """
async def f(bot, msg, tr, x):
    await bot.send_message(1, "Game over")
    await msg.reply_text(tr.t("Game over"))
    b = InlineKeyboardButton("Join", callback_data="j:1")
    s = f"{x} cards left"
    log.info("sent %s", x)
    await query.answer(tr.t("ok"))
    await bot.send_message(1, "<b>" + tr.t("x") + "</b>")
    await bot.send_message(1, "Игра")
"""
    assert [b.split(": ", 1)[1] for b in scan(sample)] == ["'Game over'", "'Join'", "' cards left'", "'Игра'"]


def test_no_user_facing_literal_in_tgbot():
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name != "__main__.py":
            bad += [f"{path.relative_to(SRC)} {b}" for b in scan(path.read_text(), fstrings=_composes_text(path))]
    assert bad == []


def test_no_cyrillic_literal_in_tgbot_code():
    """Russian texts live in the ru catalog only (docstrings may mention the game's name)."""
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text())
        exempt = _exempt_nodes(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in exempt:
                assert not re.search("[А-Яа-яЁё]", node.value), (path.name, node.lineno, node.value)
