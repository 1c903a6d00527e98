"""The playground in a real browser: ``python -m playground`` started as a person starts it, then a
whole game played through its page (lobby, joins, an AI seat, picks, plays, a challenge, the result)
by Playwright driving Debian's chromium-headless-shell; Ctrl-C stops it all.

Screenshots go to ``$PLAYGROUND_SCREENSHOTS`` (default ``build/playground-screenshots``); the test
prints the folder.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

playwright_api = pytest.importorskip("playwright.async_api")

pytestmark = [pytest.mark.e2e, pytest.mark.browser, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
SHOTS = Path(os.environ.get("PLAYGROUND_SCREENSHOTS") or ROOT / "build" / "playground-screenshots")
#: Debian's packages (chromium-headless-shell first); never a browser Playwright downloads
BROWSERS = (
    "/usr/lib/chromium/chromium-headless-shell",
    "chromium-headless-shell",
    "/usr/lib/chromium/chromium",
    "chromium",
)
ALICE, BORIS, VERA = 1001, 1002, 1003
GROUP = -100

#: per private chat: the id of its last message with buttons and their callback data
PANELS_JS = """() => {
  const out = {};
  for (const chat of document.querySelectorAll("section.chat.private")) {
    const withButtons = [...chat.querySelectorAll(".msg:not(.deleted)")].filter(m => m.querySelector("button.kb"));
    const last = withButtons[withButtons.length - 1];
    out[chat.dataset.chat] = last
      ? {id: last.dataset.id, text: last.innerText, data: [...last.querySelectorAll("button.kb")].map(b => b.dataset.callback || "")}
      : null;
  }
  return out;
}"""


def browser_path() -> str | None:
    for name in BROWSERS:
        found = name if os.path.isabs(name) and os.access(name, os.X_OK) else shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture
async def playground(tmp_path: Path) -> AsyncIterator[tuple[str, str]]:
    """``python -m playground`` as a subprocess, Telegram's group and private limits scaled down
    (20 per 6 s, 3 per 0.3 s) and short AI pauses; yields (page URL, emulator base URL). Stopped with SIGINT (Ctrl-C), which
    must end it cleanly."""
    env = dict(
        os.environ,
        RATE_GROUP_PERIOD="6",
        RATE_PRIVATE_PERIOD="0.3",
        AI_PAUSE_MIN="0.3",
        AI_PAUSE_MAX="0.6",
        PYTHONUNBUFFERED="1",
    )
    for name in ("REDIS_URL", "HTTP_LISTEN", "BOT_TOKEN", "TELEGRAM_BASE_URL"):
        env.pop(name, None)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "playground",
        "--log",
        str(tmp_path / "bot.log"),
        cwd=tmp_path,  # it needs no checkout: everything comes from the installed packages
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    try:
        url = api = None
        while url is None or api is None:
            line = (await asyncio.wait_for(proc.stdout.readline(), 180)).decode()
            assert line, "".join(lines) + (tmp_path / "bot.log").read_text(errors="replace")[-3000:]
            lines.append(line)
            if found := re.search(r"open (http://\S+/) in your browser", line):
                url = found.group(1)
            if found := re.search(r"its Bot API: (http://\S+)/bot;", line):
                api = found.group(1)
        yield url, api
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGINT)
        rest = (await asyncio.wait_for(proc.stdout.read(), 60)).decode()
        code = await asyncio.wait_for(proc.wait(), 60)
    output = "".join(lines) + rest
    assert code == 0, output
    assert output.rstrip().endswith("Stopped."), output


@pytest.fixture
async def page() -> AsyncIterator:
    path = browser_path()
    if path is None:
        message = "no Chromium: apt-get install chromium-headless-shell (.ci/run does)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    async with playwright_api.async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=path)
        try:
            page = await browser.new_page(viewport={"width": 1600, "height": 900}, locale="en-GB")
            page.set_default_timeout(60_000)  # a busy machine (the suite's other workers) is slow
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            yield page
            assert errors == []
        finally:
            await browser.close()


async def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(SHOTS / name), animations="disabled")


def chat(page, chat_id: int):
    return page.locator(f"section.chat[data-chat='{chat_id}']")


async def act_as(page, person: int) -> None:
    await chat(page, GROUP).locator(f"button.who[data-person='{person}']").click()


async def tap(page, chat_id: int, data_prefix: str, text: str | None = None) -> None:
    """Tap the last button in the chat whose callback data starts with ``data_prefix`` and wait
    for the bot's answer (the page shows it; the button stops loading)."""
    buttons = chat(page, chat_id).locator(f"button.kb[data-callback^='{data_prefix}']")
    if text is not None:
        buttons = buttons.filter(has_text=text)
    await buttons.last.click()
    await page.wait_for_function("() => !document.querySelector('button.kb.loading')")


def choose(data: list[str], challenged: bool) -> str | None:
    """The test's player: challenge the first claim it may, then pick up to four cards and play
    them (naming the first rank offered when opening a round), believe when that is all it may do."""
    moves = [d for d in data if d[:2] in ("k:", "p:", "c:", "b:", "t:")]
    if not moves:
        return None
    if not challenged and (challenge := next((d for d in moves if d.startswith("c:")), None)):
        return challenge
    plays = [d for d in moves if d.startswith("p:")]
    picked = len(plays[0].split(":")[3]) if plays else 0
    picks = [d for d in moves if d.startswith("k:") and len(d.split(":")[3]) > picked]
    if picks and picked < 4:
        return picks[0]
    if plays:
        return plays[0]
    return next((d for d in moves if d[:2] in ("b:", "t:", "c:")), None)


