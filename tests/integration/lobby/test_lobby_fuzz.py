"""The lobby fuzzer, short run: random hostile sequences of every lobby and history RPC.

Many players over real gRPC on loopback against the lobby (PostgreSQL), the
table service (Redis) and an AI worker, with the oracles after every step:
chips conserved (``tests.fuzz.lobby.audit``), refusals clean and changing
nothing, no card shown to a caller who may not see it, no saga in flight after
quiescence. See ``tests.fuzz.lobby.machine`` and docs/testing.md;
``python -m tests.fuzz.lobby --minutes 30`` is the long run.
"""

from __future__ import annotations

import asyncio

import asyncpg

from felt.storage.migrations import migrate
from services.lobby.db_cli import MIGRATIONS
from tests.fuzz.lobby.audit import audit, in_flight
from tests.fuzz.lobby.harness import Harness
from tests.fuzz.lobby.run import fuzz_settings, run_bounded

# Defects the fuzzer found that other branches of issue #20 fix (docs/testing.md): reported
# by the long run, not failing this one. Remove each once its fix is merged.
KNOWN_DEFECTS: set[str] = set()
"""Violation kinds a defect not yet fixed is known to cause (none: the four the fuzzer found,
chips from unfunded AI seats, full-table joins held, closes behind them and table refusals
without a reason, are fixed)."""


async def test_lobby_fuzz_short_run(fresh_database: str, redis_url: str) -> None:
    await migrate(fresh_database, MIGRATIONS)
    harness = Harness(fresh_database, redis_url, asyncio.get_running_loop())
    harness.known.update(KNOWN_DEFECTS)
    try:
        # Bounded by examples and steps (each example starts a fresh stack): about a minute
        # on two cores. No shrinking here: a failure prints its whole sequence.
        config = fuzz_settings(examples=5, steps=30, shrink=False)
        await asyncio.to_thread(run_bounded, harness, config)
    finally:
        await harness.close()
    assert harness.sequences >= 5
    assert harness.calls > 100


async def test_the_audit_sees_a_chip_out_of_place(fresh_database: str) -> None:
    """The oracle itself: a consistent ledger passes; a balance off by one chip, and a row
    moving chips to a table with no buy-in saga behind it, are each reported."""
    await migrate(fresh_database, MIGRATIONS)
    conn = await asyncpg.connect(fresh_database)
    try:
        await conn.execute(
            "INSERT INTO players (player_id, display_name, name_key, request_key, fingerprint,"
            " created_at) VALUES ('p-1', 'Ann', 'ann', 'k-1', '\\x00', now())"
        )
        await conn.execute("INSERT INTO accounts (player_id, balance) VALUES ('p-1', 1500)")
        await conn.execute(
            "INSERT INTO ledger (player_id, kind, amount, balance_after, movement_key,"
            " fingerprint, created_at) VALUES ('p-1', 'grant', 1500, 1500, 'g-1', '\\x00', now())"
        )
        fine = await audit(conn)
        assert fine.ok and (fine.created, fine.balances, fine.at_tables) == (1500, 1500, 0)

        await conn.execute("UPDATE accounts SET balance = 1501")
        off = await audit(conn)
        assert not off.conserved and any("p-1" in p for p in off.problems)

        await conn.execute("UPDATE accounts SET balance = 1300")
        await conn.execute(
            "INSERT INTO ledger (player_id, kind, amount, balance_after, table_id, movement_key,"
            " fingerprint, created_at)"
            " VALUES ('p-1', 'buy_in', -200, 1300, 'l-1', 's/buy-in/b-x/0', '\\x00', now())"
        )
        stray = await audit(conn)
        assert stray.conserved  # the sum holds: 1500 = 1300 + 200 at a table...
        assert any("belongs to no buy-in saga" in p for p in stray.problems)  # ...of no saga
        assert not await in_flight(conn)
    finally:
        await conn.close()
