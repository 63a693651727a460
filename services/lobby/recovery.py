"""Recovering buy-in sagas fairly and within bounds, and settling the ones it gives up on.

A buy-in whose ``SeatPlayer`` outcome is unknown stays RESERVED (see
:mod:`services.lobby.seating`); the recovery pass asks the table service again with the
same request id. The pass used to take the 100 oldest RESERVED sagas every 2 s, forever:
a hundred that could never finish (a table that hangs) kept every saga behind them
waiting, and the table service took their doomed calls over and over. Now:

* **Longest due first.** Each attempt is recorded on the saga *before* the call
  (``BuyIns.attempting``: attempts + 1, when it is due again), so a crash or a hanging
  call still moves it back in the queue, and the pass takes the sagas due longest ago
  (never attempted: due since they were reserved). A saga that fails is due again only
  after its backoff, behind every saga that was due before: no set of sagas can keep
  another out, however many there are.
* **Exponential backoff** (``RecoveryPolicy``: ``base`` doubling to ``cap``, plus up to a
  quarter more derived from the saga's id so that sagas failed together spread out) and a
  bounded batch per pass with a bounded number of calls at once: the table service
  sees at most ``batch`` calls a pass, and a saga that keeps failing costs fewer and
  fewer of them.
* **Bounded attempts, then stuck.** After ``max_attempts`` the saga is stuck: out of
  the queue, its chips still held for it (counted as on the table), an error log line
  (``buy_in_stuck``), the ``felt_lobby_sagas_stuck`` gauge, and ``felt sagas`` for an
  operator, who resolves it (:meth:`StuckSagas.resolve`: seated or refunded, by what
  the table service shows, never both) or puts it back in the queue
  (:meth:`StuckSagas.requeue`). The player's own retry of a stuck saga's join does
  not drive it either (``BUY_IN_STUCK``): from then on only the operator does, so a
  refund cannot race a seat.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Generic, Protocol, TypeVar, cast

import structlog
from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest

from poker.v1.reason_pb2 import Reason
from services.lobby.ports import (
    BuyIn,
    BuyIns,
    BuyInState,
    TableRefused,
    Tables,
    TablesUnavailable,
)
from services.lobby.ports.buy_ins import BUY_IN_LIVE_STATES
from services.lobby.ports.chip_adds import CHIP_ADD_LIVE_STATES

log = structlog.get_logger("felt.lobby.recovery")
T = TypeVar("T")

RESOLVED_NOT_SEATED = Reason.Name(Reason.RESOLVED_NOT_SEATED)
"""A stuck saga's refusal when an operator resolved it with the player not at the table."""


@dataclass(frozen=True, slots=True)
class RecoveryPolicy:
    """How the recovery pass retries a buy-in whose outcome is unknown."""

    base: timedelta = timedelta(seconds=2)  # after the first failed attempt
    cap: timedelta = timedelta(minutes=5)  # the longest wait between two attempts
    max_attempts: int = 10  # then stuck (13.5 to 17 minutes after the first, by default)
    batch: int = 32  # sagas per pass at most: the table service's calls per pass
    concurrency: int = 4  # calls at once (one hanging table does not hold the pass)
    settle: timedelta = timedelta(minutes=1)  # resolve waits this long after an attempt
    attempt_timeout: timedelta = timedelta(seconds=30)  # one attempt at most (unknown then)

    def backoff(self, saga_id: str, attempts: int) -> timedelta:
        """The wait after a saga's ``attempts``-th attempt: ``base`` doubled each attempt up
        to ``cap``, plus 0-25% derived from the saga's id and attempt (no randomness, yet
        sagas that failed together do not all come back together)."""
        doubled: timedelta = self.base * (2 ** min(max(attempts - 1, 0), 30))
        wait = min(self.cap, doubled)
        digest = hashlib.sha256(f"{saga_id}\0{attempts}".encode()).digest()
        spread: timedelta = wait * (int.from_bytes(digest[:2], "big") / 65_535 / 4)
        return wait + spread


class Backoffs:
    """A recovery pass's waits for sagas kept in no row of their own (a CREATING lounge):
    in this process, per key, by ``policy``'s backoff; forgotten on success. Beside a walk
    of the rows a page per pass (a keyset cursor), a saga that keeps failing is tried less
    and less often and cannot keep the others out. (A restart forgets the waits: each such
    saga is tried once more, then waits again.)"""

    def __init__(self, policy: RecoveryPolicy | None = None) -> None:
        self.policy = policy or RecoveryPolicy()
        self._waits: dict[str, tuple[int, datetime]] = {}  # key: (failures, due again at)

    def due(self, key: str, now: datetime) -> bool:
        wait = self._waits.get(key)
        return wait is None or wait[1] <= now

    def failed(self, key: str, now: datetime) -> int:
        """One more failure of ``key``: it waits its backoff; how many failures so far."""
        failures = self._waits.get(key, (0, now))[0] + 1
        self._waits[key] = (failures, now + self.policy.backoff(key, failures))
        return failures

    def succeeded(self, key: str) -> None:
        self._waits.pop(key, None)


