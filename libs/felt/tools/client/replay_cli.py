"""``felt replay`` on the command line: its options here, the program in
``felt.tools.client.replay``.

Kept apart so that building the ``felt`` parser does not import gRPC and the
protobuf code: ``felt.tools.client.replay`` is imported only when the command runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "replay",
        help="print a hand street by street, as a seat, a spectator or the operator saw it",
        description="Fetch a hand with the history service's GetHandHistory (the archive for "
        "past hands; the table's stream for one not archived yet, with --table) and print it "
        "as a hand history: street by street, the showdown, pots and results. Credentials come "
        "from the environment so they stay out of the process list: FELT_ACCESS_TOKEN (a "
        "lobby access token: your own seat's cards) or, with --operator, FELT_ADMIN_TOKEN; and "
        "FELT_INVITE_CODE for a private lounge's hand you were not dealt into.",
    )
    p.add_argument("hand_id", metavar="HAND_ID", help="the hand's public id (32 hex digits)")
    p.add_argument("--target", default="127.0.0.1:50052", help="history service host:port")
    p.add_argument("--table", default="", help="the table, for a hand not archived yet")
    who = p.add_mutually_exclusive_group()
    who.add_argument("--seat", type=int, help="as this seat saw it (your seat; or --operator)")
    who.add_argument("--spectator", action="store_true", help="only what was public")
    p.add_argument(
        "--operator", action="store_true", help="as the operator (FELT_ADMIN_TOKEN): every card"
    )
    form = p.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="JSON (schema felt.hand-history/1)")
    form.add_argument("--phh", action="store_true", help="PHH (Hold'em), loadable by PokerKit")
    p.add_argument("--file", type=Path, help="replay a history saved with --save instead")
    p.add_argument("--save", type=Path, help="also save the fetched history (for verify-hand)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from felt.tools.client.replay import run as replay

    return replay(args)
