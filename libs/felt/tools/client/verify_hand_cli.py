"""``felt verify-hand`` on the command line: its options here, the program in ``verify_hand``.

Kept apart so that building the ``felt`` parser does not import gRPC and the
protobuf code: ``felt.tools.client.verify_hand`` is imported only when the command runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "verify-hand",
        help="check a hand's cards against the deck commitment made before it",
        description="Check that every card you saw in a hand was fixed before it began: "
        "fetch the hand as your seat (or a spectator) saw it with GetHandHistory (the table "
        "service's, or with --public-id the history service's, archived hands too), or read "
        "a history saved earlier with --save (or felt replay --save), and check each card's "
        "Merkle proof against the commitment root published before the first card was dealt. "
        "Cards you never "
        "saw stay hidden: their salts are never sent.",
    )
    p.add_argument("--target", default="127.0.0.1:50051", help="table service host:port")
    p.add_argument("--table", help="table id")
    p.add_argument("--hand", default="", help="hand id (default: the latest hand)")
    p.add_argument("--seat", type=int, help="your seat (needs --token); omit as a spectator")
    p.add_argument("--token", default="", help="your seat token")
    p.add_argument(
        "--public-id",
        default="",
        help="the hand's public id: fetch it from the history service instead (archived "
        "hands too); with --seat, as your seat (FELT_ACCESS_TOKEN or --token: a lobby token)",
    )
    p.add_argument("--history-target", default="127.0.0.1:50052", help="history service host:port")
    p.add_argument("--file", type=Path, help="verify a history saved with --save instead")
    p.add_argument("--save", type=Path, help="also save the fetched history as JSON")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from felt.tools.client.verify_hand import run as verify

    return verify(args)