async def test_a_whole_game_through_the_page(playground, page) -> None:
    url, api = playground
    started = time.monotonic()
    await page.goto(url)
    await page.wait_for_selector(".status.live")
    for person in (ALICE, BORIS, VERA):  # every demo person has pressed Start: the bot greeted them
        await chat(page, person).locator(".msg.bot").first.wait_for()

    # Вера switches her Telegram to French: her private messages follow from her next update on
    await chat(page, VERA).locator("select.language").select_option("fr")

    # Алиса opens a lobby from the bot's command menu (its commands as the bot set them)
    group = chat(page, GROUP)
    await group.locator(".menu-button").click()
    await group.locator(".menu-item", has_text="/start_game").click()
    await group.locator("button.kb[data-callback^='j:']").last.wait_for()
    for person in (BORIS, VERA):
        await act_as(page, person)
        await tap(page, GROUP, "j:")
    await act_as(page, ALICE)
    await tap(page, GROUP, "a:")  # an AI seat
    await group.locator(".msg.bot .text", has_text="4.").last.wait_for()
    await shot(page, "1-lobby.png")
    await tap(page, GROUP, "s:")  # Алиса starts the game

    # every player's panel, Вера's in French (her Telegram's language since her last tap)
    await chat(page, VERA).locator(".msg.bot .text", has_text="Vos cartes").wait_for()
    panels = await page.evaluate(PANELS_JS)
    # Алиса opens: her deadline is Telegram's date-time entity, counted down in her language
    deadline = chat(page, ALICE).locator(".tg-time[data-format='r']").first
    await deadline.wait_for()
    assert (await deadline.inner_text()).startswith("через "), await deadline.inner_text()
    await shot(page, "2-first-turn.png")

    challenged = False
    taps = attempts = 0
    while not await game_over(page):
        attempts += 1
        assert attempts < 1000, "the game does not end"
        move = next(
            (
                (int(cid), panel, m)
                for cid, panel in panels.items()
                if panel and (m := choose(panel["data"], challenged))
            ),
            None,
        )
        if move is not None:
            cid, panel, data = move
            button = chat(page, cid).locator(f".msg[data-id='{panel['id']}'] button.kb[data-callback='{data}']")
            if data.startswith("c:") and not challenged:
                await page.locator(".toast").first.wait_for(state="detached")  # the tap answers shown
                await shot(page, "3-doubt.png")  # «Не верю!» in red on the challenger's panel
            try:
                await button.click(timeout=5000)
            except playwright_api.TimeoutError:  # the bot changed the panel meanwhile: read it again
                panels = await page.evaluate(PANELS_JS)
                continue
            await page.wait_for_function("() => !document.querySelector('button.kb.loading')")
            taps += 1
            if data.startswith("c:") and not challenged:
                challenged = True
                await group.locator(".msg.bot .text", has_text="«Не верю!»").last.wait_for()  # the showdown
                await shot(page, "4-showdown.png")
        panels = await wait_for_moves(page, panels)

    await group.locator("button.kb[data-callback^='n:']").last.wait_for()  # «Play again» under the result
    await shot(page, "5-result.png")
    assert challenged
    result = await group.locator(".msg.bot .text", has_text="Игра окончена").last.inner_text()
    assert "1" in result

    # the game's record, sent to Алиса as a file: a download on the page
    await tap(page, ALICE, "d:")
    document = chat(page, ALICE).locator("a.document").last
    await document.wait_for()
    download = await page.request.get(url.rstrip("/") + await document.get_attribute("href"))
    assert (await download.json())["format"] == "cheat-record/1"

    async with aiohttp.ClientSession() as http, http.get(f"{api}/_sim/records") as response:
        records = (await response.json())["result"]
    assert records["violations"] == [], records["violations"]
    assert records["errors"] == [], records["errors"][:5]
    print(
        f"\nplayground: a whole game in {time.monotonic() - started:.0f} s, {taps} taps; screenshots in {SHOTS}",
        file=sys.stderr,
    )


async def game_over(page) -> bool:
    return await chat(page, GROUP).locator(".msg.bot .text", has_text="Игра окончена").count() > 0


async def wait_for_moves(page, before: dict, timeout: float = 60) -> dict:
    """The private panels once they differ from ``before`` (the bot edited one, an AI seat moved)
    or the game is over; fails after ``timeout`` seconds without change."""
    await page.wait_for_function(
        f"""before => {{
          const now = Object.entries(({PANELS_JS})()).map(([chat, p]) => [chat, p && p.id, p && p.data]);
          const over = [...document.querySelectorAll("section.chat.group .msg.bot .text")]
            .some(t => t.textContent.includes("Игра окончена"));
          return over || JSON.stringify(now) !== before;
        }}""",
        arg=json.dumps([[c, p and p["id"], p and p["data"]] for c, p in before.items()], separators=(",", ":")),
        timeout=timeout * 1000,
    )
    return await page.evaluate(PANELS_JS)