SAGA_KINDS = ("buy_in", "chip_add")
"""The sagas the recovery passes drive, as the metrics' ``kind`` label and the logs name them."""

SAGA_STATES = {
    "buy_in": tuple(s.value for s in BUY_IN_LIVE_STATES),
    "chip_add": tuple(s.value for s in CHIP_ADD_LIVE_STATES),
}
"""The states ``felt_lobby_sagas`` counts, each kind's it leaves again (the finished ones
would be a count of every saga ever): every one shown at 0 before the first saga reaches it."""


class RecoveryMetrics:
    """The lobby's recovery metrics, in a registry of their own (``exposition``), each by the
    saga's ``kind`` (:data:`SAGA_KINDS`): both passes share one registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.attempts = Counter(
            "felt_lobby_saga_recovery_attempts",
            "Attempts of the recovery pass to finish a saga, by kind and outcome (seated or "
            "added, compensated, unknown: the table service did not answer).",
            ["kind", "outcome"],
            registry=self.registry,
        )
        self.turned_stuck = Counter(
            "felt_lobby_sagas_turned_stuck",
            "Sagas the recovery pass gave up on (stuck: an operator settles them), by kind.",
            ["kind"],
            registry=self.registry,
        )
        self.stuck = Gauge(
            "felt_lobby_sagas_stuck",
            "Sagas stuck now, their chips held, by kind: `felt sagas list` shows them.",
            ["kind"],
            registry=self.registry,
        )
        self.due = Gauge(
            "felt_lobby_sagas_due",
            "Sagas the last recovery pass found due (at most its batch), by kind.",
            ["kind"],
            registry=self.registry,
        )
        self.sagas = Gauge(
            "felt_lobby_sagas",
            "Sagas by kind and state as of the last recovery pass (reserved: chips off the "
            "balance, the table's answer awaited; leaving: a seat's chips on their way back).",
            ["kind", "state"],
            registry=self.registry,
        )
        for kind in SAGA_KINDS:  # shown at 0 from the start, not only once one gets stuck
            self.stuck.labels(kind).set(0)
            self.turned_stuck.labels(kind)
            for state in SAGA_STATES[kind]:
                self.sagas.labels(kind, state).set(0)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


@dataclass(frozen=True, slots=True)
class PassTally:
    """What one recovery pass did."""

    committed: int = 0  # seated (a buy-in) or added (a chip add)
    compensated: int = 0
    unknown: int = 0
    stuck: int = 0  # of the unknown: given up on in this pass


class ResolveRefused(Exception):
    """A stuck saga cannot be resolved now (nothing changed): the message says why."""


@dataclass(frozen=True, slots=True)
class Resolution:
    """What ``resolve`` did: ``outcome`` is seated, refunded, or finished (it was already)."""

    outcome: str
    buy_in: BuyIn


class Recoverable(Protocol):
    """What the pass reads of a saga (a ``BuyIn`` or a ``ChipAdd``)."""

    @property
    def saga_id(self) -> str: ...
    @property
    def player_id(self) -> str: ...
    @property
    def lounge_id(self) -> str: ...
    @property
    def amount(self) -> int: ...
    @property
    def attempts(self) -> int: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def last_attempt_at(self) -> datetime | None: ...
    @property
    def stuck_at(self) -> datetime | None: ...


S = TypeVar("S", bound=Recoverable)


class SagaQueue(Protocol[S]):
    """The recovery bookkeeping a saga store keeps (``BuyIns``, ``ChipAdds``): see
    ``BuyIns.due``, ``attempting``, ``attempt_failed`` and ``count_stuck``."""

    async def due(self, now: datetime, limit: int) -> list[S]: ...

    async def attempting(self, saga_id: str, at: datetime, next_at: datetime) -> S | None: ...

    async def attempt_failed(self, saga_id: str, error: str, stuck_at: datetime | None) -> S: ...

    async def count_stuck(self) -> int: ...

    async def count_by_state(self) -> dict[str, int]: ...


class SagaRecovery(Generic[S]):
    """The recovery pass over one kind of RESERVED saga. ``drive`` takes a saga to its
    committed state or COMPENSATED, or raises ``TablesUnavailable``; ``outcome`` names
    where a driven saga ended (``committed`` or compensated). Sagas reserved less than
    ``grace`` ago are left to their client's own call (still under way, perhaps)."""

    def __init__(
        self,
        kind: str,
        queue: SagaQueue[S],
        drive: Callable[[S], Awaitable[S]],
        committed: Callable[[S], bool],
        clock: Callable[[], datetime],
        policy: RecoveryPolicy | None = None,
        metrics: RecoveryMetrics | None = None,
        grace: timedelta = timedelta(0),
    ) -> None:
        self.kind, self.queue, self.drive, self.committed = kind, queue, drive, committed
        self.clock, self.grace = clock, grace
        self.policy = policy or RecoveryPolicy()
        self.metrics = metrics or RecoveryMetrics()
        self.committed_name = "seated" if kind == "buy_in" else "added"

    async def run_pass(self) -> PassTally:
        """One pass: the due sagas (longest due first, at most ``batch``), each claimed for
        one attempt and driven, ``concurrency`` at once."""
        now = self.clock()
        due = [
            s
            for s in await self.queue.due(now, self.policy.batch)
            if s.attempts or s.created_at <= now - self.grace
        ]
        self.metrics.due.labels(self.kind).set(len(due))
        gate = asyncio.Semaphore(self.policy.concurrency)

        async def one(saga: S) -> str | None:
            async with gate:
                return await self._attempt(saga)

        outcomes = await settled(*(one(s) for s in due))
        self.metrics.stuck.labels(self.kind).set(await self.queue.count_stuck())
        return PassTally(
            outcomes.count(self.committed_name),
            outcomes.count("compensated"),
            outcomes.count("unknown") + outcomes.count("stuck"),
            outcomes.count("stuck"),
        )

    async def count_states(self) -> None:
        """Set ``felt_lobby_sagas`` of this kind: a loop of its own (the lobby server's), off
        the passes that ``/healthz`` follows, and rarer."""
        counts = await self.queue.count_by_state()
        for state in SAGA_STATES.get(self.kind, ()):
            self.metrics.sagas.labels(self.kind, state).set(counts.get(state, 0))

    async def _attempt(self, saga: S) -> str | None:
        at = self.clock()
        next_at = at + self.policy.backoff(saga.saga_id, saga.attempts + 1)
        claimed = await self.queue.attempting(saga.saga_id, at, next_at)
        if claimed is None:
            return None  # finished meanwhile, or another pass took it
        try:
            done = await asyncio.wait_for(
                self.drive(claimed), self.policy.attempt_timeout.total_seconds()
            )
        except (TablesUnavailable, TimeoutError) as exc:
            error = str(exc) or f"no answer in {self.policy.attempt_timeout.total_seconds():g} s"
            self.metrics.attempts.labels(self.kind, "unknown").inc()
            if claimed.attempts >= self.policy.max_attempts:
                failed = await self.queue.attempt_failed(saga.saga_id, error, at)
                if failed.stuck_at is None:
                    return "unknown"  # finished meanwhile (the player's retry, a close)
                self.metrics.turned_stuck.labels(self.kind).inc()
                log.error(
                    f"{self.kind}_stuck",
                    saga_id=saga.saga_id,
                    player_id=saga.player_id,
                    lounge_id=saga.lounge_id,
                    amount=saga.amount,
                    attempts=claimed.attempts,
                    error=error,
                    hint="felt sagas list; felt sagas resolve SAGA_ID",
                )
                return "stuck"
            await self.queue.attempt_failed(saga.saga_id, error, None)
            log.warning(
                f"{self.kind}_not_recovered",
                saga_id=saga.saga_id,
                attempts=claimed.attempts,
                next_attempt_at=next_at.isoformat(),
                error=error,
            )
            return "unknown"
        outcome = self.committed_name if self.committed(done) else "compensated"
        self.metrics.attempts.labels(self.kind, outcome).inc()
        return outcome


