"""In-memory fakes of the lobby's ports, for service tests (no PostgreSQL).

Each method does its whole work without awaiting in between, so on one event
loop it is atomic, as the adapter's transaction is. The contract suites run
these and the PostgreSQL adapters through the same tests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from felt.idempotency import RequestKey, RequestReused
from poker.events.v1 import events_pb2 as epb
from services.lobby.ports import (
    Account,
    AlreadyRegistered,
    BuyIn,
    BuyInState,
    InsufficientChips,
    Kind,
    Lounge,
    LoungeFilter,
    LoungeSeat,
    LoungeState,
    Movement,
    NameTaken,
    NewBuyIn,
    NewLounge,
    NewPlayer,
    NoAccount,
    Player,
    Rotation,
    SeatGrant,
    Session,
    TableRefused,
    TablesUnavailable,
    TokenHasher,
    TooManyLounges,
    Totals,
    check_top_up,
    refund_key,
    reserve_key,
)


class MemoryPlayers:
    def __init__(self) -> None:
        self._players: dict[str, Player] = {}
        self._names: dict[str, str] = {}  # name_key -> player_id
        self._requests: dict[str, tuple[bytes, str]] = {}  # request key -> (fingerprint, id)

    async def create(self, new: NewPlayer) -> Player:
        first = self._requests.get(new.request.key)
        if first is not None:
            if first[0] != new.request.fingerprint:
                raise RequestReused()
            return self._players[first[1]]
        if new.name_key in self._names:
            raise NameTaken(new.display_name)
        player = Player(
            new.player_id,
            new.display_name,
            new.password_hash,
            new.at,
            new.at if new.password_hash is not None else None,
        )
        self._players[player.player_id] = player
        self._names[new.name_key] = player.player_id
        self._requests[new.request.key] = (new.request.fingerprint, player.player_id)
        return player

    async def get(self, player_id: str) -> Player | None:
        return self._players.get(player_id)

    async def by_name(self, name_key: str) -> Player | None:
        player_id = self._names.get(name_key)
        return None if player_id is None else self._players[player_id]

    async def by_request(self, request: RequestKey) -> Player | None:
        first = self._requests.get(request.key)
        if first is None:
            return None
        if first[0] != request.fingerprint:
            raise RequestReused()
        return self._players[first[1]]

    async def register(self, player_id: str, password_hash: str, at: datetime) -> Player:
        player = self._players[player_id]
        if player.registered:
            raise AlreadyRegistered(player_id)
        player = replace(player, password_hash=password_hash, registered_at=at)
        self._players[player_id] = player
        return player


@dataclass(slots=True)
class _Token:
    session_id: str
    generation: int
    rotated_key: str | None = None
    rotated_fingerprint: bytes | None = None


class MemorySessions:
    def __init__(self) -> None:
        self._sessions: dict[str, Session] = {}
        self._requests: dict[str, tuple[bytes, str]] = {}
        self._tokens: dict[bytes, _Token] = {}

    async def start(
        self,
        session_id: str,
        player_id: str,
        request: RequestKey,
        token_hash: TokenHasher,
        at: datetime,
        ttl: timedelta,
    ) -> Session:
        first = self._requests.get(request.key)
        if first is not None:
            if first[0] != request.fingerprint:
                raise RequestReused()
            return self._sessions[first[1]]
        session = Session(session_id, player_id, 0, at, at + ttl, False)
        self._sessions[session_id] = session
        self._requests[request.key] = (request.fingerprint, session_id)
        self._tokens[token_hash(session_id, 0)] = _Token(session_id, 0)
        return session

    async def get(self, session_id: str) -> Session | None:
        return self._sessions.get(session_id)

    async def rotate(
        self,
        token_hash: bytes,
        request: RequestKey,
        next_hash: TokenHasher,
        at: datetime,
        ttl: timedelta,
    ) -> tuple[Rotation, Session | None]:
        token = self._tokens.get(token_hash)
        if token is None:
            return Rotation.UNKNOWN, None
        session = self._sessions[token.session_id]
        if token.rotated_key == request.key:
            if token.rotated_fingerprint != request.fingerprint:
                raise RequestReused()
            if session.revoked:
                return Rotation.REVOKED, None
            return Rotation.RETRIED, replace(session, generation=token.generation + 1)
        if session.revoked:
            return Rotation.REVOKED, None
        if token.rotated_key is not None or token.generation != session.generation:
            self._sessions[session.session_id] = replace(session, revoked=True)
            return Rotation.REUSED, None
        if session.expires_at <= at:
            return Rotation.EXPIRED, None
        token.rotated_key, token.rotated_fingerprint = request.key, request.fingerprint
        generation = session.generation + 1
        session = replace(session, generation=generation, issued_at=at, expires_at=at + ttl)
        self._sessions[session.session_id] = session
        self._tokens[next_hash(session.session_id, generation)] = _Token(
            session.session_id, generation
        )
        return Rotation.ROTATED, session

    async def revoke(self, session_id: str, at: datetime, why: str) -> bool:
        session = self._sessions.get(session_id)
        if session is None or session.revoked:
            return False
        self._sessions[session_id] = replace(session, revoked=True)
        return True


class MemoryThrottle:
    def __init__(self) -> None:
        self._scopes: dict[str, tuple[int, datetime]] = {}

    async def failures(self, scopes: Sequence[str], since: datetime) -> int:
        counts = [
            count
            for scope in scopes
            if (entry := self._scopes.get(scope)) is not None
            for count, start in [entry]
            if start > since
        ]
        return max(counts, default=0)

    async def reserve(self, limits: Mapping[str, int], at: datetime, window: timedelta) -> bool:
        # No await between the read and the write: atomic on the event loop, as the
        # adapter's transaction is.
        counted: dict[str, tuple[int, datetime]] = {}
        for scope, limit in limits.items():
            count, start = self._scopes.get(scope, (0, at))
            if start <= at - window:
                count, start = 0, at
            if count + 1 > limit:
                return False
            counted[scope] = (count + 1, start)
        self._scopes.update(counted)
        return True

    async def clear(self, scopes: Sequence[str]) -> None:
        for scope in scopes:
            self._scopes.pop(scope, None)

    async def refund(self, scopes: Sequence[str]) -> None:
        for scope in scopes:
            entry = self._scopes.get(scope)
            if entry is not None and entry[0] > 1:
                self._scopes[scope] = (entry[0] - 1, entry[1])
            elif entry is not None:
                del self._scopes[scope]


class MemoryLedger:
    def __init__(self) -> None:
        self._accounts: dict[str, Account] = {}
        self._rows: list[Movement] = []
        self._keys: dict[str, tuple[bytes, Movement]] = {}

    def _first(self, request: RequestKey) -> Movement | None:
        first = self._keys.get(request.key)
        if first is None:
            return None
        if first[0] != request.fingerprint:
            raise RequestReused()
        return first[1]

    def _write(
        self,
        player_id: str,
        kind: Kind,
        delta: int,
        request: RequestKey,
        at: datetime,
        table_id: str | None,
    ) -> Movement:
        account = self._accounts[player_id]
        row = Movement(
            len(self._rows) + 1,
            player_id,
            kind,
            delta,
            account.balance + delta,
            table_id,
            at,
        )
        top_up = at if kind is Kind.TOP_UP else account.last_top_up_at
        self._accounts[player_id] = Account(player_id, row.balance_after, top_up)
        self._rows.append(row)
        self._keys[request.key] = (request.fingerprint, row)
        return row

    async def open(self, player_id: str, grant: int, request: RequestKey, at: datetime) -> Movement:
        first = self._first(request)
        if first is not None:
            return first
        if player_id in self._accounts:
            raise ValueError(f"{player_id} has an account already")
        self._accounts[player_id] = Account(player_id, 0, None)
        return self._write(player_id, Kind.GRANT, grant, request, at, None)

    async def move(
        self,
        player_id: str,
        kind: Kind,
        amount: int,
        request: RequestKey,
        at: datetime,
        table_id: str | None = None,
    ) -> Movement:
        if amount <= 0:
            raise ValueError("a movement moves at least one chip")
        first = self._first(request)
        if first is not None:
            return first
        account = self._accounts.get(player_id)
        if account is None:
            raise NoAccount(player_id)
        delta = kind.sign * amount
        if account.balance + delta < 0:
            raise InsufficientChips(account.balance, amount)
        return self._write(player_id, kind, delta, request, at, table_id)

    async def top_up(
        self,
        player_id: str,
        amount: int,
        below: int,
        cooldown: timedelta,
        request: RequestKey,
        at: datetime,
    ) -> Movement:
        first = self._first(request)
        if first is not None:
            return first
        account = self._accounts.get(player_id)
        if account is None:
            raise NoAccount(player_id)
        check_top_up(account, below, cooldown, at)
        return self._write(player_id, Kind.TOP_UP, amount, request, at, None)

    async def account(self, player_id: str) -> Account | None:
        return self._accounts.get(player_id)

    async def entries(self, player_id: str, before: int | None, limit: int) -> list[Movement]:
        rows = [
            r
            for r in reversed(self._rows)
            if r.player_id == player_id and (before is None or r.entry_id < before)
        ]
        return rows[:limit]

    async def totals(self) -> Totals:
        created = sum(r.amount for r in self._rows if r.kind in (Kind.GRANT, Kind.TOP_UP))
        moved = sum(r.amount for r in self._rows if r.kind not in (Kind.GRANT, Kind.TOP_UP))
        return Totals(
            created,
            sum(a.balance for a in self._accounts.values()),
            -moved,
            sum(r.amount for r in self._rows),
        )


class MemoryLounges:
    def __init__(self) -> None:
        self._lounges: dict[str, Lounge] = {}
        self._requests: dict[str, tuple[bytes, str]] = {}

    async def create(self, new: NewLounge, max_per_owner: int | None = None) -> Lounge:
        first = self._requests.get(new.request.key)
        if first is not None:
            if first[0] != new.request.fingerprint:
                raise RequestReused()
            return self._lounges[first[1]]
        if max_per_owner is not None:
            owned = sum(
                1
                for lounge in self._lounges.values()
                if lounge.owner_id == new.owner_id
                and lounge.state in (LoungeState.CREATING, LoungeState.OPEN)
            )
            if owned >= max_per_owner:
                raise TooManyLounges(max_per_owner)
        if new.lounge_id in self._lounges:
            raise ValueError(f"lounge {new.lounge_id} exists")
        lounge = Lounge(
            new.lounge_id,
            len(self._lounges) + 1,
            new.owner_id,
            new.name,
            new.variant,
            new.config,
            new.stake,
            new.seat_count,
            new.min_buy_in,
            new.max_buy_in,
            new.invite_code,
            LoungeState.CREATING,
            new.at,
            tuple(sorted(new.ai_seats, key=lambda s: s.seat)),
        )
        self._lounges[lounge.lounge_id] = lounge
        self._requests[new.request.key] = (new.request.fingerprint, lounge.lounge_id)
        return lounge

    async def get(self, lounge_id: str) -> Lounge | None:
        return self._lounges.get(lounge_id)

    async def mark_open(self, lounge_id: str) -> Lounge:
        lounge = replace(self._lounges[lounge_id], state=LoungeState.OPEN)
        self._lounges[lounge_id] = lounge
        return lounge

    async def listing(self, where: LoungeFilter, before: int | None, limit: int) -> list[Lounge]:
        found = [
            lounge
            for lounge in sorted(self._lounges.values(), key=lambda x: -x.listing_id)
            if lounge.state is LoungeState.OPEN
            and not lounge.private
            and (before is None or lounge.listing_id < before)
            and (not where.variant or lounge.variant == where.variant)
            and (not where.min_stake or lounge.stake >= where.min_stake)
            and (not where.max_stake or lounge.stake <= where.max_stake)
            and lounge.free_seats >= where.min_free_seats
        ]
        return found[:limit]

    async def creating(self, limit: int) -> list[Lounge]:
        found = [x for x in self._lounges.values() if x.state is LoungeState.CREATING]
        return sorted(found, key=lambda x: x.created_at)[:limit]


@dataclass(slots=True)
class FakeTable:
    name: str
    config: bytes
    seats: dict[int, LoungeSeat]


class MemoryTables:
    """The table service's admin calls, in memory: idempotent by request id, a taken seat
    refused. ``unavailable`` makes every call fail as an unreachable service would, after
    (``lost_answers``) or before doing its work."""

    def __init__(self) -> None:
        self.tables: dict[str, FakeTable] = {}
        self._answers: dict[str, object] = {}
        self.unavailable = False
        self.lost_answers = False
        self.calls = 0

    def _gate(self) -> None:
        self.calls += 1
        if self.unavailable and not self.lost_answers:
            raise TablesUnavailable("the table service is unreachable")

    def _answer(self) -> None:
        if self.unavailable:
            raise TablesUnavailable("the answer was lost")

    async def create(self, table_id: str, name: str, config: bytes, request_id: str) -> None:
        self._gate()
        if f"create/{request_id}" not in self._answers:
            if table_id in self.tables:
                raise TableRefused("ALREADY_EXISTS", f"table {table_id} already exists")
            self.tables[table_id] = FakeTable(name, config, {})
            self._answers[f"create/{request_id}"] = None
        self._answer()

    async def seat(
        self,
        table_id: str,
        seat: int | None,
        player_id: str,
        display_name: str,
        stack: int,
        ai_level: int,
        request_id: str,
    ) -> SeatGrant:
        self._gate()
        key = f"seat/{request_id}"
        answer = self._answers.get(key)
        if answer is None:
            table = self.tables.get(table_id)
            if table is None:
                raise TableRefused("NO_TABLE", f"no table {table_id}")
            if seat is None:
                count = epb.TableConfig.FromString(table.config).seat_count
                free = [s for s in range(count) if s not in table.seats]
                if not free:
                    raise TableRefused("TABLE_FULL", f"table {table_id} is full")
                seat = free[0]
            if seat in table.seats:
                raise TableRefused("SEAT_TAKEN", f"seat {seat} is taken")
            table.seats[seat] = LoungeSeat(seat, player_id, display_name, ai_level, stack)
            answer = SeatGrant(seat, f"token-{request_id}", None)
            self._answers[key] = answer
        self._answer()
        assert isinstance(answer, SeatGrant)
        return answer


class MemoryBuyIns:
    """The saga's rows beside a :class:`MemoryLedger` and :class:`MemoryLounges`: each
    transition runs with no suspension point between its checks and writes (the ledger's
    methods do not await anything), so it is atomic on one event loop."""

    def __init__(self, ledger: MemoryLedger, lounges: MemoryLounges) -> None:
        self.ledger, self.lounges = ledger, lounges
        self.sagas: dict[str, BuyIn] = {}
        self._requests: dict[str, tuple[bytes, str]] = {}

    async def reserve(self, new: NewBuyIn) -> BuyIn:
        first = self._requests.get(new.request.key)
        if first is not None:
            if first[0] != new.request.fingerprint:
                raise RequestReused()
            return self.sagas[first[1]]
        await self.ledger.move(
            new.player_id,
            Kind.BUY_IN,
            new.amount,
            reserve_key(new.saga_id),
            new.at,
            new.lounge_id,
        )
        saga = BuyIn(
            new.saga_id,
            new.player_id,
            new.display_name,
            new.lounge_id,
            new.seat,
            new.amount,
            BuyInState.RESERVED,
            None,
            None,
            None,
            new.at,
        )
        self.sagas[saga.saga_id] = saga
        self._requests[new.request.key] = (new.request.fingerprint, saga.saga_id)
        return saga

    async def seated(self, saga_id: str, grant: SeatGrant) -> BuyIn:
        saga = self.sagas[saga_id]
        if saga.state is not BuyInState.RESERVED:
            return saga
        saga = replace(
            saga,
            state=BuyInState.SEATED,
            seat=grant.seat,
            seat_token=grant.seat_token,
            seat_token_expires_at=grant.expires_at,
        )
        lounge = self.lounges._lounges[saga.lounge_id]
        seat = LoungeSeat(grant.seat, saga.player_id, saga.display_name, 0, saga.amount)
        others = [s for s in lounge.seats if s.seat != grant.seat]
        self.lounges._lounges[saga.lounge_id] = replace(
            lounge, seats=tuple(sorted([*others, seat], key=lambda s: s.seat))
        )
        self.sagas[saga_id] = saga
        return saga

    async def compensate(self, saga_id: str, refusal: str, at: datetime) -> BuyIn:
        saga = self.sagas[saga_id]
        if saga.state is not BuyInState.RESERVED:
            return saga
        await self.ledger.move(
            saga.player_id, Kind.CASH_OUT, saga.amount, refund_key(saga_id), at, saga.lounge_id
        )
        saga = replace(saga, state=BuyInState.COMPENSATED, refusal=refusal)
        self.sagas[saga_id] = saga
        return saga

    async def get(self, saga_id: str) -> BuyIn | None:
        return self.sagas.get(saga_id)

    async def unfinished(self, limit: int) -> list[BuyIn]:
        found = [s for s in self.sagas.values() if s.state is BuyInState.RESERVED]
        return sorted(found, key=lambda s: s.created_at)[:limit]
