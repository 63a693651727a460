"""In-memory fakes of the lobby's ports, for service tests (no PostgreSQL).

Each method does its whole work without awaiting in between, so on one event
loop it is atomic, as the adapter's transaction is. The contract suites run
these and the PostgreSQL adapters through the same tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from felt.idempotency import RequestKey, RequestReused
from services.lobby.ports import (
    Account,
    AlreadyRegistered,
    InsufficientChips,
    Kind,
    Movement,
    NameTaken,
    NewPlayer,
    NoAccount,
    Player,
    Rotation,
    Session,
    TokenHasher,
    Totals,
    check_top_up,
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

    async def fail(self, scopes: Sequence[str], at: datetime, window: timedelta) -> None:
        for scope in scopes:
            count, start = self._scopes.get(scope, (0, at))
            if start <= at - window:
                count, start = 0, at
            self._scopes[scope] = (count + 1, start)

    async def clear(self, scopes: Sequence[str]) -> None:
        for scope in scopes:
            self._scopes.pop(scope, None)


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
