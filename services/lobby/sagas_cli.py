"""``felt sagas``: the operator's view of the sagas the recovery pass has not finished: buy-ins
(ids ``b-...``) and chip adds (``c-...``).

``felt sagas list`` shows the stuck ones (the pass gave up on them: their chips are held
until an operator settles them) and those still in flight. ``felt sagas resolve SAGA_ID``
settles a stuck one by what the table service shows, never both ways: a buy-in seated
there is SEATED with a fresh seat token, not there refunded; a chip add is ADDED if the
table answers its own request with the chips on the seat, refunded if it refuses it.
``--retry`` puts it back in the pass's queue with its attempts reset instead. The lobby's
database is ``DATABASE_URL``; the table service ``FELT_TABLE_ADDR`` with
``FELT_ADMIN_TOKEN`` (as the lobby runs with), each table's calls sent to its owner when
``REDIS_URL`` is set, as the lobby's are (``felt.service.table_router``), unless
``--table-addr`` names one instance.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from felt.config.settings import (
    DATABASE_URL,
    FELT_ADMIN_TOKEN,
    FELT_DEV_MODE,
    FELT_TABLE_ADDR,
    REDIS_URL,
    ConfigError,
)

if TYPE_CHECKING:  # the parser is built without the services' code (felt --help stays light)
    from services.lobby.ports import BuyIn, ChipAdd

LIST_LIMIT = 200
SAGA_ID_MAX = 64  # a saga's id is "b-" (a buy-in) or "c-" (a chip add) and 24 hex digits


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "sagas",
        help="buy-ins and chip adds not finished: list the stuck and in-flight ones, resolve "
        "a stuck one",
        description="Buy-in and add-chips sagas the lobby's recovery pass has not finished "
        "(DATABASE_URL; "
        "resolve also asks the table service at FELT_TABLE_ADDR with FELT_ADMIN_TOKEN).",
    )
    p.add_argument("--database-url", help="PostgreSQL URL (default: $DATABASE_URL)")
    sub = p.add_subparsers(dest="sagas_command", metavar="ACTION", required=True)
    ls = sub.add_parser("list", help="the stuck sagas, then those in flight (RESERVED)")
    ls.add_argument("--json", action="store_true", help="one JSON object per line")
    ls.add_argument(
        "--limit", type=int, default=50, help=f"at most this many of each (1-{LIST_LIMIT})"
    )
    ls.set_defaults(handler=run_list)
    rs = sub.add_parser(
        "resolve",
        help="settle a stuck saga by what the table service shows: seated (or added), or refunded",
    )
    rs.add_argument("saga_id", metavar="SAGA_ID")
    rs.add_argument(
        "--retry",
        action="store_true",
        help="put it back in the recovery pass's queue (attempts reset) instead",
    )
    rs.add_argument(
        "--table-addr",
        help="one table-service instance to call (default: each table's owner, found in "
        "$REDIS_URL, else $FELT_TABLE_ADDR or 127.0.0.1:50051)",
    )
    rs.set_defaults(handler=run_resolve)


def _dsn(args: argparse.Namespace) -> str:
    return str(args.database_url or DATABASE_URL.read())


def _when(at: datetime | None) -> str:
    return "-" if at is None else at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def describe(saga: BuyIn | ChipAdd) -> dict[str, object]:
    """A saga as the operator sees it (never its seat token)."""
    return {
        "saga_id": saga.saga_id,
        "kind": "chip_add" if hasattr(saga, "buy_in_id") else "buy_in",
        "status": "stuck" if saga.stuck_at is not None else "in flight",
        "player_id": saga.player_id,
        "lounge_id": saga.lounge_id,
        "amount": saga.amount,
        "attempts": saga.attempts,
        "created_at": _when(saga.created_at),
        "last_attempt_at": _when(saga.last_attempt_at),
        "next_attempt_at": _when(saga.next_attempt_at),
        "stuck_at": _when(saga.stuck_at),
        "last_error": saga.last_error or "",
    }


def run_list(args: argparse.Namespace) -> int:
    import asyncio

    dsn = _dsn(args)
    if not dsn:
        print("felt sagas: set DATABASE_URL (or pass --database-url)", file=sys.stderr)
        return 2
    if not 1 <= args.limit <= LIST_LIMIT:
        print(f"felt sagas list: --limit must be 1-{LIST_LIMIT}", file=sys.stderr)
        return 2
    import asyncpg

    try:
        stuck, flight = asyncio.run(_list(dsn, args.limit))
    except OSError as exc:
        print(f"felt sagas: cannot reach the database: {exc}", file=sys.stderr)
        return 1
    except asyncpg.PostgresError as exc:
        print(f"felt sagas: {exc} (is the schema up to date? felt db migrate)", file=sys.stderr)
        return 1
    rows = [describe(s) for s in stuck] + [describe(s) for s in flight]
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return 0
    print(f"{len(stuck)} stuck, {len(flight)} in flight (shown: at most {args.limit} each)")
    for row in rows:
        print(
            f"{row['saga_id']}  {row['kind']:<8}  {row['status']:<9}  player "
            f"{row['player_id']}  lounge {row['lounge_id']}  {row['amount']:,} chips  "
            f"attempts {row['attempts']}  "
            f"last {row['last_attempt_at']}  next {row['next_attempt_at']}"
            + (f"  error: {row['last_error']}" if row["last_error"] else "")
        )
    return 0


async def _list(dsn: str, limit: int) -> tuple[list[BuyIn | ChipAdd], list[BuyIn | ChipAdd]]:
    """The stuck sagas (longest stuck first), then those in flight (oldest first), of both
    kinds, at most ``limit`` of each."""
    from services.lobby.postgres import PgBuyIns, PgChipAdds
    from services.lobby.postgres.pool import create_pool

    pool = await create_pool(dsn, min_size=1, max_size=2)
    try:
        stuck: list[BuyIn | ChipAdd] = []
        flight: list[BuyIn | ChipAdd] = []
        for store in (PgBuyIns(pool), PgChipAdds(pool)):
            stuck_here = await store.stuck(limit)
            stuck += stuck_here
            # In flight: RESERVED and not stuck (the listing of all RESERVED, oldest first).
            unfinished = await store.unfinished(limit + len(stuck_here))
            flight += [s for s in unfinished if s.stuck_at is None]
        stuck.sort(key=lambda s: (s.stuck_at or s.created_at, s.saga_id))
        flight.sort(key=lambda s: (s.created_at, s.saga_id))
        return stuck[:limit], flight[:limit]
    finally:
        await pool.close()


def run_resolve(args: argparse.Namespace) -> int:
    import asyncio

    import asyncpg

    from services.lobby.recovery import ResolveRefused

    dsn = _dsn(args)
    if not dsn:
        print("felt sagas: set DATABASE_URL (or pass --database-url)", file=sys.stderr)
        return 2
    try:
        outcome, saga = asyncio.run(_resolve(dsn, args))
    except ConfigError as exc:
        print(f"felt sagas resolve: {exc}", file=sys.stderr)
        return 2
    except ResolveRefused as exc:
        print(f"felt sagas resolve: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"felt sagas: cannot reach the database: {exc}", file=sys.stderr)
        return 1
    except asyncpg.PostgresError as exc:
        print(f"felt sagas: {exc} (is the schema up to date? felt db migrate)", file=sys.stderr)
        return 1
    print(f"{saga.saga_id}: {outcome} ({saga.state.value}, {saga.amount:,} chips)")
    return 0


async def _resolve(dsn: str, args: argparse.Namespace) -> tuple[str, BuyIn | ChipAdd]:
    from felt.service.table_router import owner_calls
    from felt.storage.redis_client import redis_from_url
    from felt.wire.tokens import DEV_SERVICE_TOKEN
    from poker.v1.table_service_pb2_grpc import TableServiceStub
    from services.lobby.chips import StuckChipAdds
    from services.lobby.postgres import PgBuyIns, PgChipAdds
    from services.lobby.postgres.pool import create_pool
    from services.lobby.recovery import ResolveRefused, StuckSagas
    from services.lobby.tables import GrpcTables

    if not 1 <= len(args.saga_id) <= SAGA_ID_MAX or not args.saga_id.isprintable():
        raise ResolveRefused(f"SAGA_ID must be 1-{SAGA_ID_MAX} printable characters")
    token = FELT_ADMIN_TOKEN.read()
    if not token and FELT_DEV_MODE.read():
        token = DEV_SERVICE_TOKEN
    if not token and not args.retry:
        raise ResolveRefused("set FELT_ADMIN_TOKEN (the table service's service credential)")
    address = args.table_addr or FELT_TABLE_ADDR.read()
    # With REDIS_URL, each table's calls go to its owner (the table's address as a fallback).
    redis_url = "" if args.table_addr else REDIS_URL.read()
    routes = redis_from_url(redis_url) if redis_url else None
    calls = owner_calls(address, routes, TableServiceStub)
    pool = await create_pool(dsn, min_size=1, max_size=2)
    try:
        tables = GrpcTables(calls, token)
        if args.saga_id.startswith("c-"):  # an add of chips
            adds = StuckChipAdds(PgChipAdds(pool), tables, _utcnow)
            if args.retry:
                return "requeued", await adds.requeue(args.saga_id)
            added = await adds.resolve(args.saga_id)
            return added.outcome, added.chip_add
        desk = StuckSagas(PgBuyIns(pool), tables, _utcnow)
        if args.retry:
            return "requeued", await desk.requeue(args.saga_id)
        resolution = await desk.resolve(args.saga_id)
        return resolution.outcome, resolution.buy_in
    finally:
        await pool.close()
        await calls.close()
        if routes is not None:
            await routes.aclose()


def _utcnow() -> datetime:
    return datetime.now(UTC)