class BuyInRecovery(SagaRecovery[BuyIn]):
    """The recovery pass over RESERVED buy-ins. ``drive`` takes a saga to SEATED or
    COMPENSATED, or raises ``TablesUnavailable`` (``SeatingApp.drive``)."""

    def __init__(
        self,
        buy_ins: BuyIns,
        drive: Callable[[BuyIn], Awaitable[BuyIn]],
        clock: Callable[[], datetime],
        policy: RecoveryPolicy | None = None,
        metrics: RecoveryMetrics | None = None,
    ) -> None:
        super().__init__(
            "buy_in",
            buy_ins,
            drive,
            lambda done: done.state is BuyInState.SEATED,
            clock,
            policy,
            metrics,
        )
        self.buy_ins = buy_ins


class StuckSagas:
    """The operator's side (``felt sagas``): settle a stuck saga, or put it back in the
    recovery pass's queue."""

    def __init__(
        self,
        buy_ins: BuyIns,
        tables: Tables,
        clock: Callable[[], datetime],
        policy: RecoveryPolicy | None = None,
    ) -> None:
        self.buy_ins, self.tables, self.clock = buy_ins, tables, clock
        self.policy = policy or RecoveryPolicy()

    async def requeue(self, saga_id: str) -> BuyIn:
        """A saga back in the pass's queue, due at once with its attempts reset (``--retry``)."""
        saga = await self._reserved(saga_id)
        saga = await self.buy_ins.requeue(saga.saga_id)
        log.info("buy_in_requeued", saga_id=saga_id)
        return saga

    async def resolve(self, saga_id: str) -> Resolution:
        """Settle a stuck saga by what the table service shows (``GetTable``), never both
        ways and never by guessing: the player seated there (and by no other saga of the
        lobby's) was seated by this one (only this saga's ``SeatPlayer`` can have put them
        there): a fresh seat token (``ReissueSeatToken``) and SEATED; the player not there
        (or no such table): the buy-in is refunded, COMPENSATED with
        ``RESOLVED_NOT_SEATED``. Refused (nothing changed) while an attempt may still
        land (not stuck, or attempted less than ``settle`` ago) or the table service does
        not answer."""
        saga = await self.buy_ins.get(saga_id)
        if saga is None:
            raise ResolveRefused(f"no buy-in saga {saga_id}")
        if saga.state is not BuyInState.RESERVED:
            return Resolution("finished", saga)
        at = self.clock()
        check_settled(saga, at, self.policy)
        try:
            seen = await self.tables.occupants(saga.lounge_id)
            seats = [seat for seat, player in seen.seats if player == saga.player_id]
        except TableRefused as exc:
            if not exc.means(Reason.NO_TABLE):
                raise ResolveRefused(f"the table service refused GetTable: {exc.message}") from None
            seats = []  # no table: nobody was seated there
        except TablesUnavailable as exc:
            raise ResolveRefused(
                f"the table service did not answer ({exc}); nothing changed"
            ) from None
        other = await self.buy_ins.seated_saga(saga.player_id, saga.lounge_id)
        if seats and (other is None or other.seat != seats[0]):
            try:
                grant = await self.tables.reissue(
                    saga.lounge_id, seats[0], saga.player_id, f"resolve/{saga.saga_id}"
                )
            except (TableRefused, TablesUnavailable) as exc:
                raise ResolveRefused(
                    f"the player sits at seat {seats[0]}, but its token could not be "
                    f"reissued ({exc}); nothing changed"
                ) from None
            done = await self.buy_ins.seated(saga.saga_id, grant)
            log.warning("buy_in_resolved", saga_id=saga_id, outcome="seated", seat=grant.seat)
            return Resolution("seated", done)
        done = await self.buy_ins.compensate(saga.saga_id, RESOLVED_NOT_SEATED, at)
        log.warning("buy_in_resolved", saga_id=saga_id, outcome="refunded", amount=saga.amount)
        return Resolution("refunded", done)

    async def _reserved(self, saga_id: str) -> BuyIn:
        saga = await self.buy_ins.get(saga_id)
        if saga is None:
            raise ResolveRefused(f"no buy-in saga {saga_id}")
        if saga.state is not BuyInState.RESERVED:
            raise ResolveRefused(f"the saga is {saga.state.value}: nothing to retry")
        return saga


def check_settled(saga: Recoverable, at: datetime, policy: RecoveryPolicy) -> None:
    """Refuse (``ResolveRefused``, nothing changed) to settle a saga by hand while a call of
    it may still land: one the pass still drives (not stuck), or attempted under
    ``policy.settle`` before ``at``."""
    if saga.stuck_at is None:
        raise ResolveRefused(
            "the saga is not stuck: the recovery pass still drives it (wait, or see "
            "`felt sagas list`)"
        )
    if at - (saga.last_attempt_at or saga.created_at) < policy.settle:
        raise ResolveRefused(
            f"the saga was last attempted under {policy.settle.total_seconds():g} s "
            "ago: a call may still land; try again shortly"
        )


async def settled(*calls: Awaitable[T]) -> list[T]:
    """``asyncio.gather`` that lets every call finish before it raises the first error (the
    database gone, say), so no call of a failed pass runs on into the next pass."""
    results = await asyncio.gather(*calls, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return cast("list[T]", results)
