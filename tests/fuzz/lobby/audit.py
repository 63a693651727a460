"""The lobby fuzzer's chips and sagas oracle: SQL over the lobby's own database.

``audit(conn)`` is the one place that says where every chip is. Chips are
*created* by ledger rows of kind ``grant`` and ``top_up``; they are *held* in
players' balances (``accounts.balance``) or *at tables* (the negated sum of the
``buy_in``, ``cash_out`` and ``table_closed`` rows: a buy-in takes chips to a
table, a cash-out, a compensating refund or a closed table's settlement brings
them back). Conservation is ``created == balances + at_tables``.

The house account (AI seats funded from the ledger and settled back) is read
through the lobby's own documented audit query (``AUDIT_QUERY``, the one `felt
audit` runs): its funding and return rows join the ``at_tables`` sum and its
balance (the house's result, negative when players won from it) is a term of
its own, so conservation is ``created == balances + at_tables + house``; the
query's per-lounge checks (no lounge paid out more than went in, no closed or
failed lounge still holding chips) are problems here too.

Besides the sum, each saga must agree with its own ledger rows (a refusal
refunded exactly once, a seat that left cashed out exactly its stack), each
balance must be the sum of its player's rows, and after quiescence no saga may
be in flight (:func:`in_flight`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

import asyncpg

from services.lobby.ports.buy_ins import cash_out_key, refund_key, reserve_key
from services.lobby.ports.chip_adds import add_key, add_refund_key
from services.lobby.ports.closes import closed_key
from services.lobby.postgres.ledger import AUDIT_QUERY

if TYPE_CHECKING:
    from asyncpg.pool import PoolConnectionProxy

# What ``pool.acquire()`` gives (a plain connection works the same).
Conn: TypeAlias = "PoolConnectionProxy[asyncpg.Record] | asyncpg.Connection[asyncpg.Record]"

# Ledger kinds that create chips, and that move them between a balance and a table.
CREATING_KINDS = ("grant", "top_up")
TABLE_KINDS = ("buy_in", "cash_out", "table_closed")


@dataclass
class AuditResult:
    """The chip totals and every way the database disagrees with itself."""

    created: int = 0
    balances: int = 0
    at_tables: int = 0
    house: int = 0  # the house account's balance: its result (AI seats' chips)
    problems: list[str] = field(default_factory=list)
    # Chips that came back from tables beyond what went to them: won from seats no ledger
    # row paid for (AI seats, until the house account funds them): made from nothing.
    minted: int = 0

    @property
    def conserved(self) -> bool:
        return self.created == self.balances + self.at_tables + self.house

    @property
    def ok(self) -> bool:
        return self.conserved and not self.problems and not self.minted

    def __str__(self) -> str:
        head = (
            f"created {self.created:,} = balances {self.balances:,} + at tables "
            f"{self.at_tables:,} + house {self.house:,}"
            + ("" if self.conserved else "  (NOT CONSERVED)")
        )
        minted = [f"{self.minted:,} chips came back from tables beyond all buy-ins"]
        return "\n".join([head, *self.problems, *(minted if self.minted else [])])


async def _totals(conn: Conn, result: AuditResult) -> None:
    """created, balances, at tables and the house, by the lobby's own audit query (one
    statement: one snapshot), with its per-lounge checks as problems."""
    row = await conn.fetchrow(AUDIT_QUERY)
    assert row is not None
    result.created, result.balances = int(row["created"]), int(row["balances"])
    result.at_tables, result.house = int(row["on_tables"]), int(row["house"])
    if row["overpaid"]:
        result.problems.append(f"{row['overpaid']} lounge(s) paid out more than went in")
    if row["stranded"]:
        result.problems.append(f"{row['stranded']} closed or failed lounge(s) still hold chips")


async def audit(conn: Conn) -> AuditResult:
    """Where every chip is, read in one repeatable-read snapshot (so a settlement that
    commits between two of the queries cannot look like a lost chip)."""
    async with conn.transaction(isolation="repeatable_read", readonly=True):
        result = AuditResult()
        await _totals(conn, result)
        result.minted = max(0, -result.at_tables)
        await _balances_are_their_rows(conn, result)
        await _sagas_match_their_rows(conn, result)
    return result


async def _balances_are_their_rows(conn: Conn, result: AuditResult) -> None:
    rows = await conn.fetch(
        """
        SELECT a.player_id, a.balance, coalesce(sum(l.amount), 0) AS rows_sum,
               (SELECT l2.balance_after FROM ledger l2 WHERE l2.player_id = a.player_id
                ORDER BY l2.entry_id DESC LIMIT 1) AS last_after
        FROM accounts a LEFT JOIN ledger l ON l.player_id = a.player_id
        GROUP BY a.player_id, a.balance
        HAVING a.balance <> coalesce(sum(l.amount), 0)
            OR a.balance IS DISTINCT FROM (SELECT l2.balance_after FROM ledger l2
                WHERE l2.player_id = a.player_id ORDER BY l2.entry_id DESC LIMIT 1)
        """
    )
    for r in rows:
        result.problems.append(
            f"player {r['player_id']}: balance {r['balance']:,}, its ledger rows sum to "
            f"{r['rows_sum']:,}, the last row says {r['last_after']}"
        )


async def _sagas_match_their_rows(conn: Conn, result: AuditResult) -> None:
    """Each buy-in saga against its rows: one buy-in of its amount; compensated: one refund
    of the same; left: one return (cash-out or table closed) of its stack; else none back.
    And no row moving chips to or from a table belongs to no saga."""
    rows = await conn.fetch(
        "SELECT entry_id, kind, amount, movement_key FROM ledger WHERE kind = ANY($1::text[])",
        list(TABLE_KINDS),
    )
    by_key: dict[str, list[int]] = {}
    for r in rows:
        by_key.setdefault(r["movement_key"], []).append(int(r["amount"]))
    claimed: set[str] = set()
    for b in await conn.fetch("SELECT saga_id, state, amount, left_stack FROM buy_ins"):
        saga, state, amount, stack = b["saga_id"], b["state"], int(b["amount"]), b["left_stack"]
        keys = {
            "taken": [reserve_key(saga).key],
            "refunded": [refund_key(saga).key],
            "returned": [cash_out_key(saga).key, closed_key(saga).key],
        }
        want = {
            "taken": [-amount],
            "refunded": [amount] if state == "compensated" else [],
            "returned": [stack] if state == "left" and stack else [],
        }
        for what, names in keys.items():
            got = [a for name in names for a in by_key.get(name, [])]
            claimed.update(names)
            if got != want[what]:
                result.problems.append(
                    f"saga {saga} ({state}, buy-in {amount:,}, left with {stack}): "
                    f"{what} rows {got}, expected {want[what]}"
                )
    for c in await conn.fetch("SELECT saga_id, state, amount FROM chip_adds"):
        saga, state, amount = c["saga_id"], c["state"], int(c["amount"])
        for name, expected in (
            (add_key(saga).key, [-amount]),
            (add_refund_key(saga).key, [amount] if state == "compensated" else []),
        ):
            claimed.add(name)
            if by_key.get(name, []) != expected:
                result.problems.append(
                    f"chip add {saga} ({state}, {amount:,}): rows {by_key.get(name, [])} under "
                    f"{name!r}, expected {expected}"
                )
    for r in rows:
        if r["movement_key"] not in claimed:
            result.problems.append(
                f"ledger row {r['entry_id']} ({r['kind']} {r['amount']:,}, key "
                f"{r['movement_key']!r}) belongs to no buy-in saga"
            )


@dataclass(frozen=True)
class InFlight:
    """Sagas still moving: buy-ins reserved or leaving, lounges being created or closed."""

    buy_ins: list[str]
    lounges: list[str]

    def __bool__(self) -> bool:
        return bool(self.buy_ins or self.lounges)

    def __str__(self) -> str:
        return f"buy-ins {self.buy_ins}; lounges {self.lounges}"

    def kinds(self) -> set[str]:
        """Violation kinds, one per saga state left: ``sagas/in-flight/<state>``; a lounge
        still closing while a buy-in at it is still reserved is ``closing-behind-reserved``
        (the close waits for that buy-in: one defect, not two)."""
        reserved_at = {item.split()[-1] for item in self.buy_ins if item.split()[1] == "reserved"}
        kinds = {f"sagas/in-flight/{item.split()[1]}" for item in self.buy_ins}
        for item in self.lounges:
            lounge_id, state = item.split()
            behind = state == "closing" and lounge_id in reserved_at
            kinds.add(f"sagas/in-flight/{state}" + ("-behind-reserved" if behind else ""))
        return kinds


async def in_flight(conn: Conn) -> InFlight:
    """Every saga not at rest. Written as "not in a settled state", so that a state added
    later (a saga given up as stuck, say) counts as in flight until it is listed here."""
    buy_ins = await conn.fetch(
        "SELECT saga_id, state, lounge_id FROM buy_ins"
        " WHERE state NOT IN ('seated', 'compensated', 'left')"
    )
    buy_ins += await conn.fetch(
        "SELECT saga_id, 'adding' AS state, lounge_id FROM chip_adds WHERE state = 'reserved'"
    )
    lounges = await conn.fetch(
        "SELECT lounge_id, state FROM lounges WHERE state NOT IN ('open', 'closed', 'failed')"
    )
    return InFlight(
        [f"{r['saga_id']} {r['state']} at {r['lounge_id']}" for r in buy_ins],
        [f"{r['lounge_id']} {r['state']}" for r in lounges],
    )


async def ledger_mark(conn: Conn, player_id: str) -> int:
    """The player's last ledger entry id (0: none), to see what a call added after it."""
    value = await conn.fetchval(
        "SELECT coalesce(max(entry_id), 0) FROM ledger WHERE player_id = $1", player_id
    )
    return int(value)


async def rows_since(conn: Conn, player_id: str, mark: int) -> list[tuple[str, int, str]]:
    """(kind, amount, movement key) of the player's rows after ``mark``."""
    rows = await conn.fetch(
        "SELECT kind, amount, movement_key FROM ledger WHERE player_id = $1 AND entry_id > $2"
        " ORDER BY entry_id",
        player_id,
        mark,
    )
    return [(r["kind"], int(r["amount"]), r["movement_key"]) for r in rows]
