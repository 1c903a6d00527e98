"""``python -m playground`` (or ``cheat-playground``): the whole game in a browser, no Telegram account.

Starts the Bot API emulator, the real bot (``python -m tgbot`` on the embedded store) against it
and a local page showing the demo group and three demo people's private chats; prints the page's
URL; Ctrl-C stops all of it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from pathlib import Path

from playground.launch import Playground, StartError


async def run(args: argparse.Namespace) -> int:
    """Start, wait for Ctrl-C (SIGINT) or SIGTERM, stop; the exit code."""
    loop = asyncio.get_running_loop()
    signalled = asyncio.Event()
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # Ctrl-C, kill, a closed terminal
        loop.add_signal_handler(number, signalled.set)
    playground = Playground(args.host, args.port, Path(args.log) if args.log else None)
    try:
        print("Starting the Bot API emulator and the bot…", flush=True)
        starting = asyncio.ensure_future(playground.start())
        waiting = asyncio.ensure_future(signalled.wait())
        await asyncio.wait({starting, waiting}, return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        if not starting.done():  # Ctrl-C while starting
            starting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await starting
            return 130
        url = starting.result()
        print(f"The playground is ready: open {url} in your browser.", flush=True)
        print(
            f"(the bot's log: {playground.log_path}; its Bot API: {playground.emu.base_url}; Ctrl-C stops)", flush=True
        )
        code = await playground.stopped(signalled)
        if code:
            print(f"The bot stopped by itself:\n{playground.log_tail()}", file=sys.stderr, flush=True)
        return code
    except StartError as e:
        print(f"The playground could not start: {e}", file=sys.stderr, flush=True)
        return 1
    finally:
        await playground.stop()
        print("Stopped.", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m playground",
        description="Play the bot in a browser: the real bot against a local Telegram Bot API emulator.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="the page's port (default: a free one)")
    parser.add_argument("--log", help="append the bot's log to this file (default: a new temporary file)")
    args = parser.parse_args(argv)
    sys.exit(asyncio.run(run(args)))


if __name__ == "__main__":
    main()
