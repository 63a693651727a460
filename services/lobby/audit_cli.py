"""``felt audit``: the chips audit with the house account, for an operator.

It runs the documented audit query (docs/operations.md, "The house account and
the chips audit") on the lobby's PostgreSQL (``DATABASE_URL``), read-only, and
prints chips created, balances, chips at tables, the house's balance, whether
they add up, the house's result and the players who won most from the house.
Its exit status is 0 when the audit holds and 1 when it does not, so a monitor
can run it.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # building ``felt``'s parser loads no server code
    from services.lobby.ports.ledger import Audit, Winner

TOP_MOST = 100


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "audit",
        help="the chips audit: created == balances + at tables + house, and the house's result",
        description=(
            "Check that every chip is accounted for (chips created == balances + chips at "
            "tables + the house's balance), print the house's result and the players who "
            "won most from it. Exit status 1 if the audit does not hold."
        ),
    )
    p.add_argument("--database-url", help="PostgreSQL URL (default: $DATABASE_URL)")
    p.add_argument(
        "--top",
        type=int,
        default=10,
        help=f"how many winners from the house to list (1-{TOP_MOST}; default 10)",
    )
    p.add_argument(
        "--since",
        default="",
        help="winners over movements since this UTC date or time (ISO 8601, e.g. 2026-12-03; "
        "'today': since midnight UTC; default: ever)",
    )
    p.set_defaults(handler=run_audit)


def since_of(text: str, now: datetime) -> datetime | None:
    """``--since``: None for ever, midnight UTC for 'today', else an ISO date or time (UTC
    when it names no zone). ValueError if it is none of those."""
    if not text:
        return None
    if text == "today":
        return now.replace(hour=0, minute=0, second=0, microsecond=0)
    at = datetime.fromisoformat(text)
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def report(audit: Audit, winners: list[tuple[Winner, str]], since: datetime | None) -> str:
    """The audit as ``felt audit`` prints it."""
    width = 16
    lines = [
        f"{'chips created':<{width}} {audit.created:>20,}",
        f"{'balances':<{width}} {audit.balances:>20,}",
        f"{'at tables':<{width}} {audit.on_tables:>20,}",
        f"{'house':<{width}} {audit.house:>20,}",
    ]
    total = audit.balances + audit.on_tables + audit.house
    if total == audit.created:
        lines.append("check            created == balances + at tables + house: holds")
    else:
        lines.append(
            "check            created == balances + at tables + house: FAILS "
            f"(the sum is {total - audit.created:+,} off)"
        )
    if audit.ledger_sum != audit.balances:
        lines.append(f"check            balances != their ledger rows ({audit.ledger_sum:,})")
    if audit.house_sum != audit.house:
        lines.append(f"check            house != its ledger rows ({audit.house_sum:,})")
    if audit.overpaid:
        lines.append(f"check            {audit.overpaid:,} lounge(s) paid out more than went in")
    if audit.stranded:
        lines.append(f"check            {audit.stranded:,} closed lounge(s) with chips left")
    ahead = (
        "the house is ahead"
        if audit.house > 0
        else "the players are ahead"
        if audit.house < 0
        else "even"
    )
    lines.append(f"house's result   {audit.house:+,} ({ahead})")
    window = f"since {since.isoformat()}" if since is not None else "ever"
    if not winners:
        lines.append(f"top winners from the house ({window}): none")
    else:
        lines.append(f"top winners from the house ({window}):")
        for rank, (w, name) in enumerate(winners, 1):
            lines.append(f"  {rank:>3}. {w.won:>+16,}  {w.player_id}  {name}")
    lines.append("audit holds" if audit.holds else "AUDIT FAILS")
    return "\n".join(lines)


def run_audit(args: argparse.Namespace) -> int:
    import asyncio
    import sys

    from felt.config.settings import DATABASE_URL

    dsn = args.database_url or DATABASE_URL.read()
    if not dsn:
        print("felt audit: set DATABASE_URL (or pass --database-url)", file=sys.stderr)
        return 2
    if not 1 <= args.top <= TOP_MOST:
        print(f"felt audit: --top must be 1 to {TOP_MOST}", file=sys.stderr)
        return 2
    try:
        since = since_of(args.since, datetime.now(UTC))
    except ValueError:
        print("felt audit: --since must be an ISO 8601 date or time, or 'today'", file=sys.stderr)
        return 2
    import asyncpg

    try:
        text, holds = asyncio.run(_audit(dsn, since, args.top))
    except OSError as exc:
        print(f"felt audit: cannot reach the database: {exc}", file=sys.stderr)
        return 1
    except asyncpg.UndefinedTableError as exc:
        print(f"felt audit: {exc} (run `felt db migrate` first)", file=sys.stderr)
        return 1
    print(text)
    return 0 if holds else 1


async def _audit(dsn: str, since: datetime | None, top: int) -> tuple[str, bool]:
    import asyncpg

    from services.lobby.postgres import PgLedger, PgPlayers

    pool = await asyncpg.create_pool(dsn, min_size=1, max_size=2)
    try:
        ledger, players = PgLedger(pool), PgPlayers(pool)
        audit = await ledger.audit()
        named = []
        for w in await ledger.house_winners(since, top):
            player = await players.get(w.player_id)
            named.append((w, player.display_name if player is not None else ""))
    finally:
        await pool.close()
    return report(audit, named, since), audit.holds
