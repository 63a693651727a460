"""``felt play``: play a lounge against AI players in the terminal.

Registered from this light module so that ``felt --help`` does not import
Textual or gRPC; the app is imported when the command runs.
"""

from __future__ import annotations

import argparse
import sys

AI_LEVELS = {"easy": 1, "normal": 2, "hard": 3}  # poker.events.v1.AiLevel


def _levels(text: str) -> tuple[int, ...]:
    names = [n.strip().lower() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in AI_LEVELS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"AI levels are a comma-separated list of {', '.join(AI_LEVELS)}"
        )
    return tuple(AI_LEVELS[n] for n in names)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "play",
        help="play a lounge against AI players in the terminal (Hold'em or Draw)",
        description="Sign in as a guest, create a lounge with AI opponents (or join one "
        "with --lounge), buy in and play through the public gRPC API. Keys: the letter "
        "or digit on each choice, $ types an amount, 1-5 mark discards and d draws, "
        "s sits out/in, b buys in again when out of chips, l leaves, q quits.",
    )
    p.add_argument("--lobby", help="the lobby, host:port (default: FELT_LOBBY_ADDR)")
    p.add_argument("--table", help="the table service, host:port (default: FELT_TABLE_ADDR)")
    p.add_argument("--variant", choices=("holdem", "draw"), default="holdem")
    p.add_argument(
        "--ai",
        type=_levels,
        default=(2, 3),
        metavar="LEVELS",
        help="AI opponents, e.g. normal,hard (default)",
    )
    p.add_argument("--name", default="", help="display name (default: a generated one)")
    p.add_argument("--buy-in", type=int, default=1000)
    p.add_argument("--lounge", default="", help="join this lounge instead of creating one")
    p.add_argument("--hands", type=int, default=0, help="leave after this many hands")
    p.add_argument(
        "--wait-for-big-blind",
        action="store_true",
        help="sit down waiting for the big blind (Hold'em): dealt in when it reaches the seat",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import secrets

    from felt.config.settings import FELT_LOBBY_ADDR, FELT_TABLE_ADDR, ConfigError
    from felt.tools.client.play.app import LoungePlan, PlayApp
    from felt.tools.client.play.session import PlaySession
    from felt.tools.client.play.tables import table_config

    try:
        lobby, table = args.lobby or FELT_LOBBY_ADDR.read(), args.table or FELT_TABLE_ADDR.read()
    except ConfigError as exc:
        print(f"felt play: {exc}", file=sys.stderr)
        return 2
    plan = LoungePlan(
        config=table_config(args.variant, seats=len(args.ai) + 1),
        ai_levels=args.ai,
        buy_in=args.buy_in,
        player_name=args.name or f"Player-{secrets.token_hex(3)}",
        lounge_id=args.lounge,
        name=f"{args.variant} vs AI",
        hands=args.hands,
        wait_for_big_blind=args.wait_for_big_blind,
    )
    session = PlaySession(lobby, table)
    app = PlayApp(session, plan)
    balance = app.run()
    if balance is not None and balance >= 0:
        print(f"balance: {balance}")
    if app.failure is not None:
        print(f"felt play: {app.failure}", file=sys.stderr)
        return 1
    return 0
